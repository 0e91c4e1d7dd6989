"""Round 6, class 3 (issue 64): intake that is not total, and invisible characters shown as themselves.

A ``coding: idna`` line whose bytes the codec rejects (a plain ``UnicodeError``, not a ``UnicodeDecodeError``) made
the whole submission unreadable: a correct solution scored 0, against the rule that a coding line the bytes do not
match is ignored. And the characters shown as escapes were a hand list that missed the zero-width ones (U+200B..U+200D,
U+2060..U+2064, U+00AD): the similarity page showed ``"ok"`` for a string that is not ``"ok"``. Each attack beside a
harmless twin; what is shown escaped is one table from Unicode's own categories (autograder/core/text.py).
"""

from __future__ import annotations

import html
import re
import unicodedata
from pathlib import Path

import pytest

from autograder.core import text
from autograder.core.paths import SOLUTIONS
from autograder.core.status import clean_reason
from autograder.hidden import load_suite
from autograder.reports.report import terminal_text
from autograder.submissions import loader as _loader

EX01 = "ex01_torch_mlp"
# idna's fast path takes pure ASCII; a label after a dot that starts with "xn--" and is no punycode makes it raise a
# plain UnicodeError (the solution's dashes become "?": its docstrings only)
ASCII_SOLUTION = (SOLUTIONS / f"{EX01}.py").read_text(encoding="utf-8").encode("ascii", "replace").decode("ascii")
MIRROR = "# mirror: download.xn--zz.org\n"


def _py(folder: Path, coding: str) -> Path:
    """A folder submission: ex01's solution under a ``coding:`` line, with a comment idna's punycode rejects."""
    folder.mkdir()
    (folder / f"{EX01}.py").write_bytes((f"# coding: {coding}\n" + ASCII_SOLUTION + MIRROR).encode("ascii"))
    return folder


# --- a coding line the codec rejects --------------------------------------------------------------------------------

def test_a_coding_line_the_codec_rejects_is_ignored_like_any_lying_one(tmp_path):
    honest = _loader.load(str(_py(tmp_path / "honest", "utf-8"))).sources[EX01]
    lying = _loader.load(str(_py(tmp_path / "idna", "idna"))).sources[EX01]
    assert lying == honest.replace("# coding: utf-8", "# coding: idna", 1)
    assert "xn--zz" in lying and "class MLP" in lying


def test_a_correct_solution_under_a_rejected_coding_line_gets_full_marks(run, tmp_path):
    subs = [_py(tmp_path / "honest", "utf-8"), _py(tmp_path / "idna", "idna")]
    rows = run.grade([str(p) for p in subs], only=[EX01], jobs=2)
    full = load_suite(EX01).max_score
    for row in rows:
        ex = row["exercises"][EX01]
        assert (ex["status"], ex["score"]) == ("graded", full), (row["submission"], ex)


# --- one table of what is shown escaped ------------------------------------------------------------------------------

# Unicode's categories of code points that are not drawn as themselves (what str.isprintable() refuses): controls,
# format characters (zero-width, bidirectional, soft hyphen, tags), line and paragraph separators, spaces but the
# ASCII one (they look like " "), private use (no agreed glyph), unassigned (no glyph yet; some reserved ranges are
# default-ignorable: drawn as nothing)
CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Zs", "Co", "Cn"}
NAMED = ["\u200b", "\u200c", "\u200d", "\u2060", "\u2061", "\u2062", "\u2063", "\u2064", "\u00ad"]  # the issue's
# the rest of Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt), each drawn as nothing: the variation
# selectors, and Other_Default_Ignorable_Code_Point's assigned members (PropList.txt: the combining grapheme joiner,
# the Hangul fillers, the Khmer inherent vowels)
IGNORABLE = [*(chr(c) for c in range(0x110000) if "VARIATION SELECTOR" in unicodedata.name(chr(c), "")),
             "\u034f", "\u115f", "\u1160", "\u17b4", "\u17b5", "\u3164", "\uffa0"]


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _in_categories() -> list[str]:
    return [chr(c) for c in range(0x110000)
            if not 0xD800 <= c <= 0xDFFF and c != 0x20 and unicodedata.category(chr(c)) in CATEGORIES]


