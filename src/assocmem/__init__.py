r"""assocmem: scaling laws for associative memories.

A library (and the ``assocmem`` command) reproducing and extending Cabannes, Dohmatob and
Bietti, *Scaling Laws for Associative Memories* (ICLR 2024): closed-form memories
:math:`W_q = \sum_x q(x)\, u_{f^*(x)} e_x^\top` and trained ones, their exact population error,
the paper's theory, power-law fits, sweeps stored in SQLite, and the paper's figures.

Every name of :data:`__all__` is importable from here (``from assocmem import train``) and is
loaded on first use (PEP 562): ``import assocmem`` imports neither torch, pandas nor matplotlib,
and the registry names (:func:`scheme_names`, :func:`optimizer_names`,
:func:`experiment_names`) need none of them. See the docs: getting-started and the API reference.
"""

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Public name -> (defining module, attribute there), by topic. __all__ lists exactly these.
_LAZY: dict[str, tuple[str, str]] = {
    # Configuration and errors
    "ConfigError": ("assocmem.config.errors", "ConfigError"),
    "ClosedFormConfig": ("assocmem.closed_form.config", "ClosedFormConfig"),
    "TrainConfig": ("assocmem.training.config", "TrainConfig"),
    # Closed-form memories
    "run_closed_form": ("assocmem.closed_form.kernel", "run_closed_form"),
    "ClosedFormResult": ("assocmem.closed_form.result", "ClosedFormResult"),
    # Trained memories
    "train": ("assocmem.training.engine", "train"),
    "RunResult": ("assocmem.training.records", "RunResult"),
    "TrainedState": ("assocmem.training.state", "TrainedState"),
    "runs_frame": ("assocmem.training.frames", "runs_frame"),
    "curves_frame": ("assocmem.training.frames", "curves_frame"),
    # Memory schemes
    "SCHEMES": ("assocmem.schemes", "REGISTRY"),
    "Scheme": ("assocmem.schemes.base", "Scheme"),
    "SchemeLaw": ("assocmem.schemes.law", "SchemeLaw"),
    "parse_scheme": ("assocmem.schemes", "parse_scheme"),
    "register_scheme": ("assocmem.schemes", "register_scheme"),
    "scheme_names": ("assocmem.names", "scheme_names"),
    # Optimisers
    "OPTIMIZERS": ("assocmem.training.optimizers.registry", "OPTIMIZERS"),
    "AbstractOptimizer": ("assocmem.training.optimizers.base", "AbstractOptimizer"),
    "SGD": ("assocmem.training.optimizers.sgd", "SGD"),
    "Adam": ("assocmem.training.optimizers.adam", "Adam"),
    "SignSGD": ("assocmem.training.optimizers.sign_sgd", "SignSGD"),
    "NormalizedSGD": ("assocmem.training.optimizers.normalized_sgd", "NormalizedSGD"),
    "NesterovSGD": ("assocmem.training.optimizers.nesterov", "NesterovSGD"),
    "register_optimizer": ("assocmem.training.optimizers.registry", "register_optimizer"),
    "optimizer_names": ("assocmem.names", "optimizer_names"),
    # Embeddings
    "draw_embeddings": ("assocmem.embeddings", "draw_embeddings"),
    # Theory
    "finite_data_error": ("assocmem.analysis.theory", "finite_data_error"),
    "finite_data_table": ("assocmem.analysis.theory", "finite_data_table"),
    "compute_optimal_dim": ("assocmem.analysis.theory", "compute_optimal_dim"),
    "compute_optimal_samples": ("assocmem.analysis.theory", "compute_optimal_samples"),
    "joint_error_shape": ("assocmem.analysis.theory", "joint_error_shape"),
    "scheme_law": ("assocmem.analysis.theory", "scheme_law"),
    "table1": ("assocmem.analysis.theory", "table1"),
    "theory_table": ("assocmem.analysis.theory", "theory_table"),
    "zipf": ("assocmem.analysis.theory", "zipf"),
    # Vocabulary scale: multinomial counts, the full word law and its bend
    "multinomial_prefix_counts": ("assocmem.laws.counts", "multinomial_prefix_counts"),
    "full_word_law": ("assocmem.analysis.vocabulary", "full_word_law"),
    "rank_slopes": ("assocmem.analysis.vocabulary", "rank_slopes"),
    "tail_mass": ("assocmem.analysis.vocabulary", "tail_mass"),
    # Fits
    "fit_power_law": ("assocmem.analysis.fit", "fit_power_law"),
    "fit_scaling": ("assocmem.analysis.fit", "fit_scaling"),
    "fit_joint": ("assocmem.analysis.fit", "fit_joint"),
    "PowerLawFit": ("assocmem.analysis.fit", "PowerLawFit"),
    "JointFit": ("assocmem.analysis.fit", "JointFit"),
    "fit_records": ("assocmem.analysis.record_fits", "fit_records"),
    "FitOptions": ("assocmem.analysis.record_fits", "FitOptions"),
    # Predictions
    "predict_errors": ("assocmem.analysis.predict", "predict_errors"),
    "predict_config": ("assocmem.analysis.predict", "predict_config"),
    "compare_records": ("assocmem.analysis.predict", "compare_records"),
    "EmbeddingLaw": ("assocmem.analysis.predict", "EmbeddingLaw"),
    # Memories in parallel (heads; docs: beyond/superposition.md)
    "HeadsLayout": ("assocmem.closed_form.superposition", "HeadsLayout"),
    "HeadsTrial": ("assocmem.closed_form.superposition", "HeadsTrial"),
    "superposition_errors": ("assocmem.closed_form.superposition", "superposition_errors"),
    "budget_head_dim": ("assocmem.analysis.superposition", "budget_head_dim"),
    "heads_parameter_counts": ("assocmem.analysis.superposition", "heads_parameter_counts"),
    "predict_superposition": ("assocmem.analysis.superposition", "predict_superposition"),
    "HeadsTraining": ("assocmem.training.superposition", "HeadsTraining"),
    "train_heads": ("assocmem.training.superposition", "train_heads"),
    "participation_ratio": ("assocmem.training.superposition", "participation_ratio"),
    # Memories in series (beyond the paper: assocmem hierarchy)
    "HierarchyConfig": ("assocmem.analysis.hierarchy", "HierarchyConfig"),
    "HierarchyResult": ("assocmem.analysis.hierarchy_run", "HierarchyResult"),
    "run_hierarchy": ("assocmem.analysis.hierarchy_run", "run_hierarchy"),
    "predict_hard": ("assocmem.analysis.hierarchy_theory", "predict_hard"),
    "predict_hierarchy": ("assocmem.analysis.hierarchy_theory", "predict_hierarchy"),
    "BottleneckConfig": ("assocmem.analysis.hierarchy_train", "BottleneckConfig"),
    "train_bottleneck": ("assocmem.analysis.hierarchy_train", "train_bottleneck"),
    # Noisy labels and the count threshold k (docs: beyond/noise-threshold.md)
    "majority_vote_correct": ("assocmem.analysis.majority_vote", "majority_vote_correct"),
    "noisy_data_floor": ("assocmem.analysis.noise_threshold", "noisy_data_floor"),
    "predict_min_count": ("assocmem.analysis.noise_threshold", "predict_min_count"),
    "MinCountPrediction": ("assocmem.analysis.noise_threshold", "MinCountPrediction"),
    # Result tables
    "aggregate": ("assocmem.analysis.stats", "aggregate"),
    "select_lr": ("assocmem.analysis.lr_selection", "select_lr"),
    # Sweeps
    "SweepSpec": ("assocmem.sweep.spec", "SweepSpec"),
    "load_spec": ("assocmem.sweep.spec", "load_spec"),
    "parse_spec": ("assocmem.sweep.spec", "parse_spec"),
    "run_sweep": ("assocmem.sweep.execute", "run_sweep"),
    "SweepReport": ("assocmem.sweep.execute", "SweepReport"),
    "load_results": ("assocmem.sweep.results", "load_results"),
    "load_curves": ("assocmem.sweep.results", "load_curves"),
    # Figures
    "figure1": ("assocmem.figures.closed_form", "figure1"),
    "figure3": ("assocmem.figures.closed_form", "figure3"),
    "figure4": ("assocmem.figures.closed_form", "figure4"),
    "figure5": ("assocmem.figures.training", "figure5"),
    "figure6": ("assocmem.figures.update_map", "figure6"),
    "figure7": ("assocmem.figures.training", "figure7"),
    "figure8": ("assocmem.figures.training", "figure8"),
    "memory_matrices": ("assocmem.figures.closed_form", "memory_matrices"),
    "frame_from_records": ("assocmem.figures.closed_form", "frame_from_records"),
    "save_figure": ("assocmem.figures.closed_form", "save"),
    # Experiments and the reproduction
    "EXPERIMENTS": ("assocmem.experiments.registry", "EXPERIMENTS"),
    "Experiment": ("assocmem.experiments.experiment", "Experiment"),
    "Claim": ("assocmem.report", "Claim"),
    "register_experiment": ("assocmem.experiments.registry", "register_experiment"),
    "experiment_names": ("assocmem.names", "experiment_names"),
    "reproduce": ("assocmem.experiments.reproduce", "reproduce"),
    "Reproduction": ("assocmem.experiments.reproduce", "Reproduction"),
    # Editing and erasing facts (beyond the paper: docs/beyond/editing.md)
    "EditableMemory": ("assocmem.analysis.editing", "EditableMemory"),
    "EditSequence": ("assocmem.analysis.editing_sequence", "EditSequence"),
    "apply_edits": ("assocmem.analysis.editing", "apply_edits"),
    "closed_form_memory": ("assocmem.analysis.editing", "closed_form_memory"),
    "key_columns": ("assocmem.analysis.editing", "key_columns"),
    "run_sequence": ("assocmem.analysis.editing_sequence", "run_sequence"),
    "EditingConfig": ("assocmem.analysis.editing_study", "EditingConfig"),
    "run_editing": ("assocmem.analysis.editing_study", "run_editing"),
    "EditPrediction": ("assocmem.analysis.editing_theory", "EditPrediction"),
    "edit_value_moments": ("assocmem.analysis.editing_theory", "edit_value_moments"),
    "predict_edits": ("assocmem.analysis.editing_theory", "predict_edits"),
    # Studies beyond the paper, one at a time (``assocmem STUDY``)
    "run_study": ("assocmem.experiments.study", "run_study"),
    "StudyResult": ("assocmem.experiments.study", "StudyResult"),
    "STUDY_COMMANDS": ("assocmem.experiments.commands", "STUDY_COMMANDS"),
    "StudyCommand": ("assocmem.experiments.commands", "StudyCommand"),
    "StudyOption": ("assocmem.experiments.commands", "Option"),
    "register_study_command": ("assocmem.experiments.commands", "register_study_command"),
    # Similar tokens: clustered embeddings, their theory, the effective number of tokens
    "clustered_coordinates": ("assocmem.embeddings", "clustered_coordinates"),
    "token_groups": ("assocmem.laws.groups", "token_groups"),
    "score_moments": ("assocmem.analysis.similar", "score_moments"),
    "correct_probability": ("assocmem.analysis.similar", "correct_probability"),
    "similar_trials": ("assocmem.analysis.similar", "similar_trials"),
    "disjoint_error": ("assocmem.analysis.effective_tokens", "disjoint_error"),
    "fit_effective_tokens": ("assocmem.analysis.effective_tokens", "fit_effective_tokens"),
    "EffectiveTokens": ("assocmem.analysis.effective_tokens", "EffectiveTokens"),
}
__all__ = [
    "AbstractOptimizer",
    "Adam",
    "BottleneckConfig",
    "Claim",
    "ClosedFormConfig",
    "ClosedFormResult",
    "ConfigError",
    "EXPERIMENTS",
    "EditPrediction",
    "EditSequence",
    "EditableMemory",
    "EditingConfig",
    "EffectiveTokens",
    "EmbeddingLaw",
    "Experiment",
    "FitOptions",
    "HeadsLayout",
    "HeadsTraining",
    "HeadsTrial",
    "HierarchyConfig",
    "HierarchyResult",
    "JointFit",
    "MinCountPrediction",
    "NesterovSGD",
    "NormalizedSGD",
    "OPTIMIZERS",
    "PowerLawFit",
    "Reproduction",
    "RunResult",
    "SCHEMES",
    "SGD",
    "STUDY_COMMANDS",
    "Scheme",
    "SchemeLaw",
    "SignSGD",
    "StudyCommand",
    "StudyOption",
    "StudyResult",
    "SweepReport",
    "SweepSpec",
    "TrainConfig",
    "TrainedState",
    "__version__",
    "aggregate",
    "apply_edits",
    "budget_head_dim",
    "closed_form_memory",
    "clustered_coordinates",
    "compare_records",
    "compute_optimal_dim",
    "compute_optimal_samples",
    "correct_probability",
    "curves_frame",
    "disjoint_error",
    "draw_embeddings",
    "edit_value_moments",
    "experiment_names",
    "figure1",
    "figure3",
    "figure4",
    "figure5",
    "figure6",
    "figure7",
    "figure8",
    "finite_data_error",
    "finite_data_table",
    "fit_effective_tokens",
    "fit_joint",
    "fit_power_law",
    "fit_records",
    "fit_scaling",
    "frame_from_records",
    "full_word_law",
    "heads_parameter_counts",
    "joint_error_shape",
    "key_columns",
    "load_curves",
    "load_results",
    "load_spec",
    "majority_vote_correct",
    "memory_matrices",
    "multinomial_prefix_counts",
    "noisy_data_floor",
    "optimizer_names",
    "parse_scheme",
    "parse_spec",
    "participation_ratio",
    "predict_config",
    "predict_edits",
    "predict_errors",
    "predict_hard",
    "predict_hierarchy",
    "predict_min_count",
    "predict_superposition",
    "rank_slopes",
    "register_experiment",
    "register_optimizer",
    "register_scheme",
    "register_study_command",
    "reproduce",
    "run_closed_form",
    "run_editing",
    "run_hierarchy",
    "run_sequence",
    "run_study",
    "run_sweep",
    "runs_frame",
    "save_figure",
    "scheme_law",
    "scheme_names",
    "score_moments",
    "select_lr",
    "similar_trials",
    "superposition_errors",
    "table1",
    "tail_mass",
    "theory_table",
    "token_groups",
    "train",
    "train_bottleneck",
    "train_heads",
    "zipf",
]

