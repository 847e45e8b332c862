import math

import pytest
import torch

from assocmem import rng
from assocmem.config.errors import ConfigError
from assocmem.embeddings import (
    DRAW_BLOCK,
    draw_embeddings,
    nested_row_scales,
    standard_coordinates,
)
from assocmem.laws.tokens import (
    mod_targets,
    normalize_probabilities,
    prefix_counts,
    random_targets,
    sample_tokens,
    zipf_probabilities,
)


def test_zipf_is_normalised_and_decreasing():
    p = zipf_probabilities(1000, 2.0)
    assert float(p.sum()) == pytest.approx(1.0, abs=1e-12)
    assert bool((p[1:] <= p[:-1]).all())
    assert float(p[0] / p[1]) == pytest.approx(4.0)


def test_bad_distribution_inputs_are_rejected():
    with pytest.raises(ConfigError, match="n_inputs"):
        zipf_probabilities(0, 2.0)
    with pytest.raises(ConfigError, match="alpha"):
        zipf_probabilities(10, -0.5)  # 0.0 is the uniform law
    with pytest.raises(ConfigError, match="probabilities"):
        normalize_probabilities([0.5, -0.1])


def test_streams_are_stable_and_distinct():
    assert rng.stream_seed(0, "data", 3) == rng.stream_seed(0, "data", 3)
    assert rng.stream_seed(0, "data", 3) != rng.stream_seed(0, "data", 4)
    assert rng.stream_seed(0, "data", 3) != rng.stream_seed(0, "embeddings", 3)


def test_samples_are_nested_prefixes():
    p = zipf_probabilities(50, 1.5)
    short = sample_tokens(p, 1000, rng.generator(1, "data", 0))
    long = sample_tokens(p, 50_000, rng.generator(1, "data", 0))
    assert torch.equal(short, long[:1000])


def test_samples_follow_the_law():
    """Empirical frequencies of 200k draws within 5 binomial standard deviations of p."""
    p = zipf_probabilities(20, 1.2)
    tokens = sample_tokens(p, 200_000, rng.generator(0, "data", 0))
    freq = torch.bincount(tokens, minlength=20).double() / tokens.numel()
    sd = (p * (1 - p) / tokens.numel()).sqrt()
    assert bool(((freq - p).abs() <= 5 * sd).all())


def test_prefix_counts_match_bincount():
    tokens = torch.randint(0, 30, (500,), generator=torch.Generator().manual_seed(0))
    counts = prefix_counts(tokens, 30, [0, 7, 100, 500])
    for row, t in enumerate([0, 7, 100, 500]):
        assert torch.equal(counts[row], torch.bincount(tokens[:t], minlength=30).double())


def test_targets():
    assert mod_targets(7, 3).tolist() == [0, 1, 2, 0, 1, 2, 0]
    t = random_targets(100, 5, rng.generator(0, "targets", 0))
    assert torch.bincount(t, minlength=5).tolist() == [20] * 5


def test_coordinates_are_nested_across_d_max():
    a = standard_coordinates(33, 10, rng.generator(0, "embeddings", 0))
    b = standard_coordinates(33, 300, rng.generator(0, "embeddings", 0))
    assert torch.equal(a, b[:10])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(("n_rows", "dim"), [(1, 17), (7, 33), (1000, 64), (29, 1000)])
def test_coordinates_in_one_call_are_the_blocks(n_rows, dim, dtype):
    """On CPU standard_coordinates draws every block in one call; that must be the numbers of
    one call per DRAW_BLOCK coordinates (fails if torch's CPU normal_ stops filling uniforms in
    order and transforming them 16 at a time), and leave the generator in the same state."""
    one, per_block = rng.generator(0, "embeddings", 0), rng.generator(0, "embeddings", 0)
    got = standard_coordinates(n_rows, dim, one, dtype=dtype)
    blocks = [
        torch.randn(DRAW_BLOCK, n_rows, generator=per_block, dtype=dtype)
        for _ in range(-(-dim // DRAW_BLOCK))
    ]
    assert torch.equal(got, torch.cat(blocks)[:dim])
    assert torch.equal(one.get_state(), per_block.get_state())


def test_embedding_laws():
    gen = rng.generator(0, "embeddings", 0)
    gauss = draw_embeddings("gaussian", 2000, 64, gen)
    assert float(gauss.var()) == pytest.approx(1 / 64, rel=0.05)
    sphere = draw_embeddings("spherical", 100, 64, gen)
    assert torch.allclose(sphere.norm(dim=1), torch.ones(100), atol=1e-5)
    ortho = draw_embeddings("orthogonal", 20, 30, gen)
    assert torch.allclose(ortho @ ortho.T, torch.eye(20), atol=1e-5)
    with pytest.raises(ConfigError, match="dims"):
        draw_embeddings("orthogonal", 20, 10, gen)


def test_nested_scales():
    coords = standard_coordinates(40, 100, rng.generator(0, "embeddings", 0), dtype=torch.float64)
    trunc = nested_row_scales(coords, [10, 100], "spherical", "truncate")
    renorm = nested_row_scales(coords, [10, 100], "spherical", "renormalize")
    assert torch.allclose(
        (coords[:10] * renorm[0]).norm(dim=0), torch.ones(40, dtype=torch.float64)
    )
    assert torch.allclose(trunc[0], trunc[1]) and torch.allclose(trunc[1], renorm[1])
    gauss = nested_row_scales(coords, [10, 100], "gaussian", "renormalize")
    assert float(gauss[0, 0]) == pytest.approx(1 / math.sqrt(10))


def test_noisy_labels_rate_uniformity_and_nesting():
    """Flip rate within 5 binomial sd of ε; flipped labels uniform over the other outputs."""
    from assocmem.laws.tokens import noisy_labels, prefix_label_counts

    clean = torch.zeros(100_000, dtype=torch.int64)
    labels = noisy_labels(clean, 5, 0.3, rng.generator(0, "labels", 0))
    flipped = labels != 0
    assert abs(float(flipped.double().mean()) - 0.3) < 5 * math.sqrt(0.3 * 0.7 / 1e5)
    share = torch.bincount(labels[flipped], minlength=5)[1:].double() / flipped.sum()
    assert bool(((share - 0.25).abs() < 5 * math.sqrt(0.25 * 0.75 / 30_000)).all())
    prefix = noisy_labels(clean[:1000], 5, 0.3, rng.generator(0, "labels", 0))
    assert torch.equal(prefix, labels[:1000])
    tokens = torch.arange(10) % 3
    joint = prefix_label_counts(tokens, tokens % 2, 3, 2, [4, 10])
    assert joint.shape == (2, 2, 3) and float(joint[1].sum()) == 10
    assert float(joint[0, 0, 0]) == 2  # x = 0 appears twice in the first 4 samples, label 0
