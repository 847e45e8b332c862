r"""The batched training engine: many runs in one tensor program (docs: kernels.md).

Runs whose configs agree on everything but ``seed`` and ``lr`` form a group (on the batched
path, also ``dim``: runs zero-padded to the group's largest d, :mod:`~assocmem.training.padding`);
a group is trained with a leading run axis R on every tensor and a per-run learning-rate tensor.
Each run draws its own embeddings, samples and initialisation from named streams keyed by its
identity, so its numbers never depend on its batch companions.

A step uses the batch only through the counts ``c(x)`` of each token in it: the mean
cross-entropy over the batch is :math:`\sum_x c(x)/B \cdot \operatorname{CE}(x)`; full-batch
training uses ``p(x)`` in place of :math:`c(x)/B`. The kernels that hold a group's state and take
its steps are in :mod:`assocmem.training.kernels`; this module draws the runs' inputs, chooses a
kernel, runs the steps in spans between record points and records the results. Which runs form a
group is :func:`assocmem.training.planning.group_runs`. With ``return_state=True`` each result also
carries the run's trained tensors (:class:`~assocmem.training.state.TrainedState`).
"""

import math
from collections.abc import Sequence

import torch

from assocmem.embeddings import draw_embeddings
from assocmem.laws.tokens import mod_targets, sample_tokens
from assocmem.ops.population import population_metrics
from assocmem.progress import Bar, progress_bar
from assocmem.rng import generator
from assocmem.runtime import device_numerics, flush_denormals, intra_op_threads
from assocmem.training.config import TrainConfig
from assocmem.training.draw_cache import DRAWS
from assocmem.training.graphs import GraphedSteps, graphs_enabled
from assocmem.training.kernels import DTYPE, AbstractKernel, RunInputs, select_kernel
from assocmem.training.labels import batch_label_law, draw_labels
from assocmem.training.optimizers import schedule_factor
from assocmem.training.padding import pad, padding_key
from assocmem.training.planning import group_runs
from assocmem.training.records import Recorder, RunResult, results, shorter_results
from assocmem.training.shadow import ShadowW, final_w
from assocmem.training.state import TrainedState
from assocmem.training.task import Task
from assocmem.training.trajectories import share_trajectories

SPAN_STEPS = 256  # steps per call of a kernel that ``spans`` (its inputs: R × S × N weights)


def draw_run(cfg: TrainConfig) -> dict[str, torch.Tensor | None]:
    """One run's embeddings, initial W and samples, from its own named streams.

    Streams are keyed by the seed and the shapes only, so runs that differ in lr, optimiser or
    batch size share their embeddings and samples (common random numbers), and B only changes
    how the same sample sequence is cut into batches. The draws come through
    :data:`~assocmem.training.draw_cache.DRAWS` (the same bits; the caller must not modify them
    in place).
    """
    n, m, d = cfg.n_inputs, cfg.n_outputs, cfg.dim
    dev = cfg.device
    at = str(torch.device(dev))

    def embeddings(kind: str, stream: str, rows: int) -> torch.Tensor:
        gen = generator(cfg.seed, stream, rows, d, device=dev)
        return draw_embeddings(kind, rows, d, gen, device=dev, dtype=DTYPE)

    E = DRAWS.get(
        ("E", cfg.embedding, cfg.seed, n, d, at),
        lambda: embeddings(cfg.embedding, "embeddings", n),  # stream names: the bits,
    )
    U = DRAWS.get(
        ("U", cfg.output_embedding, cfg.seed, m, d, at),
        lambda: embeddings(cfg.output_embedding, "output_embeddings", m),
    )
    W: torch.Tensor | None = None
    if cfg.model in ("matrix", "learned"):
        if cfg.init == "zero":
            W = torch.zeros(d, d, device=dev, dtype=DTYPE)
        else:
            W = DRAWS.get(("W", cfg.seed, d, at), lambda: initial_w(cfg.seed, d, dev))
    tokens = labels = None
    if not cfg.full_batch:
        law_id = repr(float(cfg.alpha)) if cfg.words is None else f"words:{cfg.words}"

        def samples(count: int) -> torch.Tensor:
            data = generator(cfg.seed, "data", n, law_id)
            return sample_tokens(cfg.probabilities(), count, data).to(dev)

        key = ("tokens", cfg.seed, n, law_id, at)
        tokens = DRAWS.prefix(key, cfg.steps * cfg.batch_size, samples)
        labels = draw_labels(cfg, mod_targets(n, m).to(dev)[tokens])
    return {"E": E, "U": U, "W": W, "tokens": tokens, "labels": labels}


