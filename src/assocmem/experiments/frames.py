"""Record frames of the sweeps an experiment reads, from the results database."""

from collections.abc import Callable, Collection
from pathlib import Path

import pandas as pd

from assocmem.sweep.plan import expand_runs
from assocmem.sweep.results import load_curves, result_rows
from assocmem.sweep.spec import SweepSpec


class StoredFrames:
    """Record frames of each sweep, read from the database: ``frames.figure4`` etc. (named as
    the sweeps, as the claims expect), and error curves through :meth:`curves`."""

    def __init__(
        self,
        db: Path,
        specs: dict[str, SweepSpec],
        run: Callable[[str], object] | None = None,
    ) -> None:
        self.db = db
        self.keys = {name: {r.key for r in expand_runs(spec)} for name, spec in specs.items()}
        self._run = run  # None: every sweep is stored already; else run one on its first read
        self.frames: dict[str, pd.DataFrame] = {}
        if run is None:
            self._read(self.keys)
        self._curves: pd.DataFrame | None = None

    def _read(self, names: Collection[str]) -> None:
        """The frames of ``names`` from the database, each from its own rows: its columns keep
        their types whatever else the database holds (rows of other kinds, lacking a field,
        made integer columns float)."""
        rows = result_rows(self.db)
        self.all = pd.DataFrame(rows)
        for name in names:
            keys = self.keys[name]
            self.frames[name] = self._select(
                pd.DataFrame([r for r in rows if r["hash"] in keys]), keys
            )

    @staticmethod
    def _select(frame: pd.DataFrame, keys: set[str]) -> pd.DataFrame:
        if frame.empty:
            return frame
        return frame[frame["hash"].isin(keys)].dropna(axis=1, how="all").reset_index(drop=True)

    def curves(self, name: str) -> pd.DataFrame:
        """The error-along-training rows of one training sweep's runs."""
        if self._curves is None:
            self._curves = load_curves(self.db)
        return self._select(self._curves, self.keys[name])

    def __getattr__(self, name: str) -> pd.DataFrame:
        frames = self.__dict__.get("frames", {})
        run = self.__dict__.get("_run")
        if name not in frames and run is not None and name in self.__dict__["keys"]:
            run(name)
            self._read([name])
        try:
            frame: pd.DataFrame = frames[name]
            return frame
        except KeyError:
            raise AttributeError(name) from None
