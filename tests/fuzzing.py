"""The budgets and strategies of the property-based fuzzing of what a student controls (issue 53;
docs/security.md#fuzzing; tests/test_fuzz_*.py).

``make test`` runs each property with a fixed, small budget: derandomized (the same examples on every run, no
example database), so a failure is reproducible from the test's name alone. ``make fuzz`` (``TAPETRACE_FUZZ=1``)
runs the same properties with :data:`FUZZ_FACTOR` times the budget on a fresh random seed, printed (pytest's
``--hypothesis-seed``: give it again to replay the run). Whatever it finds becomes a regular test with the
minimal example, beside the property that found it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import nbformat
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

FUZZ = os.environ.get("TAPETRACE_FUZZ") == "1"
FUZZ_FACTOR = int(os.environ.get("TAPETRACE_FUZZ_FACTOR", "100"))
F = TypeVar("F", bound=Callable[..., Any])


def budget(examples: int) -> Callable[[F], F]:
    """Hypothesis settings: ``examples`` derandomized examples in ``make test``; ``FUZZ_FACTOR`` times as many,
    random (the seed is pytest's ``--hypothesis-seed``, printed by ``make fuzz``), under ``TAPETRACE_FUZZ=1``."""
    return settings(max_examples=examples * FUZZ_FACTOR if FUZZ else examples, derandomize=not FUZZ,
                    database=None, deadline=None, print_blob=FUZZ,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much, HealthCheck.large_base_example,
                                           HealthCheck.function_scoped_fixture])


# code points that have broken text handling somewhere: NUL and other controls, a BOM, bidirectional overrides
# and isolates, line and paragraph separators, lone surrogates (high, low, and os.fsdecode's U+DC80-U+DCFF)
NASTY = ["\x00", "\x1b", "\x1b]52;c;aGk=\x07", "\r", "\r\n", "\x0b", "\x0c", "\x85", "\x7f", "\ufeff", "\u202e",
         "\u2066", "\u2069", "\u200f", "\u2028", "\u2029", "\ud800", "\udfff", "\udc80", "\udcff", "\ufffd",
         "\U0010ffff", "=", "+", "-", "@", "|", "<", ">", "&", "\"", "'", "`", "*", "_", "[", "](", "\\", "/", "..",
         "$", "#", "%", "\t", " ", "\n"]
# any code point, surrogates included
ANY_CHAR = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
ANY_TEXT = st.lists(st.one_of(st.sampled_from(NASTY), st.text(ANY_CHAR, max_size=8)), max_size=24).map("".join)
# a line a notebook or a script of the template has: headings, cell markers, magics, the grader's calls
LINES = ["# ex01_torch_mlp", "## ex02_torch_training", "# %%", "# %% [markdown]", "# %% tags=[\"ex01_torch_mlp\"]",
         "%%writefile ex01_torch_mlp.py", "%%timeit", "%%bash", "%time x = 1", "!pip install x", "x = !ls", "obj?",
         "pip install tqdm", "from __future__ import annotations", "import torch", "def f(x):", "    return x",
         "class MLP:", "check(\"ex01_torch_mlp\")", "if __name__ == \"__main__\":", "    pass", "x = 1", "\\",
         "# -*- coding: latin-1 -*-", "# tapetrace-context v1: {}", "'''", "f'{x!r:>{w}}'"]


def _long_line(draw: Callable[[Any], Any]) -> str:
    return draw(st.sampled_from(["x", "#", "\u202e", "\x00", "é", "\ud800"])) * draw(st.sampled_from([5000, 70000]))


@st.composite
def source_text(draw: Callable[[Any], Any]) -> str:
    """Source a student could write: template lines, arbitrary Unicode (surrogates, NUL, BOM, bidi), now and then
    a huge line."""
    parts = draw(st.lists(st.one_of(st.sampled_from(LINES), ANY_TEXT), max_size=12))
    if draw(st.integers(0, 9)) == 0:
        parts.append(_long_line(draw))
    return draw(st.sampled_from(["\n", "\r\n", "\r"])).join(parts)


@cache
def notebook_schema() -> dict[str, Any]:
    """nbformat's own JSON schema of a v4 notebook (the one ``nbformat.validate`` checks): the top-level keys a
    notebook requires, its cell kinds and the keys each requires."""
    return json.loads((Path(nbformat.__file__).parent / "v4" / "nbformat.v4.schema.json").read_text())


def _meta(draw: Callable[[Any], Any]) -> dict[str, Any]:
    return draw(st.sampled_from([{}, {"tapetrace": {"exercise": "ex01_torch_mlp"}}, {"tags": ["ex01_torch_mlp"]},
                                 {"tapetrace": {"exercise": "ex99", "role": "context"}}, {"tapetrace": "x"},
                                 {"tapetrace": {"exercise": ["ex01_torch_mlp"]}}, {"tags": "ex01"}]))


