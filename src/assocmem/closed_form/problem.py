"""What every trial of a closed-form run shares: the law p, the columns (scheme × T), the dims,
the population error (with its head), and each trial's targets, weights and label laws."""

import math
from collections.abc import Callable
from typing import Any, TypeVar, cast

import torch

from assocmem import rng
from assocmem.closed_form.config import ClosedFormConfig
from assocmem.closed_form.result import Column
from assocmem.embeddings import nested_row_scales, standard_coordinates
from assocmem.laws.counts import multinomial_prefix_label_counts
from assocmem.laws.groups import group_targets, token_groups
from assocmem.laws.tokens import (
    label_law,
    majority_labels,
    mod_targets,
    noisy_labels,
    normalize_probabilities,
    prefix_label_counts,
    random_targets,
    sample_tokens,
    zipf_probabilities,
)
from assocmem.ops.population import PopulationError
from assocmem.schemes import Scheme

T = TypeVar("T")


class Workspace:
    """Named work tensors reused from one trial to the next: at N = 10⁶ a fresh 40 MB tensor
    costs about as much in page faults as the product that fills it. Contents are undefined;
    a tensor is valid until its name is asked for again."""

    def __init__(self, device: torch.device) -> None:
        self.device, self.store = device, dict[str, torch.Tensor]()

    def __call__(self, name: str, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        """A contiguous tensor of ``shape`` (the front of a flat buffer, grown as needed)."""
        numel = math.prod(shape)
        buffer = self.store.get(name)
        if buffer is None or buffer.numel() < numel or buffer.dtype != dtype:
            buffer = self.store[name] = torch.empty(numel, dtype=dtype, device=self.device)
        return buffer[:numel].view(shape)


class Problem:
    """What every trial shares: the law p, the columns, the dims, the population error."""

    def __init__(self, cfg: ClosedFormConfig) -> None:
        self.cfg = cfg
        self.device = torch.device(cfg.device)
        self.dtype = cfg.torch_dtype
        if cfg.probabilities is not None:
            probs = normalize_probabilities(cfg.probabilities)
        elif cfg.words is not None:
            from assocmem.laws.words import word_distribution

            probs = torch.from_numpy(word_distribution(cfg.words, cfg.n_inputs).probabilities)
        else:
            probs = zipf_probabilities(cfg.n_inputs, cfg.alpha)
        self.probs_cpu = probs
        self.probs = probs.to(self.device)
        self.dims = sorted(set(cfg.dims))
        self.sample_sizes = list(dict.fromkeys(cfg.n_samples))
        self.finite_sizes = sorted({t for t in self.sample_sizes if t is not None})
        self.schemes = cfg.parsed_schemes
        self.columns = [
            Column(s.spec, t)
            for s in self.schemes
            for t in (self.sample_sizes if s.uses_data else [None])
        ]
        self.population_error = PopulationError(self.probs, cfg.head_fraction)
        self._per_run: dict[str, Any] = {}  # see shared()
        self.all_per_dim = cfg.embedding == "orthogonal" or (
            cfg.embedding == "spherical" and cfg.nested == "renormalize"
        )
        # Columns are computed as [fixed columns, varying columns]; order[i] is the position of
        # the i-th computed column in self.columns.
        fixed: list[int] = []
        varying: list[int] = []
        for scheme in self.schemes:
            start = len(fixed) + len(varying)
            width = len(self.sample_sizes) if scheme.uses_data else 1
            (fixed if self.is_fixed(scheme) else varying).extend(range(start, start + width))
        self.order = fixed + varying
        # Work tensors the thread that computes the trials reuses (``Sampler.aggregates``, the
        # evaluator), and those the draws reuse (one draw runs at a time, in whichever thread
        # draws): never the same tensor in two threads at once
        self.workspace = Workspace(self.device)
        self.draw_workspace = Workspace(self.device)

    def is_fixed(self, scheme: Scheme) -> bool:
        """A scheme's weights are the same at every d (one pass of running sums serves all d)."""
        return not scheme.uses_dim and not self.all_per_dim

    def targets(self, trial: int) -> torch.Tensor:
        cfg = self.cfg
        if cfg.target == "mod":
            return mod_targets(cfg.n_inputs, cfg.n_outputs)
        if cfg.target == "group":
            return group_targets(self.groups(trial), cfg.n_outputs)
        return random_targets(
            cfg.n_inputs, cfg.n_outputs, rng.generator(cfg.seed, "targets", trial)
        )

    def groups(self, trial: int) -> torch.Tensor:
        """The group g(x) of every token (N,) int64 (similar tokens; docs: beyond/similar.md),
        from the trial's ``groups`` stream (a ``banded`` grouping draws nothing)."""
        cfg = self.cfg
        gen = rng.generator(cfg.seed, "groups", trial)
        return token_groups(cfg.n_inputs, cfg.n_groups, cfg.grouping, self.probs_cpu, gen)

    def output_coordinates(self, trial: int) -> tuple[torch.Tensor, torch.Tensor]:
        r"""The raw output coordinates (d_max, M) of the trial's ``output_embeddings`` stream and
        their scales (D, M): u_y at ``d = dims[i]`` is
        :math:`\mathrm{scales}[i, y] \cdot \mathrm{coords}[:d, y]`.

        Not for orthogonal output embeddings (the canonical basis, drawn from nothing)."""
        cfg = self.cfg
        gen = rng.generator(cfg.seed, "output_embeddings", trial, device=self.device)
        coords = standard_coordinates(
            cfg.n_outputs, self.dims[-1], gen, device=self.device, dtype=self.dtype
        )
        return coords, nested_row_scales(coords, self.dims, cfg.output_embedding, cfg.nested)

    def shared(self, key: str, make: Callable[[], T], same: bool | None = None) -> T:
        """``make()``, computed once per run (under ``key``) when it is the same every trial:
        by default when the targets are (``mod``), else as ``same`` says. Read-only: shared."""
        if not (self.cfg.target == "mod" if same is None else same):
            return make()
        if key not in self._per_run:  # drawn ahead or not, both threads would store the same
            self._per_run[key] = make()
        return cast(T, self._per_run[key])

    def class_tokens(self, targets: torch.Tensor) -> list[torch.Tensor]:
        """The tokens of each output class y, ``(targets == y).nonzero()`` on the device, in
        increasing order; computed once with ``mod`` targets (the same every trial)."""

        def make() -> list[torch.Tensor]:
            on_device = targets.to(self.device)
            return [(on_device == y).nonzero().flatten() for y in range(self.cfg.n_outputs)]

        return self.shared("class_tokens", make)

    def population_labels(self, targets: torch.Tensor) -> torch.Tensor:
        """The label law of each token, (M, N) float64: f*(x) w.p. 1 − ε, else uniform.

        With ``mod`` targets (the same every trial) it is computed once (read-only: shared).
        """
        cfg = self.cfg
        return self.shared(
            "population_labels",
            lambda: label_law(targets.cpu(), cfg.n_outputs, cfg.label_noise).T,
        )

    def sample_statistics(
        self, trial: int, targets: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Frequencies (R, N) and stored label laws (R, M, N) for each sample size, float64.

        Row r is for ``sample_sizes[r]``: counts n(x) of the first T samples and the empirical
        label law n(x, y)/n(x) (zero for unseen x), or p and the population label law for T = ∞;
        under the ``majority`` label rule, the one-hot of each token's most frequent label.
        The counts are those of T drawn tokens, or with ``counts = "multinomial"`` the count
        vectors drawn directly (streams ``counts`` and ``label_counts``).
        """
        cfg = self.cfg
        n, m, eps = cfg.n_inputs, cfg.n_outputs, cfg.label_noise
        if self.finite_sizes and cfg.counts == "multinomial":  # the count vectors, O(N) per T
            joint = multinomial_prefix_label_counts(
                self.probs_cpu,
                self.population_labels(targets).T,
                self.finite_sizes,
                rng.generator(cfg.seed, "counts", trial),
                rng.generator(cfg.seed, "label_counts", trial),
            )  # (R_f, M, N)
        elif self.finite_sizes:
            tokens = sample_tokens(
                self.probs_cpu, max(self.finite_sizes), rng.generator(cfg.seed, "data", trial)
            )
            observed = targets.index_select(0, tokens)
            if eps > 0:
                observed = noisy_labels(observed, m, eps, rng.generator(cfg.seed, "labels", trial))
            joint = prefix_label_counts(tokens, observed, n, m, self.finite_sizes)  # (R_f, M, N)
        if self.finite_sizes:  # n(x) and n(x, y)/n(x) of every finite size at once
            seen = joint.sum(1)
            laws = joint / seen.clamp(min=1)[:, None]
        if list(self.sample_sizes) == self.finite_sizes:  # the sizes in order, each once
            freq, labels = seen, laws
        else:
            freq = torch.empty(len(self.sample_sizes), n, dtype=torch.float64)
            labels = torch.empty(len(self.sample_sizes), m, n, dtype=torch.float64)
            for row, size in enumerate(self.sample_sizes):
                if size is None:
                    freq[row], labels[row] = self.probs_cpu, self.population_labels(targets)
                else:
                    at = self.finite_sizes.index(size)
                    freq[row], labels[row] = seen[at], laws[at]
        if cfg.label_rule == "majority":  # each token's most frequent label, ties at random
            ties = rng.generator(cfg.seed, "label_ties", trial)
            labels = majority_labels(labels, torch.rand(m, n, generator=ties, dtype=torch.float64))
        return freq.to(self.device), labels.to(self.device)

    def weights(self, trial: int, targets: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Weights and stored label laws of every column, d-independent columns first.

        Returns fixed_q (K_f, N), varying_q (n_d, K_v, N) (float64), fixed_labels (K_f, M, N)
        and varying_labels (K_v, M, N) (in the run's dtype, on its device; read-only: they may
        be views of one shared law).
        """
        if any(scheme.uses_data for scheme in self.schemes):
            freq, labels = self.sample_statistics(trial, targets)
            labels = labels.to(self.dtype)
        else:  # no counts to draw (and no stream read)
            freq, labels = self.probs[None], self.probs.new_zeros(0, 0, 0, dtype=self.dtype)
        population = self.population_labels(targets)[None]  # sample-free schemes
        if self.cfg.label_rule == "majority":  # f*(x), the unique most probable label
            population = majority_labels(population)
        # the label laws in the run's dtype (rounding each value once, as a later cast would);
        # with mod targets the population law is the same tensor every trial, converted once
        population = self._in_dtype(population)
        fixed, varying, fixed_labels, varying_labels = [], [], [], []
        n_d = len(self.dims)
        for scheme in self.schemes:
            source, law = (freq, labels) if scheme.uses_data else (self.probs[None], population)
            q = scheme.weights(source, self.dims)  # (n_d or 1, R, N)
            if self.is_fixed(scheme):
                fixed.append(q[0])
                fixed_labels.append(law)
            else:
                varying.append(q.expand(n_d, *q.shape[1:]))
                varying_labels.append(law)
        n, m = self.cfg.n_inputs, self.cfg.n_outputs
        empty = population.new_zeros(0, m, n)
        return (
            _join(fixed, 0) if fixed else freq.new_zeros(0, n),
            _join(varying, 1) if varying else freq.new_zeros(n_d, 0, n),
            _stack(fixed_labels) if fixed_labels else empty,
            _stack(varying_labels) if varying_labels else empty,
        )

    def _in_dtype(self, population: torch.Tensor) -> torch.Tensor:
        """The population label laws (1, M, N) on the device, in the run's dtype; cached when
        they are the same every trial (``mod`` targets, read-only)."""
        # row-major (M, N): the law itself is a transposed view of (N, M)
        return self.shared(
            "population_labels_dtype",
            lambda: population.to(self.device, self.dtype, memory_format=torch.contiguous_format),
            same=self.cfg.target == "mod" and self.cfg.label_rule != "majority",
        )


def _join(weights: list[torch.Tensor], dim: int) -> torch.Tensor:
    """The schemes' weights concatenated along ``dim``; one scheme's as it is (read-only: at
    N = 10⁶ a copy is 8 MB a row, page faults included)."""
    return weights[0] if len(weights) == 1 else torch.cat(weights, dim=dim)


def _stack(laws: list[torch.Tensor]) -> torch.Tensor:
    """The schemes' label laws (R_s, M, N) stacked along the first axis; a read-only view
    (no copy: 40 MB per law at N = 10⁶) when every scheme stores the same population law."""
    first = laws[0]
    if len(laws) == 1:
        return first
    if all(law is first for law in laws) and first.shape[0] == 1:
        return first.expand(len(laws), *first.shape[1:])
    return torch.cat(laws)
