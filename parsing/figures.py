"""One dependency tree as a figure for a paper: LaTeX for ``tikz-dependency`` and standalone SVG.

Both take the tree as the web app stores it: ``forms``, ``heads`` and ``deprels`` of words
1..n (``heads[i]`` is the head of word ``i + 1``, 0 = ROOT) and optionally one ``tags`` line
(UPOS, say) drawn under the words. Neither needs a browser, a font or a plotting library.

* :func:`tikz_dependency`: a ``dependency`` environment for the ``tikz-dependency`` package
  (``\\usepackage{tikz-dependency}``): the words (and tags) in a ``deptext``, one
  ``\\depedge{head}{dependent}{label}`` per arc and ``\\deproot{word}{label}`` for the root.
  Every LaTeX special character of a word or label is escaped (:func:`latex_escape`).
* :func:`tree_svg`: the arcs above the words as the app's editor draws them (an arc is
  nested above the arcs inside its span; the root's arc comes from a ROOT box before the first
  word), every text XML-escaped.

Examples:
    >>> print(tikz_dependency(["I", "saw", "it"], [2, 0, 2], ["nsubj", "root", "obj"]))
    % \\usepackage{tikz-dependency}
    \\begin{dependency}
      \\begin{deptext}[column sep=0.6em]
        I \\& saw \\& it \\\\
      \\end{deptext}
      \\deproot{2}{root}
      \\depedge{2}{1}{nsubj}
      \\depedge{2}{3}{obj}
    \\end{dependency}
    >>> tree_svg(["I", "saw", "it"], [2, 0, 2], ["nsubj", "root", "obj"]).count('class="arc"')
    3
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape

__all__ = ["latex_escape", "tikz_dependency", "tree_svg"]

_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
    "_": r"\_", "%": r"\%", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    r"""``text`` with LaTeX's special characters escaped, so it prints as written.

    >>> latex_escape(r"50% of $x_1 & {y}\z")
    '50\\% of \\$x\\_1 \\& \\{y\\}\\textbackslash{}z'
    """
    return "".join(_LATEX_SPECIALS.get(char, char) for char in text)


def _cell(text: str) -> str:
    """A ``deptext`` cell: as :func:`latex_escape`, but an ampersand is ``{\\char38}`` (``\\&``
    separates the columns there), and an empty word is ``{}``."""
    return "".join(r"{\char38}" if char == "&" else latex_escape(char) for char in text) or "{}"


def _check(forms: Sequence[str], heads: Sequence[int], deprels: Sequence[str],
           tags: Sequence[str] | None) -> None:
    """:raise ValueError: the columns differ in length, or a head is not a word number 0..n."""
    n = len(forms)
    if len(heads) != n or len(deprels) != n or (tags is not None and len(tags) != n):
        raise ValueError(f"forms, heads, deprels (and tags) must have one entry per word ({n} forms, "
                         f"{len(heads)} heads, {len(deprels)} deprels)")
    for word, head in enumerate(heads, start=1):
        if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head <= n or head == word:
            raise ValueError(f"word {word}: head {head!r} is not ROOT (0) or another word of 1..{n}")


def tikz_dependency(
    forms: Sequence[str], heads: Sequence[int], deprels: Sequence[str], *,
    tags: Sequence[str] | None = None, column_sep: str = "0.6em",
) -> str:
    """The tree as a ``tikz-dependency`` ``dependency`` environment (see the module docstring).

    :raise ValueError: the columns differ in length, or a head is out of range.
    """
    _check(forms, heads, deprels, tags)
    rows = [forms, *([tags] if tags is not None else [])]
    lines = ["% \\usepackage{tikz-dependency}", "\\begin{dependency}",
             f"  \\begin{{deptext}}[column sep={column_sep}]"]
    lines += ["    " + " \\& ".join(_cell(str(text)) for text in row) + " \\\\" for row in rows]
    lines.append("  \\end{deptext}")
    for word, (head, label) in enumerate(zip(heads, deprels, strict=True), start=1):
        if head == 0:
            lines.append(f"  \\deproot{{{word}}}{{{latex_escape(str(label))}}}")
    for word, (head, label) in enumerate(zip(heads, deprels, strict=True), start=1):
        if head != 0:
            lines.append(f"  \\depedge{{{head}}}{{{word}}}{{{latex_escape(str(label))}}}")
    lines.append("\\end{dependency}")
    return "\n".join(lines)


_CHAR_WIDTH = 7.4   # px per character of a 13 px sans-serif word (an estimate: no font is measured)
_GAP = 14           # px between two words' boxes
_LEVEL = 24         # px between nested arc levels
_ROOT_WIDTH = 46
_BASELINE_GAP = 10  # px from the arrow heads down to the ROOT box


@dataclass(frozen=True, slots=True)
class _Arc:
    head: int
    dep: int
    label: str
    level: int


def _levels(heads: Sequence[int], deprels: Sequence[str]) -> list[_Arc]:
    """Each arc with its nesting level (1 + the highest level of the arcs its span holds),
    shortest spans first; ROOT is position 0, before the first word."""
    spans = sorted(((min(head, dep), max(head, dep), head, dep, label) for dep, (head, label)
                    in enumerate(zip(heads, deprels, strict=True), start=1)), key=lambda s: s[1] - s[0])
    placed: list[tuple[int, int, int]] = []
    arcs = []
    for lo, hi, head, dep, label in spans:
        level = 1 + max((inner for a, b, inner in placed if lo <= a and b <= hi), default=0)
        placed.append((lo, hi, level))
        arcs.append(_Arc(head, dep, str(label), level))
    return arcs


def _layout(forms: Sequence[str], tags: Sequence[str] | None) -> tuple[list[float], float]:
    """The x of ROOT's centre and each word's (index 0 = ROOT), and the drawing's width."""
    centres = [_ROOT_WIDTH / 2 + 8]
    x = _ROOT_WIDTH + 8.0 + _GAP
    for i, form in enumerate(forms):
        width = max(len(str(form)), len(str(tags[i])) if tags else 0, 2) * _CHAR_WIDTH + 8
        centres.append(x + width / 2)
        x += width + _GAP
    return centres, x


