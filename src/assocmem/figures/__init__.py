"""Paper-style figures. Figures are functions of stored records only: they never compute.

Each function takes a tidy :class:`pandas.DataFrame` (one row per trial, as given by
``ClosedFormResult.to_frame()`` or :func:`frame_from_records`) and returns a matplotlib Figure;
:func:`layout_problems` lists what a reader would see wrong in one as drawn.
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
from assocmem.figures.layout import layout_problems
from assocmem.figures.requirements import check_figure_frame

__all__ = [
    "FIGURES",
    "check_figure_frame",
    "figure1",
    "figure3",
    "figure4",
    "frame_from_records",
    "layout_problems",
    "memory_matrices",
    "save",
]
