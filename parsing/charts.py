"""Line charts as standalone SVG strings: no plotting library, no JavaScript, no fonts to fetch.

:func:`line_chart_svg` draws a few named series of ``(x, y)`` points
(learning curves: LAS against annotated tokens, say) on "nice" axes (ticks at 1, 2 or 5
times a power of ten) with gridlines, markers that carry a tooltip, and a legend;
:func:`bar_chart_svg` draws grouped bars (a score per source, for each metric or tag). Series
names are user data, so every piece of text is XML-escaped. Colours come from the
Okabe-Ito palette, which stays distinguishable under the common colour-vision deficiencies.

Examples:
    >>> svg = line_chart_svg({"ensemble": [(100, 70.0), (200, 75.5)]},
    ...                      title="LAS", x_label="tokens", y_label="LAS (%)")
    >>> svg.startswith("<svg") and "ensemble: 200, 75.5" in svg
    True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from xml.sax.saxutils import escape

__all__ = ["OKABE_ITO", "bar_chart_svg", "line_chart_svg", "nice_ticks"]

OKABE_ITO = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#000000",  # black
    "#F0E442",  # yellow (last: faint on white)
)
"""Okabe & Ito's colour-blind-safe palette; series take colours in order, cycling."""

_MARGIN_LEFT = 64
_MARGIN_TOP = 40
_MARGIN_BOTTOM = 52
_LEGEND_WIDTH = 150
_MARGIN_RIGHT = 16
_NORMAL_STROKE = 1.75
_HIGHLIGHT_STROKE = 3.5


def _text(value: str) -> str:
    """Escape ``value`` for element content and double-quoted attributes."""
    return escape(value, {'"': "&quot;", "'": "&#39;"})


def _nice_step(span: float, target: int) -> float:
    """The 1, 2 or 5 times ``10**k`` step closest above ``span / target``."""
    raw = span / max(target, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 5.0, 10.0):
        if raw <= factor * power * (1 + 1e-9):
            return factor * power
    return 10.0 * power  # pragma: no cover - the loop always returns


def nice_ticks(low: float, high: float, target: int = 5, *, integer: bool = False) -> list[float]:
    """About ``target`` evenly spaced round ticks covering ``[low, high]``.

    The step is 1, 2 or 5 times a power of ten (at least 1 with ``integer``, for counts
    such as round numbers); the first tick is ``<= low`` and the last ``>= high``. A
    zero-width range is widened around its value.

    Examples:
        >>> nice_ticks(0.3, 9.2)
        [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        >>> nice_ticks(5, 5)
        [4.4, 4.6, 4.8, 5.0, 5.2, 5.4, 5.6]
        >>> nice_ticks(1, 2, integer=True)
        [1.0, 2.0]
    """
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError("nice_ticks needs finite bounds")
    if high < low:
        low, high = high, low
    if high == low:
        pad = abs(low) * 0.1 or 1.0
        low, high = low - pad, high + pad
    step = _nice_step(high - low, target)
    if integer:
        step = max(step, 1.0)
    first = math.floor(low / step + 1e-9)
    last = math.ceil(high / step - 1e-9)
    decimals = max(0, -math.floor(math.log10(step))) + 1
    return [round(i * step, decimals) for i in range(first, last + 1)]


def _label(value: float, ticks: Sequence[float]) -> str:
    """A tick label with as many decimals as the tick step needs."""
    step = abs(ticks[1] - ticks[0]) if len(ticks) > 1 else 1.0
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    return f"{value:,.{decimals}f}"


