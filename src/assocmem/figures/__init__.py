"""Paper-style figures. Figures are functions of stored records only: they never compute.

Each function takes a tidy :class:`pandas.DataFrame` (one row per trial, as given by
``ClosedFormResult.to_frame()`` or :func:`frame_from_records`) and returns a matplotlib Figure.
"""

from assocmem.figures.closed_form import (
    FIGURES,
    figure1,
    figure3,
    figure4,
    frame_from_records,
    memory_matrices,
    save,
)

__all__ = [
    "FIGURES",
    "figure1",
    "figure3",
    "figure4",
    "frame_from_records",
    "memory_matrices",
    "save",
]
