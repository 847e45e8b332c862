"""What a reader would see wrong in a drawn figure: :func:`layout_problems`.

The figure is drawn (as ``savefig`` draws it) and read back in display coordinates: texts and
legends that overlap each other or the data, data points outside their axes' limits, lines
whose meaning no legend (or the caption) gives, and exponents or subscripts written in ASCII
instead of mathtext.
"""

import re
from collections.abc import Iterator
from itertools import combinations
from typing import Any, cast

import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backend_bases import RendererBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.colors import to_hex
from matplotlib.container import Container, ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from matplotlib.transforms import Bbox

__all__ = ["MARKED_OFF_AXES", "layout_problems"]

MARKED_OFF_AXES = "marked-off-axes"  # the gid of an artist whose points may leave the axes
ERRORBAR = "errorbar"  # the line style of an error bar's legend handle (it shows its bars)
SLACK = 1.0  # display pixels two boxes may share before they overlap (touching is not overlap)
# ASCII math outside $...$: an exponent, or a subscript such as d_h or x_{1} (code names too)
ASCII_MATH = re.compile(r"\^|(?<=\S)_(?=[\w{])")


def layout_problems(fig: Figure, caption: str = "") -> list[str]:
    """Every layout defect of ``fig`` as drawn, one line each (empty: none).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        A figure as returned by a figure function (before saving). It is drawn on an Agg
        canvas, which becomes its canvas.
    caption : str, default ""
        Its caption: a line without a legend entry passes when its ``gid`` is named there.

    Returns
    -------
    list of str
        One line per problem, naming the panel (its title) and the artists:

        - a text (title, axis or tick label, annotation) or legend overlapping another, or
          leaving the figure;
        - a legend or annotation inside an axes covering its data (line paths, markers, bars);
        - a plotted point outside its axes' limits (or ≤ 0 on a log axis), unless the artist's
          ``gid`` is :data:`MARKED_OFF_AXES`;
        - a line, scatter or bar series that no legend explains (its label, or a legend handle
          of its colour and line style) and whose ``gid`` the caption does not name;
        - two entries of a legend drawn alike (colour, line style and marker);
        - a text with an ASCII exponent or subscript (:math:`d^{-1}`, ``d_h``) outside ``$...$``.
    """
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # type: ignore[no-untyped-call]
    renderer = canvas.get_renderer()  # type: ignore[no-untyped-call]
    boxes = _text_boxes(fig, renderer)
    problems = _overlaps(boxes)
    page = Bbox(fig.bbox.get_points())
    problems += [f"{name}: leaves the figure" for name, box in boxes if not _inside(box, page)]
    for ax in _panels(fig):
        problems += _covers_data(ax, fig, renderer)
        problems += _off_limits(ax)
        problems += _unexplained(ax, fig, caption)
    problems += [problem for lg in _legends(fig) for problem in _alike(lg)]
    texts = [*_texts(fig), *(t for lg in _legends(fig) for t in lg.get_texts())]
    problems += [
        f"{_name(t)}: ASCII math outside $...$"
        for t in texts
        if ASCII_MATH.search(_outside_math(t.get_text()))
    ]
    return problems


def _panels(fig: Figure) -> list[Axes]:
    """The data axes (colour bars left out)."""
    return [ax for ax in fig.axes if ax.get_visible() and not hasattr(ax, "_colorbar")]


def _name(artist: Artist) -> str:
    """A short name for a message: the text, and the title of its panel."""
    ax = cast(Axes | None, artist.axes)
    where = f" [{ax.get_title() or ax.get_label() or 'panel'}]" if ax is not None else ""
    if isinstance(artist, Text):
        return f"text {artist.get_text()!r}{where}"
    if isinstance(artist, Legend):
        return f"legend{where}"
    return f"{type(artist).__name__} {artist.get_label()!r}{where}"


def _legends(fig: Figure) -> list[Legend]:
    found = [ax.get_legend() for ax in fig.axes if ax.get_visible()] + list(fig.legends)
    return [lg for lg in found if lg is not None and lg.get_visible()]


def _axes_texts(ax: Axes) -> Iterator[Text]:
    """Titles, axis labels, offset texts, the tick labels drawn, and annotations of ``ax``."""
    private = cast(Any, ax)  # the left and right titles, the ticks drawn: no public getter
    yield from (ax.title, private._left_title, private._right_title)  # noqa: SLF001
    for axis in (ax.xaxis, ax.yaxis) if ax.axison else ():  # set_axis_off: none drawn
        yield from (axis.label, axis.get_offset_text())
        for tick in cast(Any, axis)._update_ticks():  # noqa: SLF001 (the ticks within the view)
            yield from (tick.label1, tick.label2)
    yield from ax.texts


def _texts(fig: Figure) -> Iterator[Text]:
    """Every visible, non-empty text of the figure outside its legends."""
    found = [t for ax in fig.axes if ax.get_visible() for t in _axes_texts(ax)] + list(fig.texts)
    for text in found:
        if text.get_visible() and text.get_text().strip():
            yield text