_FIELD = {"id": st.from_regex(r"\A[a-zA-Z0-9-_]{1,64}\Z"), "metadata": st.just({}), "outputs": st.just([]),
          "execution_count": st.one_of(st.none(), st.integers(0, 10**6)), "attachments": st.just({})}


@st.composite
def schema_cell(draw: Callable[[Any], Any]) -> dict[str, Any]:
    """A cell nbformat's v4 schema allows: one of its cell kinds (``definitions``: raw, markdown, code) with the
    keys that kind requires (hypothesis-jsonschema would draw these from the schema itself, but 0.23.1 does not
    run on the Hypothesis pinned here)."""
    kinds = [k for k in ("raw_cell", "markdown_cell", "code_cell") if k in notebook_schema()["definitions"]]
    spec = notebook_schema()["definitions"][draw(st.sampled_from(kinds))]
    cell = {key: draw(_FIELD[key]) for key in spec["required"] if key in _FIELD}
    cell["cell_type"] = spec["properties"]["cell_type"]["enum"][0]
    return cell


@st.composite
def notebooks(draw: Callable[[Any], Any]) -> Any:
    """A notebook as JSON data: the shape nbformat's schema gives a v4 notebook (its required top-level keys, cells
    of its kinds), its cells' sources, kinds and metadata what a student could write (any Unicode, the template's
    headings); now and then a structure the schema forbids (cells not a list, a cell not an object, a source of
    numbers, not an object at all)."""
    nb: Any = {key: {} for key in notebook_schema()["required"]}
    nb.update(nbformat=4, nbformat_minor=draw(st.integers(0, 5)), cells=draw(st.lists(schema_cell(), max_size=6)))
    for cell in nb["cells"]:
        src = draw(source_text())
        cell["source"] = src if draw(st.booleans()) else src.splitlines(keepends=True)
        if draw(st.integers(0, 3)) == 0:
            cell["cell_type"] = draw(st.sampled_from(["code", "markdown", "raw", "", "Code", "heading"]))
        if draw(st.booleans()):
            cell["metadata"] = _meta(draw)
    extra = draw(st.lists(st.fixed_dictionaries({"cell_type": st.sampled_from(["code", "markdown"]),
                                                 "source": source_text(), "metadata": st.just({})}), max_size=4))
    nb["cells"] += extra
    broken = draw(st.integers(0, 11))
    if broken == 0:
        nb["cells"] = draw(st.one_of(st.none(), st.integers(), st.text(max_size=4), st.dictionaries(st.text(), st.none())))
    elif broken == 1:
        nb["cells"].append(draw(st.one_of(st.none(), st.integers(), st.text(max_size=4), st.lists(st.none()))))
    elif broken == 2 and nb["cells"]:
        nb["cells"][0]["source"] = draw(st.one_of(st.none(), st.integers(), st.lists(st.integers()), st.floats()))
    elif broken == 3:
        nb = draw(st.one_of(st.lists(st.none()), st.integers(), st.text(max_size=4), st.none()))
    return nb


@st.composite
def notebook_bytes(draw: Callable[[Any], Any]) -> bytes:
    """A notebook file's bytes: :func:`notebooks` as JSON (surrogates as ``\\udXXX`` escapes, or written raw),
    maybe after a BOM, maybe cut short, maybe in another encoding."""
    nb = draw(notebooks())
    ascii_only = draw(st.booleans())
    text = json.dumps(nb, ensure_ascii=ascii_only)
    data = text.encode(draw(st.sampled_from(["utf-8", "utf-16", "utf-8-sig"])), "surrogatepass")
    cut = draw(st.integers(0, 9))
    if cut == 0:
        data = data[: draw(st.integers(0, len(data)))]
    return data


def py_bytes() -> st.SearchStrategy[bytes]:
    """A ``.py`` file's bytes: arbitrary bytes, or student source in any encoding (a BOM, a ``coding:`` line that
    may lie, UTF-16, Latin-1, surrogates written raw)."""
    encoded = st.tuples(source_text(), st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "latin-1", "cp1252",
                                                        "utf-32", "shift_jis"]),
                        st.sampled_from(["", "# -*- coding: latin-1 -*-\n", "# coding: utf-16\n",
                                         "# coding: nonsense\n", "\n# vim: set fileencoding=cp1252 :\n"]))
    return st.one_of(st.binary(max_size=512),
                     encoded.map(lambda t: (t[2] + t[0]).encode(t[1], "surrogatepass")
                                 if t[1].startswith("utf") else (t[2] + t[0]).encode(t[1], "replace")))