def test_every_code_point_of_those_categories_is_shown_as_an_escape_on_every_medium():
    chars = _in_categories()
    assert set(NAMED) <= set(chars) and {c for c in chars if c.isprintable()} == set()  # Python's own table
    shown = [ch for ch in chars + IGNORABLE if not ch.isspace()]  # whitespace: a space in a line, kept in code
    joined = "".join(shown)
    want = "".join(_escape(ch) for ch in shown)
    assert text.clean(joined, 0) == want
    assert text.terminal(joined) == want
    assert text.html_text(joined) == html.escape(want)
    assert text.html_code(joined) == html.escape(want)
    assert {"\ufe0f", "\ufe00", "\U000e0100", "\u180b", "\u180f"} <= set(IGNORABLE)
    for ch in [*NAMED, *IGNORABLE]:  # one at a time, between letters: never "ok"
        for out in (text.clean(f"o{ch}k"), text.markdown(f"o{ch}k"), text.csv_cell(f"o{ch}k"),
                    text.html_text(f"o{ch}k"), text.html_code(f'"o{ch}k"')):
            assert _escape(ch).replace("\\", "") in out and ch not in out, (ch, out)
        assert terminal_text(f"o{ch}k") == clean_reason(f"o{ch}k") == "o?k", ch  # where a reason is shown as "?"
    code_space = [ch for ch in chars if ch.isspace() and ch not in "\t\n"]  # \r, \x85, U+2028, U+00A0, U+3000...
    assert text.html_code("".join(code_space)) == "".join(_escape(ch) for ch in code_space)
    assert text.html_code("a\tb\nc\r\nd e") == "a\tb\nc\nd e"  # a code block keeps its tabs, lines and spaces
    assert text.html_code('"ok\u00a0"') == "&quot;ok\\xa0&quot;" and text.clean("ok\u00a0!") == "ok !"


def test_every_other_code_point_is_shown_as_itself():
    hidden = set(_in_categories()) | set(IGNORABLE)
    others = "".join(chr(c) for c in range(0x110000)
                     if not 0xD800 <= c <= 0xDFFF and chr(c) not in hidden and chr(c) not in "\t\n")
    assert " " in others and not re.search(r"[^\S ]", others)  # the ASCII space is the only whitespace left
    assert text.html_code(others) == html.escape(others, quote=True)
    assert text.clean(others, 0, strip=False) == re.sub(" +", " ", others)


# --- the similarity page -------------------------------------------------------------------------------------------

def test_the_similarity_page_shows_a_zero_width_space_in_a_string(tmp_path, capsys):
    pytest.importorskip("copydetect", reason="pip install 'tapetrace[similarity]'")
    from autograder import cli

    solution = (SOLUTIONS / f"{EX01}.py").read_text(encoding="utf-8").replace("hidden", "width")
    assert "        super().__init__()\n" in solution
    subs = []
    for name, word in (("ana", "ok"), ("ben", "ok\u200b")):  # in the graded class: what the page shows
        (tmp_path / name).mkdir()
        code = solution.replace("        super().__init__()\n", f'        super().__init__()\n        STATUS = "{word}"\n', 1)
        (tmp_path / name / f"{EX01}.py").write_text(code, encoding="utf-8")
        subs.append(str(tmp_path / name))
    out = tmp_path / "sim"
    assert cli.main(["similarity", *subs, "--out", str(out), "--only", EX01, "--jobs", "1"]) == 0, capsys.readouterr()
    page = (out / f"{EX01}.html").read_text(encoding="utf-8")
    assert "\u200b" not in page
    assert "STATUS = &quot;ok\\u200b&quot;" in page and "STATUS = &quot;ok&quot;" in page  # the twin: as written
