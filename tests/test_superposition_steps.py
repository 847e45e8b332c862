"""The trained heads' sign-Adam step keeps the bits the superposition study was measured with.

Before the studies' trainers took their optimiser from the registry (b451fe1), the trainer of
memories in parallel stepped ``W −= (lr · g) / (|g| + eps)``, each operation rounded once to
float32. b451fe1 stepped ``W += −lr · (g / (|g| + eps))`` instead (another association, and a
fused multiply-add in ``addcmul_``): it moved every sign-Adam run (the full scale's sign-Adam
index at H = 2 from 0.740 to 0.748); b2eaae6 put the old association back. These tests pin it
against an explicit float32 reference written here with numpy (one rounding per operation, no
fused products), not against the code under test.
"""

import numpy as np
import torch

from assocmem.laws.tokens import mod_targets
from assocmem.runtime import intra_op_threads
from assocmem.studies.superposition.train import HeadsTraining, draw_heads, gradient, train_heads
from assocmem.training.optimizers import OPTIMIZERS
from assocmem.training.optimizers.adam import Adam

EPS = np.float32(1e-8)  # torch.optim.Adam's default ε, as the studies' trainer had it


def old_sign_adam(W: np.ndarray, grad: np.ndarray, lr: np.ndarray) -> np.ndarray:
    """The studies' step before the registry: ``W − (lr · g) / (|g| + ε)`` in float32, lr (R,)
    per run against W and grad (R, ...)."""
    rate = lr.astype(np.float32).reshape(-1, *([1] * (W.ndim - 1)))
    return W - (rate * grad) / (np.abs(grad) + EPS)


def spread(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """float32 values of both signs whose magnitudes span 1e-45 (subnormal) to 1e30, with zeros:
    far below ε (the step is then linear in g), around it, and far above (a sign step)."""
    gen = torch.Generator().manual_seed(seed)
    exponent = torch.empty(shape, dtype=torch.float64).uniform_(-45, 30, generator=gen)
    sign = torch.randint(0, 2, shape, generator=gen) * 2 - 1
    values = (sign * 10.0**exponent).to(torch.float32)
    values[torch.rand(shape, generator=gen) < 0.05] = 0.0
    return values


def test_registry_sign_adam_step_is_the_studies_step_bit_for_bit() -> None:
    adam = OPTIMIZERS["adam"]()
    assert isinstance(adam, Adam) and adam.sign_like and np.float32(adam.eps) == EPS
    for seed in range(4):
        W = torch.randn(3, 2, 16, 16, generator=torch.Generator().manual_seed(seed))
        grad = spread((3, 2, 16, 16), seed)
        lr = torch.tensor([0.1, 10.0, 100.0], dtype=torch.float32) * (1.0 / 128)
        expected = old_sign_adam(W.numpy(), grad.numpy(), lr.numpy())
        adam.step({}, W, grad, lr, 1)
        assert np.array_equal(W.numpy(), expected), f"seed {seed}"


def test_trained_heads_step_as_the_studies_trainer_did() -> None:
    """train_heads (sign-Adam, lr / d_h per head) against its loop written out with the old
    step: the same W, bit for bit, after 32 steps of two runs."""
    setting = HeadsTraining(60, 5, 2.0, 2, 8, 512, 16, "adam")
    seeds, lrs = [0, 1], [1.0, 30.0]
    results = train_heads(setting, seeds, lrs)
    draws = [draw_heads(setting, seed) for seed in seeds]
    E, U, W = (torch.stack([draw[k] for draw in draws]) for k in ("E", "U", "W"))
    tokens = torch.stack([draw["tokens"] for draw in draws])
    targets = mod_targets(60, 5)
    lr = (torch.tensor(lrs, dtype=torch.float32) * (1.0 / 8)).numpy()  # lr / d_h in float32
    with intra_op_threads(1):
        for t in range(setting.steps):
            batch = tokens[:, t * 16 : (t + 1) * 16]
            grad = gradient(E, U, W, batch, targets[batch])
            W = torch.from_numpy(old_sign_adam(W.numpy(), grad.numpy(), lr))
    for r, result in enumerate(results):
        assert torch.equal(result.W, W[r]), f"run {r}"
