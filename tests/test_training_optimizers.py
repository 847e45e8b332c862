"""The optimiser registry: flat spelling, run identities, Nesterov SGD against torch.optim."""

from typing import Any

import pytest
import torch

from assocmem.config.errors import ConfigError
from assocmem.sweep.plan import Run, make_plan
from assocmem.sweep.spec import build_train, parse_spec
from assocmem.training import OPTIMIZERS, TrainConfig, native, select_kernel
from assocmem.training.engine import draw_run, run_group
from assocmem.training.grid import expand_grid
from assocmem.training.kernels import AnalyticKernel, LayerNormSGDKernel, TableSGDKernel
from assocmem.training.optimizers.nesterov import NesterovSGD
from assocmem.training.reference import ReferenceMemory, make_optimizer, reference_train

SMALL = {"n_inputs": 20, "dim": 12, "n_samples": 96, "batch_size": 8}

# Run identities (sweep database keys) of flat configs, computed with the code before the
# optimisers became sub-configs (commit 1b98223): a database written then must resume as is.
IDENTITIES: list[tuple[dict[str, Any], str]] = [
    ({}, "69167fa708dd1cb9f81a7078480256d27e6c902cf56152fc772d68a9f428277b"),
    (
        {"optimizer": "adam", "lr": 10.0, "dim": 37},
        "88b5b49a8a7b3a1de2f9112c01bfc8218e4d7be182387159c86340386edeb445",
    ),
    (
        {
            "optimizer": "adam",
            "betas": [0.9, 0.999],
            "eps": 1e-6,
            "weight_decay": 0.01,
            "lr_scaling": "none",
        },
        "a5f0fbc00371fa1f60cb9632a5d9f831138aacbe5eed64705d03dd97e918b239",
    ),  # fmt: skip
    (
        {"optimizer": "sgd", "momentum": 0.9, "weight_decay": 0.001, "seed": 3},
        "c32a2cd67d209630eaed35d3ea4d1942ee6c0087c96f797d7ead5eb239bca744",
    ),
    (
        {"optimizer": "sign_sgd", "full_batch": True, "n_steps": 100, "init": "zero"},
        "7d9d384fc7f57f70ce4bcce073d16824b17d4094a58c89f63080fd8f77ea56f6",
    ),
    (
        {"optimizer": "normalized_sgd", "label_noise": 0.1, "words": "en", "n_inputs": 50},
        "0230109c556ad0b61c33c7e19d3d83af919b1e5af18b1818b7db8b9977d8ba49",
    ),
    (
        {
            "model": "learned",
            "layer_norm": True,
            "schedule": "step",
            "decay_steps": [10],
            "snapshot_steps": [5],
        },
        "3aab0067fbbb480d8d37933581eea29ee7907128f60dff0303b02fd701453e5a",
    ),  # fmt: skip
]


@pytest.mark.parametrize(("flat", "key"), IDENTITIES)
def test_run_identities_unchanged(flat: dict[str, Any], key: str) -> None:
    assert Run.make("train", build_train(flat)).key == key


def test_flat_spelling_round_trips() -> None:
    cfg = TrainConfig.from_flat(
        {"optimizer": "adam", "betas": [0.9, 0.999], "eps": 1e-6, "momentum": 0.0, "dim": 7}
    )
    assert cfg.optimizer.name == "adam" and cfg.optimizer.betas == (0.9, 0.999)  # type: ignore[attr-defined]
    record = cfg.to_dict()
    assert list(record)[15:22] == [
        "optimizer", "lr", "lr_scaling", "momentum", "weight_decay", "betas", "eps",
    ]  # fmt: skip
    assert (record["momentum"], record["betas"], record["eps"]) == (0.0, [0.9, 0.999], 1e-6)
    assert TrainConfig.from_flat(record) == cfg
    sgd = TrainConfig(optimizer="sgd").to_dict()
    assert (sgd["betas"], sgd["eps"]) == ([0.0, 0.0], 1e-8)  # records keep every key


