"""The :class:`Experiment` schema: one paper figure, table or study of ``assocmem reproduce``.

An experiment names the sweeps it reads (per scale), the claims it judges, and how it draws its
figure or table from the stored records. :mod:`assocmem.experiments.registry` lists them;
``reproduce`` loops over that list. Adding a study = one module defining an ``Experiment`` and
one line in the registry.

Sweeps are written as the tables of a sweep spec (``kind``, ``trials`` or ``seeds``, ``base``,
``axes``, ``zip``; see :mod:`assocmem.sweep.spec`), without a name or device: ``reproduce`` names
each ``NAME-SCALE`` and sets the device.
"""

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from assocmem.config.errors import ConfigError
from assocmem.config.files import load_toml
from assocmem.experiments.frames import StoredFrames
from assocmem.experiments.measure import at_quick_scale, scale_z
from assocmem.experiments.tolerances import tolerance_tables
from assocmem.report import Claim, Table
from assocmem.rng import stream_seed
from assocmem.sweep.spec import SweepSpec, parse_spec, shipped_specs

SCALES = ("quick", "full")
NO_MARGIN = "no margin derived for this claim yet"  # a claim whose judge gives none
RawSpec = dict[str, Any]  # the tables of a sweep spec: kind, trials | seeds, base, axes, zip
Judge = Callable[[Any, str], Claim]  # (record frames named as the sweeps, scale) -> Claim
# Closed-form trials per point at each scale (the paper's: 100).
TRIALS = {"quick": 20, "full": 100}
# Training: the grid's d values and seeds per scale, and the authors' N = 100, M = 5, α = 2.
TRAIN_DIMS = {"quick": [10, 100, 1000], "full": [10, 20, 50, 100, 200, 500, 1000]}
TRAIN_SEEDS = {"quick": 3, "full": 10}
TRAIN_BASE = {"n_inputs": 100, "n_outputs": 5, "alpha": 2.0}


@dataclass(frozen=True)
class Context:
    """What an experiment draws from: the stored frames of the selected sweeps, the output
    folder (for caches such as the Figure 8 geometry), the scale and the parsed specs."""

    frames: StoredFrames
    out: Path
    scale: str
    specs: dict[str, SweepSpec]


def no_sweeps(scale: str) -> dict[str, RawSpec]:
    """The sweeps of an experiment that computes directly (pure arithmetic, one picture)."""
    return {}


@dataclass(frozen=True)
class Experiment:
    """One paper figure, table or study.

    Attributes
    ----------
    name : the report anchor, the figure's file stem and each claim's ``figure`` ("figure-4").
    title, caption : shown in the report.
    item : the ``reproduce --only`` item that draws it ("4", "memory", "beyond"), or None for an
        experiment that only judges claims (run under the "claims" item).
    sweeps : scale → the sweeps it reads, by name (the frames its draw and claims read).
    claims : claim id → judge; judged under the "claims" item (paper experiments only).
    draw, table : its figure and/or table, from a :class:`Context`.
    settings : the settings shown under the figure (default: its sweeps' specs).
    check : what its analysis needs of the parsed sweeps beyond each point's own validity
        (e.g. two d to fit a slope), raised as one ConfigError before anything runs.
    """

    name: str
    title: str
    caption: str
    item: str | None
    sweeps: Callable[[str], dict[str, RawSpec]] = no_sweeps
    claims: Mapping[str, Judge] = field(default_factory=dict)
    draw: Callable[[Context], Figure] | None = None
    table: Callable[[Context], Table] | None = None
    settings: Callable[[Context], Any] | None = None
    check: Callable[[Mapping[str, SweepSpec]], None] | None = None

    def specs(self, scale: str, device: str, seed: int = 0) -> dict[str, SweepSpec]:
        """Its sweeps at ``scale``, parsed, named ``NAME-SCALE``, on ``device``; their seeds
        derived from ``seed`` (:func:`reseeded`; 0: as written)."""
        return self.checked(parse_sweeps(self.sweeps(scale), scale, device, seed))

    def checked(self, specs: dict[str, SweepSpec]) -> dict[str, SweepSpec]:
        """``specs``, once :attr:`check` accepts them."""
        if self.check is not None:
            self.check(specs)
        return specs

    def judge(self, frames: Any, scale: str, only: Collection[str] | None = None) -> list[Claim]:
        """Its claims (those of ``only`` if given), measured on ``frames``, judged at ``scale``."""
        claims = []
        for claim_id, judge in self.claims.items():
            if only is not None and claim_id not in only:
                continue
            claim = judge(frames, scale)
            if claim.id != claim_id:
                raise ValueError(f"{self.name}: claim {claim_id!r} was judged as {claim.id!r}")
            if claim.margin_se is None and not claim.margin_note:
                claim = replace(claim, margin_note=NO_MARGIN)
            claim = quick_verdict(claim, scale)
            claims.append(replace(claim, figure=self.name, **tolerance_history(claim_id)))
        return claims

    def figure_settings(self, ctx: Context) -> Any:
        """The settings shown under the figure: one sweep's spec, or each sweep's by name."""
        if self.settings is not None:
            return self.settings(ctx)
        specs = {name: ctx.specs[name] for name in self.sweeps(ctx.scale)}
        shown = {name: _shown(spec) for name, spec in specs.items()}
        return next(iter(shown.values())) if len(shown) == 1 else shown