def _number(value: float) -> str:
    """A data value as written in a tooltip: integers without ``.0``, others up to 4 digits."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.4g}"


def _empty_svg(title: str, width: int, height: int) -> str:
    """A valid chart that says it has nothing to show."""
    t = _text(title)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{t}: no data">'
        f"<title>{t}</title>"
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>'
        f'<text x="{width / 2:.1f}" y="{height / 2:.1f}" text-anchor="middle" '
        f'font-family="sans-serif" font-size="14" fill="#555555">no data</text></svg>'
    )


def line_chart_svg(
    series: Mapping[str, Sequence[tuple[float, float]]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    width: int = 640,
    height: int = 360,
    highlight: str | None = None,
    integer_x: bool = False,
) -> str:
    """Draw named series of ``(x, y)`` points as one standalone SVG line chart.

    Args:
        series: name -> points, drawn in the mapping's order; points are sorted by x.
            Non-finite points are ignored; a series left empty is not drawn.
        title, x_label, y_label: the chart's title (also its accessible name) and axis labels.
        width, height: the SVG's size in pixels (its ``viewBox`` too).
        highlight: the name of a series to draw thicker (the ensemble, say).
        integer_x: x values are counts (rounds): ticks at whole numbers only.

    Returns:
        An ``<svg>`` element with ``xmlns``, ``viewBox``, ``role="img"``, ``aria-label`` and
        ``<title>``; every marker has a ``<title>`` tooltip ``"name: x, y"``. Without any
        finite point the chart says "no data".
    """
    if width < 200 or height < 150:
        raise ValueError(f"line_chart_svg needs width >= 200 and height >= 150, got {width}x{height}")
    drawn: list[tuple[str, list[tuple[float, float]]]] = []
    for name, points in series.items():
        finite = sorted(
            (float(x), float(y)) for x, y in points if math.isfinite(float(x)) and math.isfinite(float(y))
        )
        if finite:
            drawn.append((str(name), finite))
    if not drawn:
        return _empty_svg(title, width, height)

    xs = [x for _, points in drawn for x, _ in points]
    ys = [y for _, points in drawn for _, y in points]
    x_ticks = nice_ticks(min(xs), max(xs), integer=integer_x)
    y_ticks = nice_ticks(min(ys), max(ys))
    plot_left = _MARGIN_LEFT
    plot_top = _MARGIN_TOP
    # the legend is as wide as its longest name (about 7 px a character), within a third of the chart
    legend = min(max(_LEGEND_WIDTH, 34 + 7 * max(len(name) for name, _ in drawn)), width // 3)
    plot_right = width - legend - _MARGIN_RIGHT
    plot_bottom = height - _MARGIN_BOTTOM

    def px(x: float) -> float:
        return plot_left + (x - x_ticks[0]) / (x_ticks[-1] - x_ticks[0]) * (plot_right - plot_left)

    def py(y: float) -> float:
        return plot_bottom - (y - y_ticks[0]) / (y_ticks[-1] - y_ticks[0]) * (plot_bottom - plot_top)

    t = _text(title)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{t}" '
        f'font-family="sans-serif" font-size="11">',
        f"<title>{t}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{width / 2:.1f}" y="22" text-anchor="middle" font-size="14" font-weight="bold">{t}</text>',
        '<g class="grid" stroke="#dddddd" stroke-width="1">',
    ]
    for x in x_ticks:
        parts.append(f'<line x1="{px(x):.1f}" y1="{plot_top}" x2="{px(x):.1f}" y2="{plot_bottom}"/>')
    for y in y_ticks:
        parts.append(f'<line x1="{plot_left}" y1="{py(y):.1f}" x2="{plot_right}" y2="{py(y):.1f}"/>')
    parts.append("</g>")
    parts.append(
        f'<rect x="{plot_left}" y="{plot_top}" width="{plot_right - plot_left}" '
        f'height="{plot_bottom - plot_top}" fill="none" stroke="#666666"/>'
    )
    parts.append('<g class="x-ticks" text-anchor="middle" fill="#333333">')
    for x in x_ticks:
        parts.append(f'<text x="{px(x):.1f}" y="{plot_bottom + 16}">{_text(_label(x, x_ticks))}</text>')
    parts.append("</g>")
    parts.append('<g class="y-ticks" text-anchor="end" fill="#333333">')
    for y in y_ticks:
        parts.append(f'<text x="{plot_left - 6}" y="{py(y) + 4:.1f}">{_text(_label(y, y_ticks))}</text>')
    parts.append("</g>")
    parts.append(
        f'<text x="{(plot_left + plot_right) / 2:.1f}" y="{height - 12}" text-anchor="middle" '
        f'font-size="12">{_text(x_label)}</text>'
    )
    middle_y = (plot_top + plot_bottom) / 2
    parts.append(
        f'<text x="16" y="{middle_y:.1f}" text-anchor="middle" font-size="12" '
        f'transform="rotate(-90 16 {middle_y:.1f})">{_text(y_label)}</text>'
    )

    legend_x = plot_right + 14
    for index, (name, points) in enumerate(drawn):
        colour = OKABE_ITO[index % len(OKABE_ITO)]
        # past the palette, colours repeat: a dash pattern per cycle keeps the lines apart
        dash = "" if index < len(OKABE_ITO) else f' stroke-dasharray="{6 * (index // len(OKABE_ITO))},3"'
        stroke = _HIGHLIGHT_STROKE if name == highlight else _NORMAL_STROKE
        radius = 4.0 if name == highlight else 3.0
        label = _text(name)
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in points)
        parts.append(f'<g class="series" data-series="{label}">')
        parts.append(
            f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="{stroke}" '
            f'stroke-linejoin="round"{dash}/>'
        )
        for x, y in points:
            parts.append(
                f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="{radius}" fill="{colour}">'
                f"<title>{label}: {_number(x)}, {_number(y)}</title></circle>"
            )
        parts.append("</g>")
        row_y = plot_top + 8 + index * 18
        weight = ' font-weight="bold"' if name == highlight else ""
        parts.append(
            f'<g class="legend-item"><line x1="{legend_x}" y1="{row_y}" x2="{legend_x + 18}" '
            f'y2="{row_y}" stroke="{colour}" stroke-width="{stroke}"{dash}/>'
            f'<circle cx="{legend_x + 9}" cy="{row_y}" r="{radius}" fill="{colour}"/>'
            f'<text x="{legend_x + 24}" y="{row_y + 4}"{weight}>{label}</text></g>'
        )
    parts.append("</svg>")
    return "\n".join(parts)


def bar_chart_svg(
    groups: Mapping[str, Mapping[str, float | None]],
    *,
    title: str,
    y_label: str,
    width: int = 760,
    height: int = 320,
    highlight: str | None = None,
    colours: Mapping[str, str] | None = None,
) -> str:
    """Draw grouped vertical bars: one group per key of ``groups``, one bar per series in it.

    Args:
        groups: group name (a metric, a tag) -> series name (a source) -> value; None or a
            non-finite value leaves a gap. Series keep the order of first appearance and the
            same colour in every group.
        title, y_label: the chart's title (its accessible name) and the y axis label.
        width, height: the SVG's size in pixels.
        highlight: a series drawn with a black outline (the ensemble, say).
        colours: a colour per series name (so several charts colour a source alike); others
            take the palette's colours in order.

    Returns:
        An ``<svg>`` like :func:`line_chart_svg`'s; every bar has a ``<title>`` tooltip
        ``"series, group: value"``. The y axis starts at 0 unless a value is negative.

    Examples:
        >>> svg = bar_chart_svg({"LAS": {"a": 80.0, "b": 75.25}}, title="Scores", y_label="%")
        >>> "b, LAS: 75.25" in svg and svg.count("<rect") == 5
        True
    """
    if width < 200 or height < 150:
        raise ValueError(f"bar_chart_svg needs width >= 200 and height >= 150, got {width}x{height}")
    series = list(dict.fromkeys(name for values in groups.values() for name in values))
    fill = {name: (colours or {}).get(name) or OKABE_ITO[i % len(OKABE_ITO)] for i, name in enumerate(series)}
    values = [float(v) for bars in groups.values() for v in bars.values()
              if v is not None and math.isfinite(float(v))]
    if not values:
        return _empty_svg(title, width, height)
    ticks = nice_ticks(min(0.0, *values), max(values))
    legend = min(max(_LEGEND_WIDTH, 34 + 7 * max(len(name) for name in series)), width // 3)
    left, top = _MARGIN_LEFT, _MARGIN_TOP
    right, bottom = width - legend - _MARGIN_RIGHT, height - _MARGIN_BOTTOM

    def py(y: float) -> float:
        return bottom - (y - ticks[0]) / (ticks[-1] - ticks[0]) * (bottom - top)

    t = _text(title)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{t}" font-family="sans-serif" font-size="11">',
        f"<title>{t}</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{width / 2:.1f}" y="22" text-anchor="middle" font-size="14" font-weight="bold">{t}</text>',
        '<g class="grid" stroke="#dddddd" stroke-width="1">',
        *(f'<line x1="{left}" y1="{py(y):.1f}" x2="{right}" y2="{py(y):.1f}"/>' for y in ticks),
        "</g>",
        '<g class="y-ticks" text-anchor="end" fill="#333333">',
        *(f'<text x="{left - 6}" y="{py(y) + 4:.1f}">{_text(_label(y, ticks))}</text>' for y in ticks),
        "</g>",
    ]
    slot = (right - left) / len(groups)
    bar = max(1.0, min(28.0, (slot - 8) / max(len(series), 1)))
    for index, (group, bars) in enumerate(groups.items()):
        start = left + index * slot + (slot - bar * len(series)) / 2
        parts.append(f'<g class="bar-group" data-group="{_text(group)}">')
        for position, name in enumerate(series):
            value = bars.get(name)
            if value is None or not math.isfinite(float(value)):
                continue
            y0, y1 = sorted((py(0.0), py(float(value))))
            outline = ' stroke="#000000" stroke-width="1.5"' if name == highlight else ""
            parts.append(
                f'<rect x="{start + position * bar:.1f}" y="{y0:.1f}" width="{bar:.1f}" '
                f'height="{max(y1 - y0, 0.5):.1f}" fill="{fill[name]}"{outline}>'
                f"<title>{_text(name)}, {_text(group)}: {_number(float(value))}</title></rect>")
        parts.append(f'<text x="{left + (index + 0.5) * slot:.1f}" y="{bottom + 16}" text-anchor="middle">'
                     f"{_text(group)}</text></g>")
    parts.append(f'<line x1="{left}" y1="{py(0.0):.1f}" x2="{right}" y2="{py(0.0):.1f}" stroke="#666666"/>')
    middle = (top + bottom) / 2
    parts.append(f'<text x="16" y="{middle:.1f}" text-anchor="middle" font-size="12" '
                 f'transform="rotate(-90 16 {middle:.1f})">{_text(y_label)}</text>')
    for position, name in enumerate(series):
        row_y = top + 8 + position * 18
        weight = ' font-weight="bold"' if name == highlight else ""
        parts.append(f'<g class="legend-item"><rect x="{right + 14}" y="{row_y - 6}" width="12" height="12" '
                     f'fill="{fill[name]}"/>'
                     f'<text x="{right + 32}" y="{row_y + 4}"{weight}>{_text(name)}</text></g>')
    parts.append("</svg>")
    return "\n".join(parts)