def _text_boxes(fig: Figure, renderer: RendererBase) -> list[tuple[str, Bbox]]:
    """Each legend as one box, and each text outside a legend, in display coordinates."""
    boxes = [(_name(lg), lg.get_window_extent(renderer)) for lg in _legends(fig)]
    boxes += [(_name(text), text.get_window_extent(renderer)) for text in _texts(fig)]
    return boxes


def _shrunk(box: Bbox) -> Bbox:
    return Bbox.from_extents(box.x0 + SLACK, box.y0 + SLACK, box.x1 - SLACK, box.y1 - SLACK)


def _inside(box: Bbox, outer: Bbox) -> bool:
    return bool(
        box.x0 >= outer.x0 - SLACK
        and box.y0 >= outer.y0 - SLACK
        and box.x1 <= outer.x1 + SLACK
        and box.y1 <= outer.y1 + SLACK
    )


def _overlaps(boxes: list[tuple[str, Bbox]]) -> list[str]:
    return [
        f"{a} overlaps {b}"
        for (a, box_a), (b, box_b) in combinations(boxes, 2)
        if _shrunk(box_a).overlaps(_shrunk(box_b))
    ]


def _covers_data(ax: Axes, fig: Figure, renderer: RendererBase) -> list[str]:
    """Legends and annotations over ``ax`` that cover a line, a marker or a bar of it."""
    covers: list[Artist] = [*_legends(fig), *(t for t in _texts(fig) if t in ax.texts)]
    problems = []
    for artist in covers:
        inner = Bbox.intersection(_shrunk(artist.get_window_extent(renderer)), ax.bbox)
        if inner is None or inner.width <= 0 or inner.height <= 0:
            continue
        covered = [_label(a) for a in _data(ax) if _hits(a, inner)]
        if covered:
            problems.append(f"{_name(artist)} covers data: {', '.join(sorted(set(covered)))}")
    return problems


def _data(ax: Axes) -> list[Artist]:
    """The plotted data of ``ax``: lines, scatter markers and bars."""
    scatter = [c for c in ax.collections if type(c) is PathCollection]
    bars = [p for p in ax.patches if isinstance(p, Rectangle)]
    return [*(line for line in ax.lines if line.get_visible()), *scatter, *bars]


def _label(artist: Artist) -> str:
    label = str(artist.get_label())
    return label if not label.startswith("_") else type(artist).__name__


def _hits(artist: Artist, box: Bbox) -> bool:
    if isinstance(artist, Line2D):
        path = artist.get_transform().transform_path(artist.get_path())
        if artist.get_linestyle() not in ("None", "none", "", " "):
            return bool(path.intersects_bbox(box, filled=False))
        return bool(box.count_contains(path.vertices))
    if isinstance(artist, PathCollection):
        offsets = artist.get_offset_transform().transform(artist.get_offsets())
        return bool(box.count_contains(offsets))
    return bool(box.overlaps(artist.get_window_extent()))


def _off_limits(ax: Axes) -> list[str]:
    """Points of ``ax``'s lines, markers and bar ends outside its limits (or ≤ 0 on a log axis)."""
    problems = []
    for artist in _data(ax):
        if artist.get_gid() == MARKED_OFF_AXES:
            continue
        points = _points(ax, artist)
        if points is None:
            continue
        bad = ~(_within(points[:, 0], ax.get_xlim(), ax.get_xscale()))
        bad |= ~(_within(points[:, 1], ax.get_ylim(), ax.get_yscale()))
        if bad.any():
            problems.append(f"{_name(artist)}: {int(bad.sum())} point(s) outside the axes")
    return problems


def _points(ax: Axes, artist: Artist) -> np.ndarray | None:
    """The data points of an artist drawn in data coordinates (finite ones), else None."""
    if isinstance(artist, Line2D):
        if artist.get_transform() != ax.transData:
            return None  # axhline, axvline: drawn in axes coordinates along one side
        points = np.column_stack([artist.get_xdata(), artist.get_ydata()]).astype(float)
    elif isinstance(artist, PathCollection):
        points = np.asarray(artist.get_offsets(), float)
    else:  # a bar: its far end from the base
        assert isinstance(artist, Rectangle)
        x, y, w, h = artist.get_x(), artist.get_y(), artist.get_width(), artist.get_height()
        points = np.array([[x, y + h], [x + w, y + h]], float)
    return np.asarray(points[np.isfinite(points).all(axis=1)])


def _within(values: np.ndarray, limits: tuple[float, float], scale: str) -> np.ndarray:
    """True for the values inside ``limits`` (on a log scale: and > 0)."""
    low, high = sorted(limits)
    span = (np.log10(high) - np.log10(low)) if scale == "log" and low > 0 else high - low
    tol = 1e-9 * abs(span)
    if scale == "log":
        positive = values > 0
        logs = np.log10(np.where(positive, values, 1.0))
        return np.asarray(positive & (logs >= np.log10(low) - tol) & (logs <= np.log10(high) + tol))
    return np.asarray((values >= low - tol) & (values <= high + tol))