def initial_w(seed: int, d: int, device: torch.device | str) -> torch.Tensor:
    """A run's W₀ with N(0, 1/d) entries, (d, d), from its "init" stream."""
    init = generator(seed, "init", d, device=device)
    return torch.randn(d, d, generator=init, device=device, dtype=DTYPE) / math.sqrt(d)


def stack_runs(
    configs: Sequence[TrainConfig], *, w_product: str = "", keep_w: bool = False
) -> RunInputs:
    r"""Every run's draws stacked. ``w_product`` "WU" or "EW": keep :math:`W^\top U^\top` (R, d, M)
    or :math:`E W^\top` (R, N, d) instead of W (R, d, d), formed one run at a time (and W too with
    ``keep_w``: the initial W of :class:`~assocmem.training.shadow.ShadowW`). Runs of different d
    are drawn at their own d and zero-padded to the largest (:mod:`~assocmem.training.padding`)."""
    dim = max(cfg.dim for cfg in configs)
    draws = []
    for cfg in configs:
        draw = draw_run(cfg)
        W, E, U = draw["W"], draw["E"], draw["U"]
        if w_product and W is not None:
            assert E is not None and U is not None
            draw["W_product"] = W.T @ U.T if w_product == "WU" else E @ W.T
            draw["W"] = W if keep_w else None
        if cfg.dim != dim:
            draw = padded_draw(draw, dim, w_product)
        draws.append(draw)

    def stacked(key: str) -> torch.Tensor | None:
        values = [draw.get(key) for draw in draws]
        tensors = [value for value in values if value is not None]
        return torch.stack(tensors) if len(tensors) == len(values) else None

    E, U = stacked("E"), stacked("U")
    assert E is not None and U is not None
    lr = torch.tensor([cfg.lr for cfg in configs], dtype=DTYPE, device=configs[0].device)
    W, product = stacked("W"), stacked("W_product") if w_product else None
    dims = tuple(cfg.dim for cfg in configs) if any(cfg.dim != dim for cfg in configs) else ()
    return RunInputs(
        E=E, U=U, W=W, W_product=product, tokens=stacked("tokens"), lr=lr, labels=stacked("labels"),
        dims=dims,
    )  # fmt: skip


def padded_draw(
    draw: dict[str, torch.Tensor | None], dim: int, w_product: str
) -> dict[str, torch.Tensor | None]:
    """A run's draws (:func:`draw_run`, and the kept product ``W_product`` of W) zero-padded to
    d = ``dim`` along their axes of d; tokens and labels as they are."""
    names = {"E": "E", "U": "U", "W": "W", "W_product": w_product or "WU"}
    return {
        key: pad(names[key], value, dim) if key in names and value is not None else value
        for key, value in draw.items()
    }


def step_weights(
    tokens: torch.Tensor | None, probs: torch.Tensor, runs: int, steps: int, batch_size: int
) -> torch.Tensor:
    """(R, S, N): :math:`c(x)/B` of each step's batch, tokens (R, S, B); or ``p(x)`` (full
    batch)."""
    if tokens is None:
        return probs.expand(runs, steps, -1)
    counts = torch.zeros(runs, steps, probs.shape[0], dtype=DTYPE, device=probs.device)
    counts.scatter_add_(2, tokens, torch.ones_like(tokens, dtype=DTYPE))
    return counts / batch_size


def train_group(
    configs: Sequence[TrainConfig],
    *,
    fast: bool = True,
    progress: Bar | None = None,
    return_state: bool = False,
    keep_w: bool = False,
    shorter: Sequence[tuple[TrainConfig, int]] = (),
) -> list[RunResult]:
    """Train runs sharing one :meth:`TrainConfig.batch_key` in one tensor program (see
    :func:`train` for ``fast``, ``return_state`` and ``keep_w``). ``shorter``: (config, r)
    pairs of runs that end early on the trajectory of ``configs[r]``
    (:mod:`~assocmem.training.trajectories`); their results follow those of ``configs``."""
    return run_group(
        configs,
        fast=fast,
        progress=progress,
        return_state=return_state,
        keep_w=keep_w,
        shorter=shorter,
    )[0]


def run_group(
    configs: Sequence[TrainConfig],
    *,
    fast: bool = True,
    progress: Bar | None = None,
    kernel_class: type[AbstractKernel] | None = None,
    return_state: bool = False,
    keep_w: bool = False,
    shorter: Sequence[tuple[TrainConfig, int]] = (),
) -> tuple[list[RunResult], torch.Tensor]:
    """:func:`train_group`, also returning the final logits of every run, (R, N, M).

    ``kernel_class`` overrides :func:`select_kernel` (tests compare kernels on one config). On
    CUDA the group runs under :func:`~assocmem.runtime.device_numerics` (deterministic
    algorithms, TF32 off unless asked for)."""
    with device_numerics(configs[0].device):
        return _run_group(configs, fast, progress, kernel_class, return_state, keep_w, shorter)