def _arc_svg(arc: _Arc, centres: Sequence[float], baseline: int) -> str:
    """One arc: a curve from the head down to the dependent's arrow, its label at the top."""
    x1, x2, rise = centres[arc.head], centres[arc.dep], arc.level * _LEVEL
    curve = (f"M {x1:.1f} {baseline} C {x1:.1f} {baseline - rise}, {x2:.1f} {baseline - rise}, "
             f"{x2:.1f} {baseline - 4}")
    return (f'<g class="arc" data-dep="{arc.dep}"><path d="{curve}" fill="none" stroke="#4b5a75" '
            'stroke-width="1.2" marker-end="url(#arrow)"/>'
            f'<text x="{(x1 + x2) / 2:.1f}" y="{baseline - rise * 0.75 - 3:.1f}" font-size="11" '
            'text-anchor="middle" fill="#1f2937" paint-order="stroke" stroke="#ffffff" stroke-width="3">'
            f"{escape(arc.label)}</text></g>")


def _text(cls: str, x: float, y: int, size: int, colour: str, text: str) -> str:
    return (f'<text class="{cls}" x="{x:.1f}" y="{y}" font-size="{size}" text-anchor="middle" '
            f'fill="{colour}">{escape(text)}</text>')


_ARROW = ('<defs><marker id="arrow" markerWidth="8" markerHeight="8" refX="4" refY="8" '
          'orient="auto-start-reverse" markerUnits="userSpaceOnUse">'
          '<path d="M 0 0 L 4 8 L 8 0 z" fill="#4b5a75"/></marker></defs>')


def tree_svg(
    forms: Sequence[str], heads: Sequence[int], deprels: Sequence[str], *,
    tags: Sequence[str] | None = None, title: str = "",
) -> str:
    """The tree as a standalone SVG document (see the module docstring); ``title`` becomes its
    ``<title>`` (default: the words).

    :raise ValueError: the columns differ in length, or a head is out of range.
    """
    _check(forms, heads, deprels, tags)
    centres, width = _layout(forms, tags)
    arcs = _levels(heads, deprels)
    baseline = max((arc.level for arc in arcs), default=0) * _LEVEL + 20
    words_y = baseline + _BASELINE_GAP + 16
    height = words_y + (30 if tags else 14)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height}" '
             f'viewBox="0 0 {width:.0f} {height}" font-family="sans-serif" role="img">',
             f"<title>{escape(title or ' '.join(str(form) for form in forms))}</title>", _ARROW,
             f'<rect class="root" x="8" y="{baseline + _BASELINE_GAP}" width="{_ROOT_WIDTH}" height="24" '
             'rx="4" fill="#eef1f5" stroke="#aab3c2"/>',
             _text("root-label", centres[0], words_y, 11, "#2d3a52", "ROOT")]
    parts += [_arc_svg(arc, centres, baseline) for arc in arcs]
    for i, form in enumerate(forms):
        parts.append(_text("form", centres[i + 1], words_y, 13, "#111827", str(form)))
        if tags:
            parts.append(_text("tag", centres[i + 1], words_y + 16, 10, "#6b7280", str(tags[i])))
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
