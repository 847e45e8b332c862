r"""Runs that differ only in T share one trajectory.

One pass over T fresh samples reads the samples in order, and a run's samples are nested
prefixes (:func:`~assocmem.laws.tokens.sample_tokens` draws fixed blocks): the run with T₁ < T₂
takes exactly the first :math:`\lfloor T_1 / B \rfloor` steps of the run with T₂, the same seed, lr
and everything else. So a group trains only the longest run of each such family and reads the
shorter ones' records where they end (:class:`~assocmem.training.records.Recorder`): the same
numbers, bit for bit on the CPU, for a tenth less work on the authors' grid (T ∈ {1024, 10240,
102400}) and a third of the programs.

Not shared, where it would not be exact: full-batch training (no samples), label noise (each
run's noisy labels are drawn for its own T), and runs whose trained state is asked for.
"""

from collections.abc import Hashable, Sequence

from assocmem.training.config import TrainConfig


def trajectory_key(cfg: TrainConfig) -> Hashable | None:
    """Equal for runs that differ only in ``n_samples`` and can share a trajectory; None for a
    run that trains alone."""
    if cfg.full_batch or cfg.label_noise:
        return None
    return cfg.key_without("n_samples")


def share_trajectories(configs: Sequence[TrainConfig]) -> tuple[list[int], dict[int, list[int]]]:
    """The runs to train (indices into ``configs``, in order) and, for each of them, the runs
    that end early on its trajectory (its family but for the longest run, the first of the
    longest where several are)."""
    families: dict[Hashable, list[int]] = {}
    for index, cfg in enumerate(configs):
        key = trajectory_key(cfg)
        families.setdefault(("alone", index) if key is None else key, []).append(index)
    leaders, shorter = [], {}
    for members in families.values():
        leader = max(members, key=lambda i: configs[i].steps)
        leaders.append(leader)
        if len(members) > 1:
            shorter[leader] = [i for i in members if i != leader]
    return sorted(leaders), shorter
