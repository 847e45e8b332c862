"""Record frames of the sweeps an experiment reads, from the results database."""

from pathlib import Path

import pandas as pd

from assocmem.sweep.plan import expand_runs
from assocmem.sweep.results import load_curves, result_rows
from assocmem.sweep.spec import SweepSpec


class StoredFrames:
    """Record frames of each sweep, read from the database: ``frames.figure4`` etc. (named as
    the sweeps, as the claims expect), and error curves through :meth:`curves`."""

    def __init__(self, db: Path, specs: dict[str, SweepSpec]) -> None:
        self.db = db
        rows = result_rows(db)
        self.all = pd.DataFrame(rows)
        self.keys = {name: {run.key for run in expand_runs(spec)} for name, spec in specs.items()}
        # each frame from its own rows: its columns keep their types whatever else the
        # database holds (rows of other kinds, lacking a field, made integer columns float)
        self.frames = {
            name: self._select(pd.DataFrame([r for r in rows if r["hash"] in keys]), keys)
            for name, keys in self.keys.items()
        }
        self._curves: pd.DataFrame | None = None

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
        try:
            frame: pd.DataFrame = self.__dict__["frames"][name]
            return frame
        except KeyError:
            raise AttributeError(name) from None