def _run_group(
    configs: Sequence[TrainConfig],
    fast: bool,
    progress: Bar | None,
    kernel_class: type[AbstractKernel] | None,
    return_state: bool,
    keep_w: bool,
    shorter: Sequence[tuple[TrainConfig, int]],
) -> tuple[list[RunResult], torch.Tensor]:
    cfg = program_config(configs)
    task = Task.of(cfg)
    kernel_class = kernel_class or select_kernel(cfg, fast=fast)
    with intra_op_threads(1):  # tiny per-run products: one thread is fastest, and exact
        inputs = stack_runs(configs, w_product=kernel_class.w_product, keep_w=keep_w)
        W0, inputs.W = (inputs.W, None) if kernel_class.w_product else (None, inputs.W)
        assert not (keep_w and inputs.dims), "a shadow W takes the group's d: no padding"
        kernel = kernel_class(cfg, inputs, task.targets)
        shadow = None
        if keep_w and W0 is not None and ShadowW.needed(kernel):
            shadow = ShadowW(cfg, W0, inputs.E, inputs.U)
    if cfg.label_noise and cfg.full_batch:
        kernel.targets = task.law  # the expected gradient over noisy labels
    recorder = Recorder(cfg, len(configs), task, ends=[run.steps for run, _ in shorter])
    with flush_denormals(cfg.device == "cpu"):  # tests compare with torch.optim without it
        train_steps(kernel, cfg, inputs, task, recorder, progress, shadow)
    with intra_op_threads(1):  # a run's numbers never depend on its companions
        final_logits = kernel.logits()
        final = population_metrics(
            final_logits, task.targets, task.probs, task.law, task.population
        )
    out = results(configs, final, recorder, kernel.describe())
    out += shorter_results(configs, shorter, recorder, kernel.describe())
    if return_state or keep_w:
        fixed = {"E": inputs.E, "U": inputs.U}  # the drawn embeddings, where not learned
        held = fixed | kernel.memory_tensors()
        W = final_w(kernel, shadow, held["E"], held["U"]) if keep_w else None
        states = TrainedState.of_runs(list(configs), held | ({"W": W} if W is not None else {}))
        for result, state in zip(out, states, strict=True):
            result.state = state
    return out, final_logits


def program_config(configs: Sequence[TrainConfig]) -> TrainConfig:
    """The config of a group's tensor program: its first run's, at the group's largest d where
    its runs are zero-padded to it (runs that share a :func:`padding_key`)."""
    cfg = configs[0]
    dim = max(c.dim for c in configs)
    if dim == cfg.dim and all(c.batch_key() == cfg.batch_key() for c in configs):
        return cfg
    key = padding_key(cfg)
    assert key is not None and all(padding_key(c) == key for c in configs), "mixed group"
    return cfg.with_(dim=dim)


def train_steps(
    kernel: AbstractKernel,
    cfg: TrainConfig,
    inputs: RunInputs,
    task: Task,
    recorder: Recorder,
    progress: Bar | None,
    shadow: ShadowW | None = None,
) -> None:
    """Advance the kernel through all ``cfg.steps`` steps, in spans that end at record points
    (spans of one step where each step has its own targets, noisy labels, or where a
    :class:`ShadowW` takes its step of W before each of the kernel's); on CUDA each step is
    replayed as a CUDA graph where it can be (:mod:`~assocmem.training.graphs`)."""
    runs, B = inputs.lr.shape[0], cfg.batch_size
    one_by_one = inputs.labels is not None or shadow is not None
    graphed = not one_by_one and graphs_enabled(kernel, cfg.device)
    stepper: AbstractKernel | GraphedSteps = GraphedSteps(kernel) if graphed else kernel
    span = SPAN_STEPS if (kernel.spans or graphed) and not one_by_one else 1
    recorder.record(0, kernel)
    t = 0
    while t < cfg.steps:
        end = min([cfg.steps, t + span, *recorder.stops_after(t)])
        tokens = None
        if inputs.tokens is not None:
            tokens = inputs.tokens[:, t * B : end * B].reshape(runs, end - t, B)
        if inputs.labels is not None and tokens is not None:  # noisy samples, one step
            labels = inputs.labels[:, t * B : end * B]
            kernel.targets = batch_label_law(tokens[:, 0], labels, cfg.n_inputs, cfg.n_outputs)
        weights = step_weights(tokens, task.probs, runs, end - t, B)
        rates = scheduled_lr(cfg, inputs.lr, t, end)
        if shadow is not None:
            with intra_op_threads(1):  # a run's W never depends on its companions
                shadow.step(kernel, t + 1, weights[:, 0], rates[:, 0])
        stepper.advance(t, tokens, weights, rates)
        if progress is not None:
            progress.update(runs * (end - t))
        t = end
        recorder.record(t, kernel)


