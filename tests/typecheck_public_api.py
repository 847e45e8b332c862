"""A user's script touching every public name, checked by ``mypy --strict`` in .ci/run.

Not a test module (pytest does not collect it, and nothing here runs at import): it states,
in types, what the API promises a researcher: every name of ``assocmem.__all__`` is exported
with a precise signature, and results come back as the types the docs name. A name missing
from the API, an untyped signature or a changed return type makes the check fail.
(tests/test_public_api.py checks that this file imports every name of ``__all__``.)
"""

from pathlib import Path
from typing import Any, assert_type

import numpy as np
import pandas as pd
import torch
from matplotlib.figure import Figure

from assocmem import (
    EXPERIMENTS,
    OPTIMIZERS,
    SCHEMES,
    SGD,
    STUDY_COMMANDS,
    AbstractOptimizer,
    Adam,
    BottleneckConfig,
    Claim,
    ClosedFormConfig,
    ClosedFormResult,
    ConfigError,
    EditableMemory,
    EditingConfig,
    EditPrediction,
    EditSequence,
    EffectiveTokens,
    EmbeddingLaw,
    Experiment,
    ExperimentsRun,
    FitOptions,
    HeadsLayout,
    HeadsTraining,
    HeadsTrial,
    HierarchyConfig,
    HierarchyResult,
    JointFit,
    MinCountPrediction,
    NesterovSGD,
    NormalizedSGD,
    PowerLawFit,
    Problem,
    Reproduction,
    RunResult,
    Scheme,
    SchemeLaw,
    SignSGD,
    StudyCommand,
    StudyOption,
    StudyResult,
    SweepReport,
    SweepSpec,
    TrainConfig,
    TrainedState,
    __version__,
    aggregate,
    apply_edits,
    budget_head_dim,
    closed_form_memory,
    clustered_coordinates,
    compare_records,
    compute_optimal_dim,
    compute_optimal_samples,
    correct_probability,
    curves_frame,
    disjoint_error,
    draw_embeddings,
    edit_value_moments,
    experiment_names,
    figure1,
    figure3,
    figure4,
    figure5,
    figure6,
    figure7,
    figure8,
    finite_data_error,
    finite_data_table,
    fit_effective_tokens,
    fit_joint,
    fit_power_law,
    fit_records,
    fit_scaling,
    frame_from_records,
    full_word_law,
    heads_parameter_counts,
    joint_error_shape,
    key_columns,
    load_curves,
    load_results,
    load_spec,
    load_studies,
    majority_vote_correct,
    memory_matrices,
    multinomial_prefix_counts,
    noisy_data_floor,
    optimizer_names,
    parse_scheme,
    parse_spec,
    participation_ratio,
    predict_config,
    predict_edits,
    predict_errors,
    predict_hard,
    predict_hierarchy,
    predict_min_count,
    predict_superposition,
    rank_slopes,
    register_experiment,
    register_optimizer,
    register_scheme,
    register_study,
    register_study_command,
    reproduce,
    run_closed_form,
    run_editing,
    run_experiments,
    run_hierarchy,
    run_sequence,
    run_study,
    run_sweep,
    runs_frame,
    save_figure,
    scheme_law,
    scheme_names,
    score_moments,
    select_lr,
    similar_trials,
    superposition_errors,
    table1,
    tail_mass,
    theory_table,
    token_groups,
    train,
    train_bottleneck,
    train_heads,
    zipf,
)


def closed_form() -> pd.DataFrame:
    cfg = ClosedFormConfig(n_inputs=100, dims=(10, 100), schemes=("population",), trials=2)
    problem: Problem = cfg  # what is memorised: the fields every configuration shares
    assert_type(problem.n_inputs, int)
    result = assert_type(run_closed_form(cfg), ClosedFormResult)
    assert_type(parse_scheme("threshold:P=d/8"), Scheme)
    assert_type(SCHEMES["population"], type[Scheme])
    assert_type(scheme_names(), tuple[str, ...])
    return assert_type(result.to_frame(), pd.DataFrame)


def training() -> list[RunResult]:
    configs = [TrainConfig(dim=d, optimizer=Adam(betas=(0.0, 0.0))) for d in (10, 100)]
    configs += [TrainConfig(optimizer=o) for o in (SGD(), SignSGD(), NormalizedSGD())]
    configs.append(TrainConfig(optimizer=NesterovSGD(momentum=0.9)))
    entry: type[AbstractOptimizer] = OPTIMIZERS["sgd"]
    assert_type(optimizer_names(), tuple[str, ...])
    assert_type(register_optimizer(SGD), type[SGD])
    del entry
    results = train(configs)
    assert_type(runs_frame(results), pd.DataFrame)
    assert_type(curves_frame(results), pd.DataFrame)
    (small,) = train(configs[:1], return_state=True)
    assert small.state is not None
    assert_type(small.state, TrainedState)
    return results