def test_hyper_parameter_of_another_optimiser_is_rejected() -> None:
    with pytest.raises(ConfigError, match="optimizer 'adam' has no momentum") as err:
        TrainConfig.from_flat({"optimizer": "adam", "momentum": 0.9})
    assert err.value.field == "momentum" and "weight_decay, betas, eps" in err.value.message
    with pytest.raises(ConfigError, match="unknown value 'lbfgs'"):
        TrainConfig.from_flat({"optimizer": "lbfgs"})
    with pytest.raises(ConfigError, match="has no betas"):
        expand_grid({"optimizers": ["sgd", "adam"], "betas": [0.9, 0.99]})
    # at the value records hold for an optimiser without it: accepted
    assert TrainConfig.from_flat({"optimizer": "sign_sgd", "eps": 1e-8, "betas": [0, 0]})


def test_every_registered_optimiser_validates_and_spells_flat() -> None:
    for name, entry in OPTIMIZERS.items():
        cfg = TrainConfig.from_flat({"optimizer": name})
        assert isinstance(cfg.optimizer, entry) and entry.name == name
        assert TrainConfig.from_flat(cfg.to_dict()) == cfg


def test_planning_never_compiles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(native, "load", lambda: pytest.fail("planning compiled the kernels"))
    spec = parse_spec(
        {
            "name": "p",
            "kind": "train",
            "seeds": 3,
            "axes": {"model": ["matrix", "learned", "relu"], "optimizer": list(OPTIMIZERS)},
        }
    )
    plan = make_plan(spec)
    assert len(plan.runs) == 45 and len(plan.batches) == 15


NESTEROV: dict[str, dict[str, Any]] = {
    "matrix": {"lr": 2.0},
    "matrix_wd_full_batch": {"weight_decay": 0.01, "full_batch": True, "n_steps": 10},
    "matrix_ln": {"layer_norm": True, "lr": 5.0, "momentum": 0.5},
    "learned": {"model": "learned", "lr": 0.5},
    "relu_ln": {"model": "relu", "layer_norm": True, "lr": 2.0, "weight_decay": 0.01},
    "label_noise": {"label_noise": 0.2, "lr": 2.0},
}
KERNELS = {"matrix": TableSGDKernel, "matrix_ln": LayerNormSGDKernel, "learned": AnalyticKernel}


@pytest.mark.parametrize("name", list(NESTEROV))
def test_nesterov_matches_torch_sgd_nesterov(name: str) -> None:
    cfg = TrainConfig.from_flat({**SMALL, "optimizer": "nesterov", **NESTEROV[name]})
    assert isinstance(cfg.optimizer, NesterovSGD)
    if name in KERNELS:
        assert select_kernel(cfg) is KERNELS[name]
    torch_sgd = make_optimizer(cfg, ReferenceMemory(cfg, draw_run(cfg)))
    assert isinstance(torch_sgd, torch.optim.SGD)
    assert all(group["nesterov"] for group in torch_sgd.param_groups)
    expected = reference_train(cfg)  # one nn.Module + torch.optim.SGD(nesterov=True)
    scale = 1 + expected.abs().max().item()
    for fast in (True, False):
        _, logits = run_group([cfg, cfg.with_(seed=5)], fast=fast)
        assert (logits[0] - expected).abs().max().item() <= 2e-5 * scale, (name, fast)
    _, alone = run_group([cfg])
    _, together = run_group([cfg.with_(seed=3), cfg])
    assert torch.equal(alone[0], together[1])


def test_nesterov_differs_from_heavy_ball() -> None:
    nesterov = TrainConfig.from_flat({**SMALL, "optimizer": "nesterov", "momentum": 0.9})
    heavy_ball = TrainConfig.from_flat({**SMALL, "optimizer": "sgd", "momentum": 0.9})
    _, a = run_group([nesterov])
    _, b = run_group([heavy_ball])
    assert not torch.allclose(a, b, atol=1e-3)
