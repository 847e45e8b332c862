"""The draw cache gives every group the bits a fresh draw gives (training/draw_cache.py)."""

import pytest
import torch

from assocmem.training import engine
from assocmem.training.config import TrainConfig
from assocmem.training.draw_cache import DrawCache
from assocmem.training.engine import draw_run


def config(**changes: object) -> TrainConfig:
    base = {"n_inputs": 30, "n_outputs": 5, "dim": 8, "n_samples": 512, "batch_size": 16}
    return TrainConfig.from_flat({**base, **changes})


def fresh(cfg: TrainConfig) -> dict[str, torch.Tensor | None]:
    """A draw through an empty cache of its own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "DRAWS", DrawCache())
        return draw_run(cfg)


def same(a: dict[str, torch.Tensor | None], b: dict[str, torch.Tensor | None]) -> bool:
    def equal(x: torch.Tensor | None, y: torch.Tensor | None) -> bool:
        return x is y is None or (x is not None and y is not None and torch.equal(x, y))

    return all(equal(a[k], b[k]) for k in ("E", "U", "W", "tokens", "labels"))


def test_a_cached_draw_has_the_bits_of_a_fresh_one() -> None:
    cfg = config(seed=3)
    draw_run(cfg)  # now cached
    assert same(draw_run(cfg), fresh(cfg))
    assert draw_run(cfg)["E"] is draw_run(cfg)["E"]  # served, not drawn again


def test_samples_are_served_as_prefixes_of_the_longest_draw() -> None:
    long, short = config(seed=4, n_samples=4096), config(seed=4, n_samples=256)
    draw_run(long)
    served = draw_run(short)["tokens"]
    assert served is not None and served.shape == (256,)
    assert same(draw_run(short), fresh(short))
    # a longer request after a shorter one draws again, and equals a fresh draw
    longer = config(seed=4, n_samples=8192)
    assert same(draw_run(longer), fresh(longer))


def test_streams_stay_apart() -> None:
    a, b = draw_run(config(seed=5)), draw_run(config(seed=6))
    assert not torch.equal(a["E"], b["E"])  # type: ignore[arg-type]
    c = draw_run(config(seed=5, dim=9))
    assert c["E"] is not None and c["E"].shape == (30, 9)
    d = draw_run(config(seed=5, alpha=1.5))
    assert not torch.equal(a["tokens"], d["tokens"])  # type: ignore[arg-type]


def test_the_cache_keeps_within_its_bytes() -> None:
    cache = DrawCache(max_bytes=1000)
    for i in range(10):
        cache.get(i, lambda: torch.zeros(100))  # 400 bytes each
    assert sum(v.numel() * 4 for v in cache._entries.values()) <= 1000
    assert list(cache._entries) == [8, 9]  # the most recent
    cache.get("big", lambda: torch.zeros(1000))  # larger than the bound: served, not kept
    assert "big" not in cache._entries