def theory(alpha: float) -> None:
    probs = assert_type(zipf(1000, alpha), np.ndarray)
    assert_type(finite_data_error(probs, [10, 100]), np.ndarray)
    assert_type(finite_data_table(1000, alpha, [10.0, 100.0]), list[dict[str, float]])
    assert_type(compute_optimal_dim(1e4, alpha), np.ndarray)
    assert_type(compute_optimal_samples(100.0, alpha), np.ndarray)
    assert_type(joint_error_shape(100.0, 1e4, alpha), np.ndarray)
    laws: list[SchemeLaw] = [scheme_law("population", alpha), *table1(alpha), *theory_table(2.0)]
    del laws


def vocabulary() -> None:
    law = full_word_law("en")
    probs = law.probabilities
    generator = torch.Generator().manual_seed(0)
    counts = multinomial_prefix_counts(torch.from_numpy(probs), [10**4, 10**8], generator)
    assert_type(counts, torch.Tensor)
    assert_type(tail_mass(probs, [8, 2048]), np.ndarray)
    slopes = rank_slopes(probs)
    assert_type(slopes[0].slope, float)


def fits(dims: np.ndarray, errors: np.ndarray) -> None:
    assert_type(fit_power_law(dims, errors[0]), tuple[float, float])
    assert_type(fit_scaling(dims, errors), PowerLawFit)
    assert_type(fit_joint(dims, dims, errors), JointFit)
    assert_type(fit_records({"records": []}, FitOptions()), dict[str, Any])


def predictions(cfg: ClosedFormConfig, law: EmbeddingLaw) -> None:
    predicted = predict_config(cfg)
    assert_type(compare_records(predicted, []), list[dict[str, Any]])
    probs = zipf(100, 2.0)
    assert_type(predict_errors(probs, np.arange(100) % 5, probs[None, :], [10], 5, law), np.ndarray)
    assert_type(majority_vote_correct(np.arange(10), 0.3, 5), np.ndarray)
    assert_type(noisy_data_floor(probs, 1000, 0.3, 5), float)
    noisy = predict_min_count(probs, 1000, [16, 64], [1, 30], noise=0.3, n_outputs=5, law=law)
    assert_type(noisy, MinCountPrediction)
    assert_type(noisy.best(), tuple[np.ndarray, np.ndarray])
    generator = torch.Generator().manual_seed(0)
    assert_type(draw_embeddings("gaussian", 100, 10, generator), torch.Tensor)


def similar(cfg: ClosedFormConfig) -> EffectiveTokens:
    generator = torch.Generator().manual_seed(0)
    probs = torch.from_numpy(zipf(100, 2.0))
    groups = assert_type(token_groups(100, 10, "random", probs, generator), torch.Tensor)
    noise, centres = torch.randn(16, 100), torch.randn(16, 10)
    assert_type(clustered_coordinates(noise, centres, groups, 0.5), torch.Tensor)
    labels = torch.nn.functional.one_hot(groups % 5, 5).T.double()
    mean, cov = score_moments(probs, labels, groups, 0.5, 16)
    assert_type(correct_probability(mean, cov, groups % 5), torch.Tensor)
    metrics: list[dict[str, np.ndarray]] = similar_trials(cfg, [0, 1])
    del metrics
    sizes = np.array([10.0, 100.0])
    curve = assert_type(disjoint_error(100, 2.0, 5, sizes), np.ndarray)
    return fit_effective_tokens(curve[None, :], sizes, 2.0, 5)


def sweeps(db: Path) -> None:
    spec: SweepSpec = load_spec("figure4")
    spec = parse_spec({"name": "s", "kind": "closed_form", "base": {}})
    assert_type(run_sweep(spec, db), SweepReport)
    frame = assert_type(load_results(db, kind="closed_form"), pd.DataFrame)
    assert_type(load_curves(db), pd.DataFrame)
    assert_type(aggregate(frame), pd.DataFrame)
    assert_type(select_lr(frame), pd.DataFrame)


def figures(frame: pd.DataFrame, out: Path) -> list[Path]:
    drawn: list[Figure] = [figure1(frame), figure3(frame), figure4(frame), figure5(frame)]
    drawn += [figure6(), figure7(frame, frame, frame), figure8(frame, frame, frame, frame, frame)]
    drawn.append(memory_matrices({"q = p": np.zeros((10, 5))}, np.arange(10) % 5))
    assert_type(frame_from_records([]), pd.DataFrame)
    return [path for fig in drawn for path in save_figure(fig, out / "figure")]


def experiments(out: Path) -> None:
    first: Experiment = EXPERIMENTS["figure-1"]
    assert_type(register_experiment(first), Experiment)
    assert_type(experiment_names(), tuple[str, ...])
    done = assert_type(reproduce(out, only=["4"]), Reproduction)
    claims: list[Claim] = done.claims
    del claims