if TYPE_CHECKING:
    from assocmem.analysis.editing import (
        EditableMemory,
        apply_edits,
        closed_form_memory,
        key_columns,
    )
    from assocmem.analysis.editing_sequence import EditSequence, run_sequence
    from assocmem.analysis.editing_study import EditingConfig, run_editing
    from assocmem.analysis.editing_theory import EditPrediction, edit_value_moments, predict_edits
    from assocmem.analysis.effective_tokens import (
        EffectiveTokens,
        disjoint_error,
        fit_effective_tokens,
    )
    from assocmem.analysis.fit import JointFit, PowerLawFit, fit_joint, fit_power_law, fit_scaling
    from assocmem.analysis.hierarchy import HierarchyConfig
    from assocmem.analysis.hierarchy_run import HierarchyResult, run_hierarchy
    from assocmem.analysis.hierarchy_theory import predict_hard, predict_hierarchy
    from assocmem.analysis.hierarchy_train import BottleneckConfig, train_bottleneck
    from assocmem.analysis.lr_selection import select_lr
    from assocmem.analysis.majority_vote import majority_vote_correct
    from assocmem.analysis.noise_threshold import (
        MinCountPrediction,
        noisy_data_floor,
        predict_min_count,
    )
    from assocmem.analysis.predict import (
        EmbeddingLaw,
        compare_records,
        predict_config,
        predict_errors,
    )
    from assocmem.analysis.record_fits import FitOptions, fit_records
    from assocmem.analysis.similar import correct_probability, score_moments, similar_trials
    from assocmem.analysis.stats import aggregate
    from assocmem.analysis.superposition import (
        budget_head_dim,
        heads_parameter_counts,
        predict_superposition,
    )
    from assocmem.analysis.theory import (
        compute_optimal_dim,
        compute_optimal_samples,
        finite_data_error,
        finite_data_table,
        joint_error_shape,
        scheme_law,
        table1,
        theory_table,
        zipf,
    )
    from assocmem.analysis.vocabulary import full_word_law, rank_slopes, tail_mass
    from assocmem.closed_form.config import ClosedFormConfig
    from assocmem.closed_form.kernel import run_closed_form
    from assocmem.closed_form.result import ClosedFormResult
    from assocmem.closed_form.superposition import HeadsLayout, HeadsTrial, superposition_errors
    from assocmem.config.errors import ConfigError
    from assocmem.embeddings import clustered_coordinates, draw_embeddings
    from assocmem.experiments.commands import STUDY_COMMANDS, StudyCommand, register_study_command
    from assocmem.experiments.commands import Option as StudyOption
    from assocmem.experiments.experiment import Experiment
    from assocmem.experiments.registry import EXPERIMENTS, register_experiment
    from assocmem.experiments.reproduce import Reproduction, reproduce
    from assocmem.experiments.study import StudyResult, run_study
    from assocmem.figures.closed_form import (
        figure1,
        figure3,
        figure4,
        frame_from_records,
        memory_matrices,
    )
    from assocmem.figures.closed_form import save as save_figure
    from assocmem.figures.training import figure5, figure7, figure8
    from assocmem.figures.update_map import figure6
    from assocmem.laws.counts import multinomial_prefix_counts
    from assocmem.laws.groups import token_groups
    from assocmem.names import experiment_names, optimizer_names, scheme_names
    from assocmem.report import Claim
    from assocmem.schemes import REGISTRY as SCHEMES
    from assocmem.schemes import parse_scheme, register_scheme
    from assocmem.schemes.base import Scheme
    from assocmem.schemes.law import SchemeLaw
    from assocmem.sweep.execute import SweepReport, run_sweep
    from assocmem.sweep.results import load_curves, load_results
    from assocmem.sweep.spec import SweepSpec, load_spec, parse_spec
    from assocmem.training.config import TrainConfig
    from assocmem.training.engine import train
    from assocmem.training.frames import curves_frame, runs_frame
    from assocmem.training.optimizers.adam import Adam
    from assocmem.training.optimizers.base import AbstractOptimizer
    from assocmem.training.optimizers.nesterov import NesterovSGD
    from assocmem.training.optimizers.normalized_sgd import NormalizedSGD
    from assocmem.training.optimizers.registry import OPTIMIZERS, register_optimizer
    from assocmem.training.optimizers.sgd import SGD
    from assocmem.training.optimizers.sign_sgd import SignSGD
    from assocmem.training.records import RunResult
    from assocmem.training.state import TrainedState
    from assocmem.training.superposition import HeadsTraining, participation_ratio, train_heads


def __getattr__(name: str) -> Any:
    """Import a public name on first use and keep it in the module (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module 'assocmem' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, the lazy public ones included (so that completion lists them)."""
    return sorted({*globals(), *__all__})