def need_distinct(field: str, values: Collection[Any], count: int, why: str) -> None:
    """A ConfigError naming ``field`` unless ``values`` hold at least ``count`` distinct ones:
    what an :attr:`Experiment.check` raises when its analysis needs more than the settings give
    (two d to fit a slope, two H to compare)."""
    if len(set(values)) < count:
        shown = sorted(set(values), key=str)
        raise ConfigError(field, f"give at least {count} distinct values {why}, got {shown}")


def parse_sweeps(
    raws: Mapping[str, RawSpec], scale: str, device: str, seed: int = 0
) -> dict[str, SweepSpec]:
    """Sweeps given as raw tables by name, parsed, each named ``NAME-SCALE`` (``NAME-SCALE-sS``
    for a seed S ≠ 0), on ``device``, reseeded from ``seed`` (:func:`reseeded`)."""
    specs = {}
    for name, written in raws.items():
        raw = reseeded(written, name, seed)
        label = f"{name}-{scale}" + (f"-s{seed}" if seed else "")
        table = {**raw, "name": label, "base": {**raw["base"], "device": device}}
        specs[name] = parse_spec(table, source=f"reproduce:{name}")
    return specs


SEED_SPAN = 2**31  # derived base seeds lie in [0, SEED_SPAN): every kernel takes them


def reseeded(raw: RawSpec, name: str, seed: int) -> RawSpec:
    """The sweep ``raw`` (named ``name``) under the reproduction's ``seed``: 0 leaves it as
    written; otherwise its base seed becomes ``stream_seed(seed, "reproduce", name)`` (a
    stable hash, :mod:`assocmem.rng`) plus the seed it had, and each listed seed (``seeds``, or
    a seed axis) moves by the same amount, so no run is shared between two values of ``seed``.

    Parameters
    ----------
    raw : dict
        The tables of a sweep spec (``base``, ``axes``, ``zip``, ``seeds`` or ``trials``).
    name : str
        The sweep's name (its experiment's frame name, e.g. "figure4").
    seed : int
        The reproduction's seed S ≥ 0.

    Returns
    -------
    dict
        A new raw spec (``raw`` itself when ``seed`` is 0).
    """
    if seed == 0:
        return raw
    shift = stream_seed(seed, "reproduce", name) % SEED_SPAN
    out = {**raw, "base": dict(raw["base"])}
    for table in ("axes", "zip"):
        if "seed" in raw.get(table, {}):
            out[table] = {**raw[table], "seed": [shift + s for s in raw[table]["seed"]]}
    if "seeds" in raw:
        seeds = raw["seeds"]
        out["seeds"] = [shift + s for s in (range(seeds) if isinstance(seeds, int) else seeds)]
    elif "seed" not in out.get("axes", {}) and "seed" not in out.get("zip", {}):
        out["base"]["seed"] = shift + int(raw["base"].get("seed", 0))
    return out


