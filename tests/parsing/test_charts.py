"""The dependency-free SVG line chart: valid XML, escaped text, round ticks, one line per series."""

from __future__ import annotations

import doctest
import math
import xml.etree.ElementTree as ET

import pytest

from parsing import charts
from parsing.charts import OKABE_ITO, line_chart_svg, nice_ticks

SVG = "{http://www.w3.org/2000/svg}"

CURVES = {
    "ensemble": [(120.0, 61.5), (240.0, 66.25), (360.0, 70.0)],
    "graph1": [(120.0, 55.0), (240.0, 60.0), (360.0, 63.5)],
    "eager": [(360.0, 58.0), (120.0, 50.0), (240.0, 54.0)],  # unsorted on purpose
}


def _parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def _tick_values(root: ET.Element, group: str) -> list[float]:
    found = root.find(f".//{SVG}g[@class='{group}']")
    assert found is not None
    return [float((text.text or "").replace(",", "")) for text in found.iter(f"{SVG}text")]


def test_chart_is_well_formed_accessible_svg() -> None:
    svg = line_chart_svg(CURVES, title="Dev LAS", x_label="annotated tokens", y_label="LAS (%)")
    root = _parse(svg)
    assert root.tag == f"{SVG}svg"
    assert root.get("viewBox") == "0 0 640 360"
    assert root.get("role") == "img"
    assert root.get("aria-label") == "Dev LAS"
    title = root.find(f"{SVG}title")
    assert title is not None and title.text == "Dev LAS"


def test_one_polyline_and_one_marker_per_point_for_each_nonempty_series() -> None:
    series = {**CURVES, "empty": [], "nan only": [(1.0, float("nan"))]}
    root = _parse(line_chart_svg(series, title="t", x_label="x", y_label="y"))
    polylines = list(root.iter(f"{SVG}polyline"))
    assert len(polylines) == 3
    groups = root.findall(f".//{SVG}g[@class='series']")
    assert [g.get("data-series") for g in groups] == ["ensemble", "graph1", "eager"]
    for group, points in zip(groups, CURVES.values(), strict=True):
        assert len(group.findall(f"{SVG}circle")) == len(points)
    colours = [line.get("stroke") for line in polylines]
    assert colours == list(OKABE_ITO[:3])


def test_markers_carry_tooltips_and_points_are_drawn_left_to_right() -> None:
    root = _parse(line_chart_svg(CURVES, title="t", x_label="x", y_label="y"))
    eager = root.find(f".//{SVG}g[@data-series='eager']")
    assert eager is not None
    tooltips = [circle.findtext(f"{SVG}title") for circle in eager.iter(f"{SVG}circle")]
    assert tooltips == ["eager: 120, 50", "eager: 240, 54", "eager: 360, 58"]
    polyline = eager.find(f"{SVG}polyline")
    assert polyline is not None
    xs = [float(pair.split(",")[0]) for pair in (polyline.get("points") or "").split()]
    assert xs == sorted(xs)


def test_hostile_names_and_labels_are_escaped() -> None:
    hostile = '<script>alert("x")</script> & co'
    svg = line_chart_svg(
        {hostile: [(1.0, 2.0), (2.0, 3.0)]}, title="<b>title</b>", x_label="a<b", y_label='"y"'
    )
    assert "<script>" not in svg
    assert "<b>" not in svg
    root = _parse(svg)
    assert root.get("aria-label") == "<b>title</b>"
    group = root.find(f".//{SVG}g[@class='series']")
    assert group is not None and group.get("data-series") == hostile
    legend_texts = [t.text for t in root.iter(f"{SVG}text")]
    assert hostile in legend_texts
    assert "a<b" in legend_texts and '"y"' in legend_texts


def test_ticks_cover_the_data_range_with_round_steps() -> None:
    root = _parse(line_chart_svg(CURVES, title="t", x_label="x", y_label="y"))
    xs = [x for points in CURVES.values() for x, _ in points]
    ys = [y for points in CURVES.values() for _, y in points]
    for values, group in ((xs, "x-ticks"), (ys, "y-ticks")):
        ticks = _tick_values(root, group)
        assert ticks[0] <= min(values) and ticks[-1] >= max(values)
        steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:], strict=False)}
        assert len(steps) == 1


@pytest.mark.parametrize(
    ("low", "high"), [(0.3, 9.2), (63.21, 78.9), (0.0, 123456.0), (-0.003, 0.0071), (1200.0, 1200.0)]
)
def test_nice_ticks_use_one_two_or_five_times_a_power_of_ten(low: float, high: float) -> None:
    ticks = nice_ticks(low, high)
    assert ticks[0] <= low and ticks[-1] >= high
    assert 3 <= len(ticks) <= 11
    step = ticks[1] - ticks[0]
    mantissa = step / 10 ** math.floor(math.log10(step))
    assert min(abs(mantissa - m) for m in (1.0, 2.0, 5.0)) < 1e-6


def test_highlighted_series_is_thicker() -> None:
    root = _parse(line_chart_svg(CURVES, title="t", x_label="x", y_label="y", highlight="ensemble"))
    widths = {
        g.get("data-series"): float(g.find(f"{SVG}polyline").get("stroke-width"))  # type: ignore[union-attr,arg-type]
        for g in root.findall(f".//{SVG}g[@class='series']")
    }
    assert widths["ensemble"] > widths["graph1"] == widths["eager"]


def test_empty_input_is_a_valid_svg_saying_no_data() -> None:
    empty: list[dict[str, list[tuple[float, float]]]] = [{}, {"a": []}]
    for series in empty:
        root = _parse(line_chart_svg(series, title="Empty", x_label="x", y_label="y"))
        assert root.get("role") == "img"
        assert "no data" in [t.text for t in root.iter(f"{SVG}text")]
        assert not list(root.iter(f"{SVG}polyline"))


def test_single_point_gives_a_usable_axis() -> None:
    root = _parse(line_chart_svg({"only": [(50.0, 70.0)]}, title="t", x_label="x", y_label="y"))
    ticks = _tick_values(root, "y-ticks")
    assert ticks[0] < 70.0 < ticks[-1]


def test_doctests() -> None:
    assert doctest.testmod(charts).failed == 0


def test_integer_axis_ticks_at_whole_numbers_only() -> None:
    svg = line_chart_svg({"ensemble": [(1, 60.0), (2, 63.0)]}, title="t", x_label="round", y_label="LAS",
                         integer_x=True)
    ns = "{http://www.w3.org/2000/svg}"
    group = next(g for g in ET.fromstring(svg).iter(f"{ns}g") if g.get("class") == "x-ticks")
    assert [t.text for t in group.iter(f"{ns}text")] == ["1", "2"]


def test_series_past_the_palette_are_dashed_apart() -> None:
    series = {f"s{i}": [(0.0, float(i)), (1.0, float(i + 1))] for i in range(len(OKABE_ITO) + 2)}
    ns = "{http://www.w3.org/2000/svg}"
    svg = ET.fromstring(line_chart_svg(series, title="t", x_label="x", y_label="y"))
    lines = list(svg.iter(f"{ns}polyline"))
    styles = [(line.get("stroke"), line.get("stroke-dasharray")) for line in lines]
    assert len(set(styles)) == len(series)  # colour and dash tell every line apart
    assert all(dash is None for _, dash in styles[: len(OKABE_ITO)])