def studies(out: Path) -> None:
    option = StudyOption("dims", "int", "dimensions", many=True, low=1)
    command = StudyCommand("toy", "figure-4", "one line", "a paragraph", (option,))
    assert_type(register_study_command(command), StudyCommand)
    assert_type(register_study(command, EXPERIMENTS["figure-4"]), StudyCommand)
    assert_type(register_study(None, EXPERIMENTS["figure-4"], "toy_study:TOY"), None)
    assert_type(load_studies(), list[str])
    assert_type(STUDY_COMMANDS, dict[str, StudyCommand])
    result = assert_type(run_study("toy", settings={"dims": [8, 16]}, out=out), StudyResult)
    frames: dict[str, pd.DataFrame] = result.frames
    figure: Figure | None = result.figure
    figure4 = EXPERIMENTS["figure-4"]
    run = run_experiments([figure4], figure4.specs("quick", "cpu"), out, "quick")
    assert_type(run, ExperimentsRun)
    claims: list[Claim] = run.claims
    del frames, figure, claims


def superposition(probs: torch.Tensor, targets: torch.Tensor) -> None:
    trial = HeadsTrial(probs, targets, 5, ("population",), ("same", "random-gated"), 0, 0)
    layouts = [HeadsLayout(heads=4, head_dim=budget_head_dim(64, 4, "matrix", 100, 5))]
    errors, head = superposition_errors(trial, layouts)
    assert_type(errors, torch.Tensor)
    assert_type(heads_parameter_counts(4, 32, 100, 5).total, int)
    assert_type(predict_superposition(100, 5, 2.0, "population", "band", 4, 16), float)
    setting = HeadsTraining(100, 5, 2.0, 2, 8, 256, 16, "adam")
    result = train_heads(setting, [0], [1.0])[0]
    scores = torch.zeros(2, 100, 5)
    assert_type(participation_ratio(scores, targets), torch.Tensor)
    assert_type(result.error, float)
    del head


def hierarchy() -> None:
    cfg = HierarchyConfig(n_inputs=60, n_concepts=12, n_outputs=3, dims=(8, 16))
    result = assert_type(run_hierarchy(cfg, [0, 1]), HierarchyResult)
    hard: np.ndarray = result.metrics["hard"]  # (R, parities, schemes, dims)
    predicted = assert_type(predict_hierarchy(cfg, "threshold:P=d/2"), dict[str, np.ndarray])
    p, f1 = np.full(60, 1 / 60), np.arange(60) % 12
    theory = predict_hard(p, f1, 3, np.ones(60), np.ones(12), 16, 16)
    union: float = theory.union_bound
    runs = train_bottleneck(BottleneckConfig(n_inputs=60, n_concepts=3, n_outputs=3), [0])
    nmi: float = assert_type(runs, list[dict[str, float]])[0]["nmi"]
    del hard, predicted, union, nmi


def errors() -> str:
    try:
        ClosedFormConfig(n_inputs=0)
    except ConfigError as err:
        return f"{err} ({__version__})"
    return __version__


def schemes() -> None:
    @register_scheme
    class Double(Scheme):
        name = "double"
        uses_data = False

        def weights(self, freq: torch.Tensor, dims: object) -> torch.Tensor:
            return 2 * freq.unsqueeze(0)

        def law(self, alpha: float) -> SchemeLaw:
            return scheme_law("population", alpha)

    assert_type(Double, type[Double])


def editing() -> None:
    """Edit a closed-form memory by ROME and predict the damage (docs: beyond/editing.md)."""
    probs = zipf(50, 2.0)
    targets = np.arange(50) % 5
    rng = np.random.default_rng(0)
    E, U = rng.normal(size=(50, 16)) / 4.0, rng.normal(size=(5, 16)) / 4.0
    memory = assert_type(closed_form_memory(probs, targets, probs, E, U), EditableMemory)
    tokens = np.arange(10, 20)
    columns = assert_type(key_columns(E, probs, tokens, covariance=True, reg=0.01), np.ndarray)
    sequence = run_sequence(
        memory, tokens, (targets[tokens] + 1) % 5, columns, method="rome_cov",
        operation="edit", margin=memory.noise(), checkpoints=[5, 10], search=True,
    )  # fmt: skip
    assert_type(sequence, EditSequence)
    scores, lambdas = apply_edits(
        memory, tokens, targets[tokens], columns, method="rome", operation="erase", margin=0.0
    )
    assert_type(scores, np.ndarray)
    capacity: int | None = sequence.capacity
    config = EditingConfig(dim=16, max_edits=64)
    records = assert_type(run_editing(config, [0]), list[dict[str, Any]])
    prediction = assert_type(predict_edits(probs, targets, probs, 16, 5), EditPrediction)
    mean, square = edit_value_moments(np.array([0.0, 1.0]), 0.1, 0.2, 5)
    assert_type(mean, np.ndarray)
    damage: np.ndarray = prediction.damage
    (kept,) = train([TrainConfig(dim=8, n_inputs=20, n_samples=64)], keep_w=True)
    assert kept.state is not None and kept.state.W is not None
    del capacity, records, square, damage, lambdas
