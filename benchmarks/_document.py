"""A small document model written once and rendered twice: Markdown (REPORT.md) and reStructuredText (the docs).

Paragraphs are lists of segments: plain text (escaped for the markup), :class:`Code`, :class:`Link`, or a claim
(anything with ``render(markup)``).
"""

import re
from dataclasses import dataclass

from benchmarks._claims import rst_escape

RST_UNDERLINES = "=-~^\""
_LIST_START = re.compile(r"^(\(?[A-Za-z0-9#]{1,4}[.)]|[-+*•])\s")


def _not_a_list(text):
    """reST reads ``(a) text`` or ``- text`` at the start of a paragraph or cell as a list: escape the first
    character so that it stays text."""
    return "\\" + text if _LIST_START.match(text) else text


@dataclass(frozen=True)
class Code:
    text: str


@dataclass(frozen=True)
class Link:
    """A link: ``target`` in Markdown; in reST ``rst`` (a role such as ``:ref:`x```) or, without one, the target as
    a literal path (the docs site does not serve the repository's files)."""

    text: str
    target: str
    rst: str = ""


def _segment(seg, markup):
    if isinstance(seg, str):
        return rst_escape(seg) if markup == "rst" else seg
    if isinstance(seg, Code):
        return f"``{seg.text}``" if markup == "rst" else f"`{seg.text}`"
    if isinstance(seg, Link):
        if markup == "md":
            return f"[{seg.text}]({seg.target})"
        return seg.rst or f"``{seg.target}``"
    return seg.render(markup)


class Document:
    """Blocks added in order (:meth:`heading`, :meth:`para`, :meth:`bullets`, :meth:`table`), rendered by
    :meth:`render`."""

    def __init__(self):
        self.blocks = []

    def heading(self, level, *segments, label=None):
        """A heading; ``label`` is its reST target (``:ref:`label```), which Markdown leaves out."""
        self.blocks.append(("heading", level, segments, label))
        return self

    def para(self, *segments):
        self.blocks.append(("para", segments))
        return self

    def bullets(self, items):
        """``items``: one tuple of segments per bullet."""
        self.blocks.append(("bullets", [tuple(i) for i in items]))
        return self

    def table(self, columns, cells):
        self.blocks.append(("table", list(columns), [list(r) for r in cells]))
        return self

    def figure(self, md_target, rst_target, alt):
        """An image: a Markdown image link, or a reST ``image`` directive."""
        self.blocks.append(("figure", md_target, rst_target, alt))
        return self

    def rst_only(self, text):
        """A block only the reST rendering shows (a directive, a toctree)."""
        self.blocks.append(("rst", text))
        return self

    def render(self, markup):
        out = []
        for block in self.blocks:
            kind = block[0]
            if kind == "rst":
                if markup == "rst":
                    out.append(block[1])
            elif kind == "figure":
                _, md, rst, alt = block
                out.append(f"![{alt}]({md})" if markup == "md" else f".. image:: {rst}\n   :alt: {alt}\n   :width: 80%")
            elif kind == "heading":
                _, level, segments, label = block
                text = "".join(_segment(s, markup) for s in segments)
                if markup == "md":
                    out.append("#" * level + " " + text)
                else:
                    out.append((f".. _{label}:\n\n" if label else "") + text + "\n" + RST_UNDERLINES[level - 1]
                               * len(text))
            elif kind == "para":
                text = "".join(_segment(s, markup) for s in block[1])
                out.append(_not_a_list(text) if markup == "rst" else text)
            elif kind == "bullets":
                out.append("\n".join("- " + "".join(_segment(s, markup) for s in item) for item in block[1]))
            else:
                out.append(_table_md(block[1], block[2]) if markup == "md" else _table_rst(block[1], block[2]))
        return "\n\n".join(out) + "\n"


def _table_md(columns, cells):
    def row(values):
        return "| " + " | ".join(str(v).replace("|", "\\|") for v in values) + " |"

    return "\n".join([row(columns), "|" + "|".join("---" for _ in columns) + "|", *map(row, cells)])


def _table_rst(columns, cells):
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for values in [columns, *cells]:
        for j, value in enumerate(values):
            text = _not_a_list(rst_escape(value)) if str(value).strip() else "–"
            lines.append(("   * - " if j == 0 else "     - ") + text)
    return "\n".join(lines)
