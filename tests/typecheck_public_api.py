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
    Claim,
    ClosedFormConfig,
    ClosedFormResult,
    ConfigError,
    EffectiveTokens,
    EmbeddingLaw,
    Experiment,
    FitOptions,
    JointFit,
    NesterovSGD,
    NormalizedSGD,
    PowerLawFit,
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
    clustered_coordinates,
    compare_records,
    compute_optimal_dim,
    compute_optimal_samples,
    correct_probability,
    curves_frame,
    disjoint_error,
    draw_embeddings,
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
    joint_error_shape,
    load_curves,
    load_results,
    load_spec,
    memory_matrices,
    optimizer_names,
    parse_scheme,
    parse_spec,
    predict_config,
    predict_errors,
    register_experiment,
    register_optimizer,
    register_scheme,
    register_study_command,
    reproduce,
    run_closed_form,
    run_study,
    run_sweep,
    runs_frame,
    save_figure,
    scheme_law,
    scheme_names,
    score_moments,
    select_lr,
    similar_trials,
    table1,
    theory_table,
    token_groups,
    train,
    zipf,
)


def closed_form() -> pd.DataFrame:
    cfg = ClosedFormConfig(n_inputs=100, dims=(10, 100), schemes=("population",), trials=2)
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
    assert_type(STUDY_COMMANDS, dict[str, StudyCommand])
    result = assert_type(run_study("toy", settings={"dims": [8, 16]}, out=out), StudyResult)
    frames: dict[str, pd.DataFrame] = result.frames
    figure: Figure | None = result.figure
    del frames, figure


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