def scheduled_lr(cfg: TrainConfig, lr: torch.Tensor, start: int, end: int) -> torch.Tensor:
    """The learning rates of steps start … end − 1 of every run, (R, S), from lr (R,)."""
    rates = lr[:, None].expand(-1, end - start)
    if cfg.schedule == "constant":
        return rates
    factors = [schedule_factor(cfg, s) for s in range(start, end)]
    return rates * torch.tensor(factors, dtype=DTYPE, device=lr.device)


def train(
    configs: Sequence[TrainConfig],
    *,
    fast: bool = True,
    progress: bool = False,
    budget: int | None = None,
    return_state: bool = False,
    keep_w: bool = False,
) -> list[RunResult]:
    """Train every config, batched where shapes agree; results in the order of ``configs``.

    Parameters
    ----------
    configs : sequence of TrainConfig
        The runs; runs that differ only in seed and lr share one tensor program (chunked to
        ``budget`` bytes of state), and on the batched path (CUDA's) runs that differ also in
        d, zero-padded to the largest (:mod:`~assocmem.training.padding`; not with ``keep_w``).
        A run's numbers do not depend on its companions (on the batched path, up to float
        rounding).
    fast : bool, default True
        Use the fastest exact kernel of each config (default); False: the autograd kernels,
        which hold W, E and U for every model but ``qupdate``.
    progress : bool, default False
        Show a progress bar of run-steps.
    budget : int, optional
        Bytes of per-run state one tensor program may hold (default
        :func:`~assocmem.training.planning.memory_budget`: 512 MiB on the CPU, a fixed table
        by the card's memory on CUDA).
    return_state : bool, default False
        Give each result its trained memory (:class:`~assocmem.training.state.TrainedState`:
        E (N, d), U (M, d), and W (d, d) or the product of W its kernel moved), on the CPU in
        float32, bit for bit what the engine trained. Off by default (it costs memory).
    keep_w : bool, default False
        Give each result its state (as ``return_state``) with W (d, d) set for every model
        that has one, the fast kernels included: where a kernel moves only a product of W, W
        is stepped beside it along the run's own trajectory
        (:class:`~assocmem.training.shadow.ShadowW`; one d×d gradient per step, the cost of
        the autograd path); the ``qupdate`` model's W is ``W_q``. The run's numbers and the
        product the kernel holds are unchanged.

    Returns
    -------
    list of RunResult
        One per config, in order. A run whose logits become non-finite has status
        ``"diverged"`` (its error counts those tokens wrong); the others still run.

    Notes
    -----
    Cabannes et al. (2024), Section 4; see the docs: science/optimisation.md.

    Examples
    --------
    >>> from assocmem.training import TrainConfig, train
    >>> cfg = TrainConfig(n_inputs=20, dim=8, model="learned", n_samples=64, batch_size=8)
    >>> (result,) = train([cfg], return_state=True)
    >>> result.state.W.shape, result.state.E.shape, result.state.U.shape
    (torch.Size([8, 8]), torch.Size([20, 8]), torch.Size([5, 8]))
    """
    results: list[RunResult | None] = [None] * len(configs)
    sharing = not (return_state or keep_w)
    leaders, shorter = share_trajectories(configs) if sharing else (list(range(len(configs))), {})
    total = sum(configs[i].steps for i in leaders)
    with progress_bar(total, None, "run-step", progress) as bar:
        for chunk in group_runs([configs[i] for i in leaders], budget=budget, pad=not keep_w):
            runs = [leaders[j] for j in chunk]
            ends = [(k, r) for r, i in enumerate(runs) for k in shorter.get(i, [])]
            group = train_group(
                [configs[i] for i in runs],
                fast=fast,
                progress=bar,
                return_state=return_state,
                keep_w=keep_w,
                shorter=[(configs[k], r) for k, r in ends],
            )
            for index, result in zip([*runs, *(k for k, _ in ends)], group, strict=True):
                results[index] = result
    assert all(r is not None for r in results)
    return [r for r in results if r is not None]