def _shown(spec: SweepSpec) -> dict[str, Any]:
    if spec.kind == "closed_form":
        return spec.base | {"trials": spec.trials}
    return spec.base | spec.axes | spec.zipped


def quick_verdict(claim: Claim, scale: str) -> Claim:
    """``claim`` judged at ``scale``: at the quick scale, a tolerance table with ``quick_z``
    lets the claim stand where its margin is at least ``−quick_z`` s.e.
    (:func:`~assocmem.experiments.measure.at_quick_scale`): within its tolerance a pass, outside
    it "not refuted at this scale" (``in_band``); the note says so where the tolerance does not
    already show the widening."""
    table = tolerance_tables().get(claim.id)
    z = scale_z(table.values, scale) if table is not None else 0.0
    if not z:
        return claim
    passed = at_quick_scale(claim.passed, claim.margin_se, z)
    in_band = bool(passed) and claim.margin_se is not None and claim.margin_se < 0
    if f"{z:g} s.e." in claim.tolerance:  # the judge widened its tolerance itself
        return replace(claim, passed=passed, in_band=in_band)
    rule = f"quick scale: not refuted within {z:g} s.e. outside the tolerance (quick_z)"
    note = "; ".join(n for n in (claim.note, rule) if n)
    return replace(claim, passed=passed, in_band=in_band, note=note)


def tolerance_history(claim_id: str) -> dict[str, Any]:
    """The ``tolerance_since`` and ``revisions`` of a claim's tolerance (none without a table)."""
    table = tolerance_tables().get(claim_id)
    if table is None:
        return {}
    return {
        "tolerance_since": table.since,
        "revisions": [revision.to_dict() for revision in table.revisions],
    }


def claim_order(claim_id: str) -> tuple[bool, str]:
    """Sort key of the paper's order: the closed-form claims 1–8, then the findings §4.1, …"""
    return claim_id.startswith("§"), claim_id


def shipped_sweep(name: str) -> RawSpec:
    """A spec shipped in ``assocmem/specs`` (``assocmem sweep specs``) as its raw tables: the one
    source of that figure's settings."""
    path = shipped_specs().get(name)
    if path is None:
        raise ConfigError("spec", f"no shipped spec {name!r}")
    return load_toml(path)


def closed_form_sweep(
    base: Mapping[str, Any], scale: str, trials: Mapping[str, int] = TRIALS
) -> RawSpec:
    """A closed-form sweep of one config (lists of schemes, dims, T) with ``trials[scale]``.

    The reproduction draws explicit embeddings unless ``base`` names another sampler: its stored
    runs (and so the paper's numbers) were computed that way, and stay valid."""
    return {"kind": "closed_form", "trials": trials[scale], "base": {"sampler": "explicit", **base}}


def training_sweep(part: Mapping[str, Any], scale: str) -> RawSpec:
    """A training sweep: ``part`` gives ``base`` and ``axes`` (over :data:`TRAIN_BASE` and the
    d values of :data:`TRAIN_DIMS`), and optionally ``zip`` and ``seeds`` per scale."""
    axes = {"dim": TRAIN_DIMS[scale], **part["axes"]}
    varied = {*axes, *part.get("zip", {})}
    base = {k: v for k, v in {**TRAIN_BASE, **part["base"]}.items() if k not in varied}
    seeds = part.get("seeds", TRAIN_SEEDS)[scale]
    raw = {"kind": "train", "seeds": seeds, "base": base, "axes": axes}
    return raw | ({"zip": part["zip"]} if "zip" in part else {})