def _style(artist: Artist) -> tuple[str, str]:
    """(colour, line style) of a line, marker series or bar, as legends show them."""
    if isinstance(artist, Line2D):
        return to_hex(cast(Any, artist.get_color())), str(artist.get_linestyle())
    if isinstance(artist, PathCollection):
        colors = np.asarray(artist.get_facecolor())
        if len(colors) == 0 or colors[0][3] == 0:
            colors = np.asarray(artist.get_edgecolor())
        return (to_hex(tuple(colors[0])) if len(colors) else "none"), "None"
    if isinstance(artist, LineCollection):  # an error bar's legend handle: its bars
        return to_hex(tuple(np.asarray(artist.get_color())[0])), ERRORBAR
    assert isinstance(artist, Rectangle)
    return to_hex(cast(Any, artist.get_facecolor())), "None"


# words of a title or caption that name a line style ("dashed: theory")
STYLE_WORDS = {"dashed": "--", "dotted": ":", "dash-dot": "-.", "solid": "-"}


def _handles(legend: Legend) -> list[tuple[str, Artist]]:
    """(text, handle) of each entry; an error bar's handle is its line."""
    pairs: list[tuple[str, Artist]] = []
    for text, handle in zip(legend.get_texts(), legend.legend_handles, strict=False):
        if isinstance(handle, Container):
            handle = handle[0]
        if isinstance(handle, Line2D | PathCollection | Rectangle | LineCollection):
            pairs.append((text.get_text(), handle))
    return pairs


def _alike(legend: Legend) -> list[str]:
    """Entries of one legend whose handles look the same (colour, line style, marker)."""
    seen: dict[tuple[str, ...], str] = {}
    problems = []
    for text, handle in _handles(legend):
        if isinstance(handle, LineCollection):
            continue  # an error bar's handle shows its bars, not its line style
        marker = str(handle.get_marker()) if isinstance(handle, Line2D) else ""
        key = (*_style(handle), marker)
        if key in seen and seen[key] != text:
            problems.append(f"{_name(legend)}: {seen[key]!r} and {text!r} are drawn alike")
        seen.setdefault(key, text)
    return problems


def _explained(ax: Axes, fig: Figure, caption: str) -> tuple[set[tuple[str, ...]], set[str]]:
    """What the legends, the panel title and the caption explain for ``ax``: whole styles
    ((label, colour, line style) from any legend of the figure; (colour, line style) from the
    legend of ``ax``), and single colours and line styles (its legend; styles the title or
    caption names)."""
    own = [lg for lg in (ax.get_legend(),) if lg is not None]
    whole: set[tuple[str, ...]] = {
        (text, *_style(handle)) for lg in _legends(fig) for text, handle in _handles(lg)
    }
    styles = {_style(handle) for lg in [*own, *fig.legends] for _, handle in _handles(lg)}
    words = f"{ax.get_title()} {caption}".lower()
    named = {style for word, style in STYLE_WORDS.items() if word in words}
    return whole | styles, {c for c, _ in styles} | {s for _, s in styles} | named


def _containers(ax: Axes) -> dict[int, Container]:
    """Each artist of a bar or error-bar container, by id: its label is the container's."""
    owners = {}
    for container in ax.containers:
        for child in container.get_children():
            owners[id(child)] = container
    return owners


def _unexplained(ax: Axes, fig: Figure, caption: str) -> list[str]:
    """Lines, markers and bars of ``ax`` that neither a legend nor the caption explains: a
    legend entry of its label and style, or of its colour and line style; else its colour
    (from a legend or an explained line of the panel) and its line style (from a legend, the
    title or the caption) explained apart; else a ``gid`` the caption names."""
    whole, parts = _explained(ax, fig, caption)
    owners = _containers(ax)
    unexplained = []
    for artist in _data(ax):
        owner = owners.get(id(artist))
        if isinstance(owner, ErrorbarContainer) and artist is not owner[0]:
            continue  # an error bar's cap: explained with its line
        label = str((owner or artist).get_label())
        colour, line = _style(artist)
        if isinstance(owner, ErrorbarContainer) and (label, colour, ERRORBAR) in whole:
            parts.add(colour)
            continue
        if (label, colour, line) in whole or (colour, line) in whole:
            parts.add(colour)
        elif (artist.get_gid() or "\0") not in caption:
            unexplained.append(artist)
    problems = [
        f"{_name(a)}: no legend entry, not named in the caption"
        for a in unexplained
        if not set(_style(a)) <= parts
    ]
    return list(dict.fromkeys(problems))


def _outside_math(text: str) -> str:
    """``text`` with its ``$...$`` spans removed (an escaped ``\\$`` is a dollar sign)."""
    parts = re.split(r"(?<!\\)\$", text)
    return "".join(parts[::2])
