"""A tree as a figure: tikz-dependency LaTeX (escaping, the root edge) and standalone SVG."""

from __future__ import annotations

import doctest
import re
import xml.etree.ElementTree as ET

import pytest

from parsing import figures
from parsing.figures import latex_escape, tikz_dependency, tree_svg

SVG = "{http://www.w3.org/2000/svg}"


def test_the_module_examples() -> None:
    assert doctest.testmod(figures).failed == 0


def test_tikz_dependency_has_one_edge_per_word_and_the_root_as_deproot() -> None:
    latex = tikz_dependency(["They", "saw", "it", "."], [2, 0, 2, 2], ["nsubj", "root", "obj", "punct"],
                            tags=["PRON", "VERB", "PRON", "PUNCT"])
    lines = latex.splitlines()
    assert lines[1] == "\\begin{dependency}" and lines[-1] == "\\end{dependency}"
    assert "    They \\& saw \\& it \\& . \\\\" in lines
    assert "    PRON \\& VERB \\& PRON \\& PUNCT \\\\" in lines
    assert [line.strip() for line in lines if line.strip().startswith(("\\depedge", "\\deproot"))] == [
        "\\deproot{2}{root}", "\\depedge{2}{1}{nsubj}", "\\depedge{2}{3}{obj}", "\\depedge{2}{4}{punct}"]


def test_latex_specials_are_escaped_in_words_and_labels() -> None:
    forms = ["50%", "$5", "a_b", "{x}", "#1", "~", "^", "C:\\dir", "R&D"]
    heads = [0, *([1] * 8)]
    labels = ["root", "obl:tmod", "x_y", "dep", "dep", "dep", "dep", "dep", "a&b"]
    latex = tikz_dependency(forms, heads, labels)
    deptext = latex.split("\\begin{deptext}[column sep=0.6em]\n")[1].split("\n")[0]
    cells = [cell.strip() for cell in deptext.removesuffix("\\\\").split(" \\& ")]
    assert cells == ["50\\%", "\\$5", "a\\_b", "\\{x\\}", "\\#1", "\\textasciitilde{}", "\\textasciicircum{}",
                     "C:\\textbackslash{}dir", "R{\\char38}D"]  # \& would start a new column
    assert "\\depedge{1}{3}{x\\_y}" in latex and "\\depedge{1}{9}{a\\&b}" in latex
    assert "\\depedge{1}{2}{obl:tmod}" in latex
    # with the escapes and the column separators taken out, no special character is left
    escapes = r"\\(textbackslash\{\}|textasciitilde\{\}|textasciicircum\{\}|[{}$&#_%\\])|\{\\char38\}"
    body = re.sub(escapes, "", deptext)
    assert not set(body) & set("\\{}$&#_%~^"), body
    assert latex_escape("plain words") == "plain words"


def test_bad_trees_are_refused_naming_the_word() -> None:
    with pytest.raises(ValueError, match="one entry per word"):
        tikz_dependency(["a", "b"], [0], ["root"])
    with pytest.raises(ValueError, match="word 2: head 5"):
        tree_svg(["a", "b"], [0, 5], ["root", "dep"])
    with pytest.raises(ValueError, match="word 1: head 1"):
        tikz_dependency(["a"], [1], ["root"])


def test_svg_is_well_formed_with_an_arc_per_word_nested_by_span() -> None:
    forms = ["The", "<big>", "cat", "sat", "&", "slept"]
    heads = [3, 3, 4, 0, 6, 4]
    svg = tree_svg(forms, heads, ["det", "amod", "nsubj", "root", "cc", "conj"],
                   tags=["DET", "ADJ", "NOUN", "VERB", "CCONJ", "VERB"])
    root = ET.fromstring(svg)  # escaped text: parses as XML
    arcs = root.findall(f"{SVG}g[@class='arc']")
    assert sorted(int(arc.get("data-dep", "0")) for arc in arcs) == [1, 2, 3, 4, 5, 6]
    assert [t.text for t in root.findall(f"{SVG}text[@class='form']")] == forms
    assert [t.text for t in root.findall(f"{SVG}text[@class='tag']")][:2] == ["DET", "ADJ"]
    labels = {int(arc.get("data-dep", "0")): arc.find(f"{SVG}text") for arc in arcs}
    assert labels[4] is not None and labels[4].text == "root"

    def top(dep: int) -> float:  # the curve's control height: higher arcs have smaller y
        path = next(arc for arc in arcs if arc.get("data-dep") == str(dep)).find(f"{SVG}path")
        assert path is not None
        return float(path.get("d", "").split(",")[0].split()[-1])
    assert top(1) < top(2) and top(2) == top(3)  # cat→The holds cat→<big>; two arcs holding none
    assert top(4) < top(1) and top(6) < top(5)  # ROOT→sat holds The..cat's arcs; sat→slept holds slept→&
    assert "&lt;big&gt;" in svg and "<big>" not in svg
