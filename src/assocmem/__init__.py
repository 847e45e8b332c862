"""assocmem: scaling laws for associative memories (Cabannes, Dohmatob, Bietti, ICLR 2024).

Top-level names are loaded on first use (PEP 562), so ``import assocmem`` stays light.
"""

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_LAZY = {
    "ClosedFormConfig": "assocmem.closed_form",
    "run_closed_form": "assocmem.closed_form",
}
__all__ = ["ClosedFormConfig", "__version__", "run_closed_form"]  # the names of _LAZY

if TYPE_CHECKING:
    from assocmem.closed_form import ClosedFormConfig, run_closed_form


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'assocmem' has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name]), name)
