"""Figure captions as HTML: their text escaped, their formulas (``$…$``, matplotlib's mathtext)
typeset into embedded SVG images, so that a caption writes $d^{-1/4}$, never ``d^(−1/4)``."""

import base64
import functools
import io
import re

from matplotlib import rc_context
from matplotlib.figure import Figure

from assocmem.report.markup import esc

MATH = re.compile(r"\$([^$]+)\$")  # a caption's formulas, in matplotlib's mathtext ($d^{-1/4}$)


@functools.cache
def _math_image(tex: str) -> str:
    """One formula typeset by matplotlib's mathtext, as an embedded SVG image (its TeX the
    alt text); the same formula gives the same bytes (no date, a fixed id salt)."""
    fig = Figure()
    fig.text(0, 0, f"${tex}$", fontsize=11)
    buffer = io.BytesIO()
    with rc_context({"svg.hashsalt": "assocmem", "svg.fonttype": "path"}):
        fig.savefig(buffer, format="svg", bbox_inches="tight", pad_inches=0.02,
                    transparent=True, metadata={"Date": None})  # fmt: skip
    data = base64.b64encode(buffer.getvalue()).decode()
    return f'<img class="math" alt="{esc(tex)}" src="data:image/svg+xml;base64,{data}">'


def caption_html(caption: str) -> str:
    """A caption as HTML: its text escaped, each ``$…$`` formula typeset by mathtext."""
    parts = MATH.split(caption)  # text, formula, text, …
    return "".join(_math_image(p) if i % 2 else esc(p) for i, p in enumerate(parts))
