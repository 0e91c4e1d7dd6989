"""The instructions render as written: each exercise's instruction cell, in both languages, rendered
by nbconvert (Markdown -> HTML, as Jupyter shows it), keeps its lists as lists and its code as code.

Docstring layout is not Markdown: a paragraph followed by indented ``- `` lines, or a code snippet
indented inside a list item, runs into one paragraph unless the builder converts it
(``_instructions.docstring_markdown``). The expectations here come from the docstrings themselves
(each ``- `` line is one list item, each ``>>>`` line is code), not from the converter. The cells are
rendered from the sources as the build renders them; ``tests/test_build.py`` checks that the committed
notebooks hold exactly these cells.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from autograder.builders import instructions as _instructions
from autograder.builders.build import present
from autograder.core.i18n import LANGS
from autograder.student import instructions_es

markdown2html = pytest.importorskip("nbconvert.filters.markdown_mistune").markdown2html_mistune

# Code a student must see as code, by exercise (a snippet that is no ``>>>`` example).
CODE_SNIPPETS = {
    "ex03_torch_cnn": ["Conv2d(1, 16, 3, padding=1), ReLU, MaxPool2d(2)"],
    "ex04_jax_mlp": ['params = {"W": [W0, W1, ...], "b": [b0, b1, ...]}'],
    "ex09_autograd_tape": ["L = (w * 2.0 + 0.3) ** 2"],
}


class _Blocks(HTMLParser):
    """The text of each list item, code block and paragraph (outside list items) of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[str] = []
        self.pres: list[str] = []
        self.paras: list[str] = []
        self._open: list[tuple[str, list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in ("li", "pre", "p"):
            self._open.append((tag, []))

    def handle_endtag(self, tag: str) -> None:
        if tag not in ("li", "pre", "p") or not self._open or self._open[-1][0] != tag:
            return
        _, parts = self._open.pop()
        text = "".join(parts)
        if tag == "li":
            self.items.append(" ".join(text.split()))
        elif tag == "pre":
            self.pres.append(text)
        elif not any(t == "li" for t, _ in self._open):
            self.paras.append(" ".join(text.split()))

    def handle_data(self, data: str) -> None:
        for _, parts in self._open:
            parts.append(data)


def _doc(ex: str, lang: str) -> list[str]:
    return instructions_es.instructions(ex, lang).splitlines()[1:]


def _plain(text: str) -> str:
    """Docstring prose as HTML shows it (no backticks, one space between words), without any ``*`` (an
    emphasis mark in prose, a character in code: compared without them on both sides)."""
    return " ".join(text.replace("`", "").replace("*", "").split())


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("ex", present())
def test_instruction_cell_renders_lists_and_code(ex, lang):
    md = _instructions.instructions(instructions_es.instructions(ex, lang), ex, 5, 10, lang)
    blocks = _Blocks()
    blocks.feed(markdown2html(md))
    doc = _doc(ex, lang)
    items = [ln.strip()[2:] for ln in doc if re.match(r"\s*- ", ln)]
    assert len(blocks.items) == len(items), (
        f"{ex} ({lang}): {len(items)} '- ' items in the docstring, {len(blocks.items)} <li> in the cell:\n"
        + "\n".join(blocks.paras))
    for want, got in zip(items, blocks.items):
        head = _plain(want)[:30]
        assert _plain(got).startswith(head), f"{ex} ({lang}): item {head!r} renders as {got[:60]!r}"
    pre = "\n".join(blocks.pres)
    for line in doc:
        if line.strip().startswith(">>>"):
            assert line.strip() in pre, f"{ex} ({lang}): example line {line.strip()!r} not in a code block"
    for snippet in CODE_SNIPPETS.get(ex, []):
        assert snippet in pre, f"{ex} ({lang}): {snippet!r} is not a code block"
    for para in blocks.paras:  # no list run into a paragraph, no code read as prose
        assert ">>>" not in para and not re.search(r"(^|[.:;,]) - [`A-Z(]", para), f"{ex} ({lang}): {para[:200]}"


def test_a_paragraph_with_an_indented_list_is_a_list():
    """The converter on the layout that ran together (ex12, ex13): a paragraph, then indented items."""
    md = _instructions.docstring_markdown([
        "A paragraph that ends",
        "without a colon.",
        "    - first item, wrapped",
        "      onto a second line;",
        "    - second item with a snippet:",
        "          x = f(1)",
        "          y = g(x)",
        "      and prose after it.",
        "Back at the margin.",
    ])
    blocks = _Blocks()
    blocks.feed(markdown2html(md))
    assert blocks.items[0] == "first item, wrapped onto a second line;"
    assert blocks.items[1].startswith("second item with a snippet:") and blocks.items[1].endswith("and prose after it.")
    assert blocks.pres == ["x = f(1)\ny = g(x)\n"]
    assert blocks.paras == ["A paragraph that ends without a colon.", "Back at the margin."]
