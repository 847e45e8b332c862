r"""assocmem: scaling laws for associative memories.

A library (and the ``assocmem`` command) reproducing and extending Cabannes, Dohmatob and
Bietti, *Scaling Laws for Associative Memories* (ICLR 2024): closed-form memories
:math:`W_q = \sum_x q(x)\, u_{f^*(x)} e_x^\top` and trained ones, their exact population error,
the paper's theory, power-law fits, sweeps stored in SQLite, and the paper's figures.

Every name of :data:`__all__` is importable from here (``from assocmem import train``) and is
loaded on first use (PEP 562): ``import assocmem`` imports neither torch, pandas nor matplotlib.
The names come from one table, ``PUBLIC`` of ``assocmem/public.py``. See the docs:
getting-started and the API reference.
"""

import importlib
from typing import TYPE_CHECKING, Any

from assocmem.cpu_pin import pin
from assocmem.public import PUBLIC

# Before torch loads: MKL's and ATen's CPU code pinned to AVX2, the same bits on every x86-64
# host with AVX2 (assocmem/cpu_pin.py; ASSOCMEM_PIN_CPU=0 turns it off).
pin()

__version__ = "0.1.0"

# Generated from the table assocmem/public.py by static_source() (what mypy and the API
# reference read; tests/test_public_api.py fails when they differ).
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
    "ExperimentsRun",
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
    "Problem",
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
    "load_studies",
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
    "register_study",
    "register_study_command",
    "reproduce",
    "run_closed_form",
    "run_editing",
    "run_experiments",
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
    from assocmem.analysis.edit_theory import EditPrediction, edit_value_moments, predict_edits
    from assocmem.analysis.fit import PowerLawFit, fit_power_law, fit_scaling
    from assocmem.analysis.joint_fit import JointFit, fit_joint
    from assocmem.analysis.lr_selection import select_lr
    from assocmem.analysis.predict import compare_records, predict_config, predict_errors
    from assocmem.analysis.record_fits import FitOptions, fit_records
    from assocmem.analysis.score_integral import EmbeddingLaw
    from assocmem.analysis.stats import aggregate
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
    from assocmem.closed_form.config import ClosedFormConfig
    from assocmem.closed_form.kernel import run_closed_form
    from assocmem.closed_form.result import ClosedFormResult
    from assocmem.config.errors import ConfigError
    from assocmem.config.problem import Problem
    from assocmem.embeddings import clustered_coordinates, draw_embeddings
    from assocmem.experiments.commands import (
        STUDY_COMMANDS,
        StudyCommand,
        register_study,
        register_study_command,
    )
    from assocmem.experiments.commands import Option as StudyOption
    from assocmem.experiments.experiment import Experiment
    from assocmem.experiments.registry import EXPERIMENTS, register_experiment
    from assocmem.experiments.reproduce import Reproduction, reproduce
    from assocmem.experiments.runner import ExperimentsRun, run_experiments
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
    from assocmem.plugins import load_studies
    from assocmem.report import Claim
    from assocmem.schemes import REGISTRY as SCHEMES
    from assocmem.schemes import parse_scheme, register_scheme
    from assocmem.schemes.base import Scheme
    from assocmem.schemes.law import SchemeLaw
    from assocmem.studies.editing.edits import (
        EditableMemory,
        apply_edits,
        closed_form_memory,
        key_columns,
    )
    from assocmem.studies.editing.runs import EditingConfig, run_editing
    from assocmem.studies.editing.sequence import EditSequence, run_sequence
    from assocmem.studies.hierarchy.memory import HierarchyConfig
    from assocmem.studies.hierarchy.run import HierarchyResult, run_hierarchy
    from assocmem.studies.hierarchy.theory import predict_hard, predict_hierarchy
    from assocmem.studies.hierarchy.train import BottleneckConfig, train_bottleneck
    from assocmem.studies.noise_threshold.majority_vote import majority_vote_correct
    from assocmem.studies.noise_threshold.theory import (
        MinCountPrediction,
        noisy_data_floor,
        predict_min_count,
    )
    from assocmem.studies.similar.effective_tokens import (
        EffectiveTokens,
        disjoint_error,
        fit_effective_tokens,
    )
    from assocmem.studies.similar.memory import similar_trials
    from assocmem.studies.similar.theory import correct_probability, score_moments
    from assocmem.studies.superposition.memory import HeadsLayout, HeadsTrial, superposition_errors
    from assocmem.studies.superposition.theory import (
        budget_head_dim,
        heads_parameter_counts,
        predict_superposition,
    )
    from assocmem.studies.superposition.train import HeadsTraining, participation_ratio, train_heads
    from assocmem.studies.vocabulary.theory import full_word_law, rank_slopes, tail_mass
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


def __getattr__(name: str) -> Any:
    """Import a public name on first use and keep it in the module (PEP 562)."""
    if name not in PUBLIC:
        raise AttributeError(f"module 'assocmem' has no attribute {name!r}")
    module, attribute = PUBLIC[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, the lazy public ones included (so that completion lists them)."""
    return sorted({*globals(), *__all__})
