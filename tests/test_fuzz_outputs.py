"""Fuzzing every output medium's escaping and the names made from a submission's path (issue 53;
docs/security.md#fuzzing): any string a student controls (surrogates, NUL, ESC, BOM, bidirectional controls,
Markdown and HTML markup, formula characters) -> one printable terminal line, a CSV cell that is never a live
formula, Markdown and HTML that show it as written; any path -> a feedback file name inside its folder.
Budgets: tests/fuzzing.py."""

from __future__ import annotations

import csv
import html
import io
import re
import tempfile
import unicodedata
from pathlib import Path

from fuzzing import ANY_TEXT, budget
from hypothesis import given
from hypothesis import strategies as st

from autograder.core import text
from autograder.reports.feedback import feedback_names, md_code_span, safe_stem, write_feedback
from autograder.reports.gradebook import student_key

VALUES = st.one_of(ANY_TEXT, st.binary(max_size=32), st.integers(), st.floats(), st.none(), st.booleans())
# what a terminal, a spreadsheet or a reader's eye would act on or not see: Unicode's controls (C0/C1, DEL), format
# characters (bidirectional controls, zero-width spaces and joiners, the soft hyphen, the BOM, tags), line and
# paragraph separators, spaces but the ASCII one, private-use and unassigned code points (issue 64: one table, from
# the categories: what str.isprintable() refuses)
ACTIVE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Zs", "Co", "Cn", "Cs"})


def _active(text: str) -> bool:
    """Whether ``text`` holds a code point of :data:`ACTIVE_CATEGORIES` (the ASCII space is a space)."""
    return any(c != " " and unicodedata.category(c) in ACTIVE_CATEGORIES for c in text)


MARKUP = set("\\`*_{}[]()<>#+-.!|~&:")


@budget(150)
@given(VALUES, st.sampled_from([0, 1, 5, text.NAME_CHARS, text.MESSAGE_CHARS]))
def test_clean_and_terminal_give_one_printable_line(value: object, limit: int) -> None:
    for out in (text.clean(value, limit), text.terminal(value, limit)):
        assert not _active(out), out
        out.encode("utf-8")  # no lone surrogate
        assert not limit or len(out) <= limit


@budget(150)
@given(VALUES)
def test_csv_cell_is_never_a_live_formula(value: object) -> None:
    cell = text.csv_cell(value)
    if not isinstance(cell, str):
        assert cell is value  # numbers stay numbers
        return
    buf = io.StringIO()
    csv.writer(buf).writerow([cell, "next"])
    (row,) = list(csv.reader(io.StringIO(buf.getvalue())))
    assert row == [cell, "next"]  # one cell, one row: no separator or newline escaped its quoting
    assert row[0].lstrip()[:1] not in ("=", "+", "-", "@", "|", "%") or row[0].startswith("'")
    assert not _active(row[0])


def _unescape_markdown(out: str) -> str:
    """Markdown's text as a reader sees it; fails where a markup character is not escaped."""
    shown, i = [], 0
    while i < len(out):
        if out[i] == "\\":
            assert i + 1 < len(out) and out[i + 1] in MARKUP, out
            shown.append(out[i + 1])
            i += 2
            continue
        assert out[i] not in MARKUP, out
        shown.append(out[i])
        i += 1
    return "".join(shown)


@budget(150)
@given(VALUES)
def test_markdown_shows_the_text_as_written(value: object) -> None:
    out = text.markdown(value)
    assert "\n" not in out and not _active(out)
    assert _unescape_markdown(out) == text.clean(value)  # readable: only the escapes were added


@budget(150)
@given(VALUES, st.booleans())
def test_a_markdown_code_span_shows_the_text_as_written(value: object, cell: bool) -> None:
    """Issue 67: Markdown feedback marks code one way, a code span, never a ``<code>`` tag; any text (backticks,
    pipes, tags, spaces at its ends) is one code span showing it exactly, in a paragraph and in a table cell."""
    import pytest

    markdown_it = pytest.importorskip("markdown_it")
    span = md_code_span(value, cell)
    shown = text.clean(value, 0)
    assert "\n" not in span and not _active(span)
    if not shown:
        assert span == ""
        return
    md = f"| a |\n|---|\n| {span} |\n" if cell else f"x {span} y\n"
    page = markdown_it.MarkdownIt("commonmark").enable("table").render(md)
    codes = re.findall(r"<code>(.*?)</code>", page, re.S)
    assert len(codes) == 1 and html.unescape(codes[0]) == shown, (span, page)
    outside = re.sub(r"<code>.*?</code>", "", page, flags=re.S)
    assert set(re.findall(r"<([a-z0-9]+)", outside)) <= ({"table", "thead", "tbody", "tr", "th", "td"} if cell
                                                         else {"p"}), page  # nothing leaks out as markup


@budget(150)
@given(VALUES)
def test_html_text_has_no_markup(value: object) -> None:
    out = text.html_text(value)
    assert not set("<>\"'") & set(out) and not _active(out)
    assert html.unescape(out) == text.clean(value, 0, strip=False)


@budget(100)
@given(ANY_TEXT)
def test_html_code_keeps_lines_and_has_no_markup(code: str) -> None:
    out = text.html_code(code)
    assert not set("<>\"'") & set(out)
    assert not _active(out.replace("\n", "").replace("\t", ""))  # its lines and indentation kept
    assert out.count("\n") == code.replace("\r\n", "\n").count("\n")


PATHS = st.lists(st.one_of(ANY_TEXT, st.sampled_from(["..", ".", "", "-rf", ".hidden", "a.ipynb", "b.zip", "c.py",
                                                     "CON", "x" * 300, "\udcff\udc80", " alice", "alice "])),
                 min_size=1, max_size=4).map("/".join)


@budget(150)
@given(PATHS)
def test_a_submission_name_is_a_safe_file_name(path: str) -> None:
    student_key(path)  # never raises (a key, not a file name)
    stem = safe_stem(path)
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", stem), stem  # no separator, no "..", no hidden file
    assert len(stem) <= 120


@budget(40)
@given(st.lists(PATHS, min_size=1, max_size=4))
def test_feedback_files_stay_in_their_folder(paths: list[str]) -> None:
    names = feedback_names(paths)
    assert len(names) == len(paths)
    for stem, _title in names:
        assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", stem), stem
    rows = [{"submission": p, "total": 0.0, "max_total": 1.0,
             "exercises": {"ex01_torch_mlp": {"score": 0.0, "max_score": 1.0, "status": "failed", "message": p,
                                              "tests": [{"name": p, "passed": False, "score": 0.0, "max_score": 1.0,
                                                         "message": p, "hidden": False}]}}} for p in paths]
    with tempfile.TemporaryDirectory(prefix="tapetrace-fuzz-") as tmp:
        folder = Path(tmp) / "feedback"
        written = write_feedback(rows, str(folder), fmt="both")
        assert len(written) == 2 * len(paths) == len(set(written))
        assert {p.parent for p in written} == {folder}
        for p in written:
            body = p.read_text(encoding="utf-8")
            if p.suffix == ".html":
                assert "<script" not in body.lower().replace("&lt;script", "")
