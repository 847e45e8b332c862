"""The public names of :mod:`assocmem`: one table, ``name → (module, attribute)``.

This table is the single source of the package's public names: ``assocmem.__getattr__`` imports
each entry on first use (PEP 562); ``assocmem.__all__`` (its keys, sorted) and the
``TYPE_CHECKING`` imports are written out in ``assocmem/__init__.py`` because type checkers
and the API reference's generator (griffe) read them statically, not by running code:
``static_source()`` generates that text from the table and ``tests/test_public_api.py`` fails
when the file differs from it (printing the text to paste). The API reference (docs/api/) is
checked to render every name. Adding a public name is one line here, then pasting
``static_source()``. This module imports nothing, so ``import assocmem`` stays light.
"""

# Public name -> (defining module, attribute there), by topic.
PUBLIC: dict[str, tuple[str, str]] = {
    # Configuration and errors
    "ConfigError": ("assocmem.config.errors", "ConfigError"),
    "Problem": ("assocmem.config.problem", "Problem"),
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
    "full_word_law": ("assocmem.studies.vocabulary.theory", "full_word_law"),
    "rank_slopes": ("assocmem.studies.vocabulary.theory", "rank_slopes"),
    "tail_mass": ("assocmem.studies.vocabulary.theory", "tail_mass"),
    # Fits
    "fit_power_law": ("assocmem.analysis.fit", "fit_power_law"),
    "fit_scaling": ("assocmem.analysis.fit", "fit_scaling"),
    "fit_joint": ("assocmem.analysis.joint_fit", "fit_joint"),
    "PowerLawFit": ("assocmem.analysis.fit", "PowerLawFit"),
    "JointFit": ("assocmem.analysis.joint_fit", "JointFit"),
    "fit_records": ("assocmem.analysis.record_fits", "fit_records"),
    "FitOptions": ("assocmem.analysis.record_fits", "FitOptions"),
    # Predictions
    "predict_errors": ("assocmem.analysis.predict", "predict_errors"),
    "predict_config": ("assocmem.analysis.predict", "predict_config"),
    "compare_records": ("assocmem.analysis.predict", "compare_records"),
    "EmbeddingLaw": ("assocmem.analysis.score_integral", "EmbeddingLaw"),
    # Memories in parallel (heads; docs: beyond/superposition.md)
    "HeadsLayout": ("assocmem.studies.superposition.memory", "HeadsLayout"),
    "HeadsTrial": ("assocmem.studies.superposition.memory", "HeadsTrial"),
    "superposition_errors": ("assocmem.studies.superposition.memory", "superposition_errors"),
    "budget_head_dim": ("assocmem.studies.superposition.theory", "budget_head_dim"),
    "heads_parameter_counts": ("assocmem.studies.superposition.theory", "heads_parameter_counts"),
    "predict_superposition": ("assocmem.studies.superposition.theory", "predict_superposition"),
    "HeadsTraining": ("assocmem.studies.superposition.train", "HeadsTraining"),
    "train_heads": ("assocmem.studies.superposition.train", "train_heads"),
    "participation_ratio": ("assocmem.studies.superposition.train", "participation_ratio"),
    # Memories in series (beyond the paper: assocmem hierarchy)
    "HierarchyConfig": ("assocmem.studies.hierarchy.memory", "HierarchyConfig"),
    "HierarchyResult": ("assocmem.studies.hierarchy.run", "HierarchyResult"),
    "run_hierarchy": ("assocmem.studies.hierarchy.run", "run_hierarchy"),
    "predict_hard": ("assocmem.studies.hierarchy.theory", "predict_hard"),
    "predict_hierarchy": ("assocmem.studies.hierarchy.theory", "predict_hierarchy"),
    "BottleneckConfig": ("assocmem.studies.hierarchy.train", "BottleneckConfig"),
    "train_bottleneck": ("assocmem.studies.hierarchy.train", "train_bottleneck"),
    # Noisy labels and the count threshold k (docs: beyond/noise-threshold.md)
    "majority_vote_correct": (
        "assocmem.studies.noise_threshold.majority_vote",
        "majority_vote_correct",
    ),
    "noisy_data_floor": ("assocmem.studies.noise_threshold.theory", "noisy_data_floor"),
    "predict_min_count": ("assocmem.studies.noise_threshold.theory", "predict_min_count"),
    "MinCountPrediction": ("assocmem.studies.noise_threshold.theory", "MinCountPrediction"),
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
    "EditableMemory": ("assocmem.studies.editing.edits", "EditableMemory"),
    "EditSequence": ("assocmem.studies.editing.sequence", "EditSequence"),
    "apply_edits": ("assocmem.studies.editing.edits", "apply_edits"),
    "closed_form_memory": ("assocmem.studies.editing.edits", "closed_form_memory"),
    "key_columns": ("assocmem.studies.editing.edits", "key_columns"),
    "run_sequence": ("assocmem.studies.editing.sequence", "run_sequence"),
    "EditingConfig": ("assocmem.studies.editing.runs", "EditingConfig"),
    "run_editing": ("assocmem.studies.editing.runs", "run_editing"),
    "EditPrediction": ("assocmem.analysis.edit_theory", "EditPrediction"),
    "edit_value_moments": ("assocmem.analysis.edit_theory", "edit_value_moments"),
    "predict_edits": ("assocmem.analysis.edit_theory", "predict_edits"),
    # Studies beyond the paper, one at a time (``assocmem STUDY``)
    "run_study": ("assocmem.experiments.study", "run_study"),
    "run_experiments": ("assocmem.experiments.runner", "run_experiments"),
    "ExperimentsRun": ("assocmem.experiments.runner", "ExperimentsRun"),
    "StudyResult": ("assocmem.experiments.study", "StudyResult"),
    "STUDY_COMMANDS": ("assocmem.experiments.commands", "STUDY_COMMANDS"),
    "StudyCommand": ("assocmem.experiments.commands", "StudyCommand"),
    "StudyOption": ("assocmem.experiments.commands", "Option"),
    "register_study_command": ("assocmem.experiments.commands", "register_study_command"),
    "register_study": ("assocmem.experiments.commands", "register_study"),
    "load_studies": ("assocmem.plugins", "load_studies"),
    # Similar tokens: clustered embeddings, their theory, the effective number of tokens
    "clustered_coordinates": ("assocmem.embeddings", "clustered_coordinates"),
    "token_groups": ("assocmem.laws.groups", "token_groups"),
    "score_moments": ("assocmem.studies.similar.theory", "score_moments"),
    "correct_probability": ("assocmem.studies.similar.theory", "correct_probability"),
    "similar_trials": ("assocmem.studies.similar.memory", "similar_trials"),
    "disjoint_error": ("assocmem.studies.similar.effective_tokens", "disjoint_error"),
    "fit_effective_tokens": ("assocmem.studies.similar.effective_tokens", "fit_effective_tokens"),
    "EffectiveTokens": ("assocmem.studies.similar.effective_tokens", "EffectiveTokens"),
}
OWN = ("__version__",)  # public names defined in assocmem/__init__.py itself (not lazy)

__all__ = ["OWN", "PUBLIC", "static_source"]


def static_source() -> str:
    """The text of ``assocmem/__init__.py`` that static tools read, generated from ``PUBLIC``.

    Returns
    -------
    str
        ``__all__ = [...]`` (the table's names and ``OWN``, sorted), then ``if
        TYPE_CHECKING:`` with ``from MODULE import ATTRIBUTE`` per name (``as NAME`` where they
        differ: ``SCHEMES`` is ``assocmem.schemes.REGISTRY``): what mypy and griffe (the API
        reference) see instead of ``__getattr__``. The file holds
        this text up to ruff's import sorting and formatting (``tests/test_public_api.py``
        compares the two as syntax trees).
    """
    names = [f'    "{name}",' for name in sorted([*PUBLIC, *OWN])]
    imports = [
        f"    from {module} import {attribute}" + (f" as {name}" if name != attribute else "")
        for name, (module, attribute) in sorted(PUBLIC.items(), key=lambda kv: (kv[1], kv[0]))
    ]
    lines = ["__all__ = [", *names, "]", "", "if TYPE_CHECKING:", *imports]
    return "\n".join(lines) + "\n"
