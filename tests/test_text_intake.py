"""A submission's text at intake (autograder/core/text_intake.py): decoded and made safe once, so that text a student
can write (half an emoji a paste left, a NUL, a BOM, a Latin-1 file, a huge line) is never the grader's trouble.

The rule: a lone surrogate or a NUL becomes U+FFFD and is recorded; the exercise whose code holds one fails to
load as the student's error (``LOAD_SURROGATE``, ``LOAD_NULL_CHAR``: IPython's ``run_cell`` fails such a cell
before any of it runs, a kernel cannot even publish it), a final row that ``--resume`` keeps; a cell outside the
exercise that holds one is left out of its context, as "Run all" fails it; every output can write the text.
"""

from __future__ import annotations

import codecs
import csv
import encodings
import encodings.aliases
import json
import pkgutil
import random
import time
from pathlib import Path

import pytest
from fuzzing import budget
from hypothesis import given
from hypothesis import strategies as st

from autograder.builders import notebook as _nbm
from autograder.core.paths import EXERCISES, ROOT, SOLUTIONS
from autograder.core.text_intake import REPLACEMENT, SourceText, TextFault, decode_source, normalise_source
from autograder.engine import resume as _resume
from autograder.hidden import load_suite
from autograder.submissions import cells as _cells
from autograder.submissions import execute as _exec
from autograder.submissions import loader as _loader

EX01 = "ex01_torch_mlp"
HALF = "\ud83d"  # the high half of 😀's surrogate pair: what a paste can leave
SOLUTION = (SOLUTIONS / f"{EX01}.py").read_text(encoding="utf-8")
COMMENTED = "import torch  # half " + HALF + " an emoji\n"


def with_comment(char: str) -> str:
    """ex01's solution with ``char`` in a comment on its ``import torch`` line."""
    assert "import torch\n" in SOLUTION
    return SOLUTION.replace("import torch\n", f"import torch  # half {char} an emoji\n", 1)


def _line_of(text: str, needle: str) -> int:
    return next(k for k, line in enumerate(text.splitlines(), 1) if needle in line)


def notebook(path: Path, answer: str, top: list[str] = ()) -> Path:
    """The student template with ex01's answer cell holding ``answer``, ``top`` as code cells above everything,
    written as most JSON writers do (``ensure_ascii``: a lone surrogate is ``"\\ud83d"`` in the file)."""
    template = json.loads((ROOT / "student_template" / _nbm.NOTEBOOK).read_text(encoding="utf-8"))
    nb = _nbm.fill_with(template, {EX01: answer})
    nb["cells"][0:0] = [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                         "source": src} for src in top]
    nb["cells"].insert(0, {"cell_type": "markdown", "metadata": {}, "source": f"notes {HALF} and \x00"})
    path.write_text(json.dumps(nb, indent=1) + "\n", encoding="ascii")
    return path


# --------------------------------------------------------------------------- the function
def test_a_lone_surrogate_and_a_nul_become_u_fffd_and_are_recorded_where_python_counts_lines():
    got = normalise_source("a = 1\r\nb = 2  # \x00\rc = '" + HALF + "'\n" + "\udc80")
    assert got.text == "a = 1\r\nb = 2  # " + REPLACEMENT + "\rc = '" + REPLACEMENT + "'\n" + REPLACEMENT
    assert got.faults == (TextFault(2, 10, 0), TextFault(3, 6, 0xD83D), TextFault(4, 1, 0xDC80))
    assert [f.kind for f in got.faults] == ["nul", "surrogate", "surrogate"]
    assert got.encoding == "str"
    assert normalise_source("x = '😀'\n") == SourceText("x = '😀'\n", (), "str")  # a whole pair is a character


@pytest.mark.parametrize(("data", "text", "encoding"), [
    ("s = 'café'\n".encode("utf-8-sig"), "s = 'café'\n", "utf-8-sig"),  # the BOM is not code
    ("s = 'café'\n".encode("utf-16"), "s = 'café'\n", "utf-16"),  # Notepad's "Unicode"
    ("s = 'café'\n".encode("utf-32"), "s = 'café'\n", "utf-32"),
    ("# café\ns = '€'\n".encode("cp1252"), "# café\ns = '€'\n", "cp1252"),  # an editor's "ANSI" file
    (b"s = '\x81\xe9'\n", "s = '\x81é'\n", "latin-1"),  # not Windows-1252 either
    ("# -*- coding: latin-1 -*-\ns = 'café'\n".encode("latin-1"), "# -*- coding: latin-1 -*-\ns = 'café'\n",
     "iso8859-1"),  # PEP 263, as Python reads it
    ("s = 'café' ".encode() + b"\xff\n", "s = 'café' \ufffd\n", "utf-8"),  # UTF-8 with a stray byte: the rest kept
    (b"# coding: nonsense\nx = 1\n", "# coding: nonsense\nx = 1\n", "utf-8"),
    ("# coding: ascii\ns = 'café'\n".encode(), "# coding: ascii\ns = 'café'\n", "utf-8"),  # a coding line that lies
    (b"# coding: utf-16\nx = 1\n", "# coding: utf-16\nx = 1\n", "utf-8"),  # one Python cannot read a file in
    (b"", "", "utf-8"),
])
def test_a_py_files_bytes_are_read_in_their_encoding(data, text, encoding):
    assert decode_source(data) == (text, encoding)
    assert normalise_source(data) == SourceText(text, (), encoding)


def test_utf16_without_its_mark_is_nul_faults_not_the_graders_trouble():
    got = normalise_source("x = 1\n".encode("utf-16-le"))
    assert "\x00" not in got.text and got.faults and got.faults[0] == TextFault(1, 2, 0)


def test_any_input_gives_safe_deterministic_idempotent_text():
    """Random bytes and random text (surrogates, NUL, controls): UTF-8 always encodes, no NUL, the same result twice,
    and a second pass changes nothing and finds nothing."""
    rng = random.Random(20260530)
    alphabet = ["\x00", "\ud83d", "\ude00", "\udcff", "\r", "\n", "\ufeff", "é", "😀", "a", "#", "'", "\ufffd"]
    inputs: list[str | bytes] = [bytes(rng.getrandbits(8) for _ in range(rng.randrange(64))) for _ in range(300)]
    inputs += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(40))) for _ in range(300)]
    inputs += [codecs.BOM_UTF16_LE + bytes(rng.getrandbits(8) for _ in range(9)), codecs.BOM_UTF8 + b"\xff\x00"]
    for data in inputs:
        got = normalise_source(data)
        got.text.encode("utf-8")
        assert "\x00" not in got.text and normalise_source(data) == got
        again = normalise_source(got.text)
        assert again.text == got.text and again.faults == ()
        assert len(got.faults) <= 16


# every codec name Python knows: the aliases, the names they stand for, every module of the encodings package (idna,
# punycode, unicode_escape, undefined, rot_13, base64_codec...: some no text encoding, some raising UnicodeError or
# LookupError rather than UnicodeDecodeError)
CODECS = sorted(set(encodings.aliases.aliases) | set(encodings.aliases.aliases.values())
                | {m.name for m in pkgutil.iter_modules(encodings.__path__)})
CODING_LINES = ["# coding: {}\n", "# -*- coding: {} -*-\n", "#!/usr/bin/env python\n# vim: set fileencoding={} :\n",
                "\ufeff# coding: {}\n"]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # unicode_escape's, on an unknown escape: the codec's
@budget(40)
@given(st.binary(max_size=96) | st.sampled_from([b"a.xn--zz.b\n", b"x = 'caf\xc3\xa9'\n", b"\\N{nope}\n", b"+AGE-\n"]),
       st.sampled_from(CODING_LINES))
def test_any_coding_line_of_any_codec_over_any_bytes_gives_text(body: bytes, line: str) -> None:
    """Every codec name in a coding line, over random bytes: text and an encoding, never an exception; the declared
    codec is what the text was read as only where it reads the bytes; the same result twice."""
    for name in CODECS:
        data = line.format(name).encode("utf-8") + body
        got, encoding = decode_source(data)
        assert isinstance(got, str) and decode_source(data) == (got, encoding), name
        if encoding not in ("utf-8", "utf-8-sig", "cp1252", "latin-1"):
            assert data.decode(encoding) == got, (name, encoding)
        safe = normalise_source(data)
        safe.text.encode("utf-8")
        assert "\x00" not in safe.text


def test_a_rejected_idna_coding_line_is_ignored_and_costs_no_time():
    """idna raises a plain UnicodeError on a label that is no punycode, and its decoder is quadratic in a label's
    length: the line is ignored, the file read as UTF-8 at once."""
    assert decode_source(b"# coding: idna\nx = 1  # see download.xn--zz.org\n") == (
        "# coding: idna\nx = 1  # see download.xn--zz.org\n", "utf-8")
    huge = b"# coding: idna\nx = 1  # a.xn--" + b"ab" * 800_000 + b"\n"
    start = time.perf_counter()
    assert decode_source(huge)[1] == "utf-8"
    assert time.perf_counter() - start < 5


def test_a_huge_text_is_read_in_linear_time_and_its_faults_are_capped():
    text = ("x" * 1_000_000 + "\x00\n") * 40
    got = normalise_source(text)
    assert len(got.faults) == 16 and got.faults[-1] == TextFault(16, 1_000_001, 0)
    assert got.text.count(REPLACEMENT) == 40


# --------------------------------------------------------------------------- the loader and the cells
def test_a_surrogate_in_a_notebook_cell_is_the_sections_fault_at_its_line(tmp_path):
    sub = _loader.load(str(notebook(tmp_path / "nb.ipynb", with_comment(HALF))))
    text = sub.sources[EX01]
    text.encode("utf-8")  # the scratch file, the rows, the hashes: all can write it
    section = _cells.split_graded(text)[0]
    line = _line_of(section, "# half " + REPLACEMENT)
    assert _cells.faults_of(text) == [TextFault(line, 22, 0xD83D)]
    with pytest.raises(_cells.UnreadableCharacter) as err:
        _exec.prepare(text, "<ex01>", ("MLP",))
    assert err.value.lineno == line and "lone surrogate U+D83D" in err.value.msg


def test_a_cell_outside_the_exercise_that_run_all_fails_is_left_out_of_the_context(tmp_path):
    nb = notebook(tmp_path / "nb.ipynb", SOLUTION, top=["import math  # " + HALF + "\n", "import cmath\n"])
    text = _loader.load(str(nb)).sources[EX01]
    assert _cells.faults_of(text) == []
    sources = [c["source"] for c in _cells.split_graded(text)[1]]
    assert any("import cmath" in s for s in sources) and not any("import math" in s for s in sources)


def test_a_later_redefinition_in_a_failing_cell_is_not_run():
    cells = [{"cell_type": "markdown", "metadata": {}, "source": f"## {EX01}"},
             {"cell_type": "code", "metadata": {}, "source": "class MLP:\n    pass\n"},
             {"cell_type": "markdown", "metadata": {}, "source": "## ex09_autograd_tape"},
             {"cell_type": "code", "metadata": {}, "source": "class MLP:  # " + HALF + "\n    pass\n"},
             {"cell_type": "code", "metadata": {}, "source": "class MLP:  # fixed\n    pass\n"}]
    got = _cells.graded_sources(_cells.notebook_cells({"cells": cells}, EXERCISES), EXERCISES,
                                contracts={EX01: ("MLP",)})
    later = _cells.later_cells(got[EX01])
    assert [c["file"] for c in later] == ["<notebook cell 5: ex09_autograd_tape>"]
    assert _cells.faults_of(got[EX01]) == [] and _cells.faults_of(got["ex09_autograd_tape"]) == [TextFault(1, 15, 0xD83D)]


def test_py_files_bom_latin1_nul_and_a_percent_script(tmp_path):
    (tmp_path / "bom").mkdir()
    (tmp_path / "bom" / f"{EX01}.py").write_bytes(SOLUTION.encode("utf-8-sig"))
    assert _loader.load(str(tmp_path / "bom")).sources[EX01] == SOLUTION
    latin = tmp_path / f"{EX01}.py"
    latin.write_bytes(with_comment("é").encode("latin-1", "replace"))  # (its docstrings' dashes as "?")
    assert _loader.load(str(latin)).sources[EX01] == with_comment("é").encode("latin-1", "replace").decode("latin-1")
    (tmp_path / "nul").mkdir()
    (tmp_path / "nul" / f"{EX01}.py").write_bytes(with_comment("\x00").encode())
    text = _loader.load(str(tmp_path / "nul")).sources[EX01]
    assert "\x00" not in text and _cells.faults_of(text) == [TextFault(_line_of(SOLUTION, "import torch"), 22, 0)]
    percent = tmp_path / "class.py"
    percent.write_bytes(f"# %% [markdown]\n# ## {EX01}\n\n# %%\n{with_comment(chr(0))}".encode())
    text = _loader.load(str(percent)).sources[EX01]
    assert _cells.faults_of(text) == [TextFault(_line_of(SOLUTION, "import torch"), 22, 0)]


# --------------------------------------------------------------------------- grading (ex01 only)
def test_graded_as_run_all_would_never_the_graders_trouble(run, tmp_path):
    """A correct ex01 with half an emoji or a NUL in a comment fails to load, the student's (0, a final row that
    --resume keeps); the same character outside the exercise, a BOM, a Latin-1 file and a 1.5 MB line cost nothing."""
    subs = {
        "surrogate": notebook(tmp_path / "surrogate.ipynb", with_comment(HALF)),
        "outside": notebook(tmp_path / "outside.ipynb", SOLUTION, top=["import math  # " + HALF + "\n"]),
        "nul": tmp_path / "nul",
        "bom": tmp_path / "bom",
        "latin1": tmp_path / "latin1",
        "huge": tmp_path / "huge",
    }
    for name, data in (("nul", with_comment("\x00").encode()), ("bom", SOLUTION.encode("utf-8-sig")),
                       ("latin1", (with_comment("é") + "CAFE = 'café'\n").encode("latin-1", "replace")),
                       ("huge", (SOLUTION + "# " + "x" * 1_500_000 + "\n").encode())):
        subs[name].mkdir()
        (subs[name] / f"{EX01}.py").write_bytes(data)
    rows = run.grade([str(p) for p in subs.values()], only=[EX01], jobs=2)
    got = dict(zip(subs, (r["exercises"][EX01] for r in rows), strict=True))
    full = load_suite(EX01).max_score
    for name in ("outside", "bom", "latin1", "huge"):
        assert (got[name]["status"], got[name]["score"]) == ("graded", full), (name, got[name])
    for name, code, char in (("surrogate", "LOAD_SURROGATE", "U+D83D"), ("nul", "LOAD_NULL_CHAR", "U+0000")):
        row = got[name]
        assert row["status"] == "error" and row["score"] == 0, (name, row)
        assert {t["code"] for t in row["tests"]} == {code}, row
        assert char in row["message"] and "line " in row["message"] and "grader_reason" not in row
    previous = [r for r in rows if r["submission"] == str(subs["surrogate"])]
    assert _resume.plan(previous, [str(subs["surrogate"])], [EX01], rows[0].get("seed")).paths == []


def test_the_pytest_entry_fails_the_students_items_not_the_graders(tmp_path):
    from test_pytest_plugin import grade_args, junit, run_pytest

    nb = notebook(tmp_path / "nb.ipynb", with_comment(HALF))
    proc = run_pytest(*grade_args(nb, tmp_path, "-k", "ex01", f"--junitxml={tmp_path / 'j.xml'}"))
    cases = junit(tmp_path / "j.xml")
    assert cases and all(not c["passed"] and c["code"] == "LOAD_SURROGATE" and c["score"] == 0
                         for c in cases.values()), (cases, proc.stdout[-3000:])
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "GRADER_TROUBLE" not in proc.stdout and "UnicodeEncodeError" not in proc.stdout + proc.stderr


def test_similarity_compares_the_class_with_such_a_notebook_and_says_what_it_skips(tmp_path, capsys):
    """Three notebooks (one with half an emoji, two verbatim copies) and one that is not a notebook: the copies are a
    pair in pairs.csv, the emoji one is compared as written, the broken one is skipped with a line saying why."""
    pytest.importorskip("copydetect", reason="pip install 'tapetrace[similarity]'")
    from autograder import cli

    mine = SOLUTION.replace("hidden", "width")  # code of their own: not the template's
    subs = [notebook(tmp_path / "emoji.ipynb", with_comment(HALF)),
            notebook(tmp_path / "ana.ipynb", mine), notebook(tmp_path / "ben.ipynb", mine)]
    (tmp_path / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    out = tmp_path / "sim"
    code = cli.main(["similarity", *map(str, subs), str(tmp_path / "broken.ipynb"), "--out", str(out),
                     "--only", EX01, "--jobs", "1"])
    err = capsys.readouterr().err
    assert code == 0, err
    pairs = {(r["a"], r["b"]): float(r["similarity"])
             for r in csv.DictReader((out / "pairs.csv").open(encoding="utf-8"))}
    assert pairs.get(("ana", "ben")) == 1.0, pairs
    assert (out / "export" / EX01 / "submissions" / "emoji.py").read_text(encoding="utf-8").count(REPLACEMENT) == 1
    skipped = [line for line in err.splitlines() if "broken" in line]
    assert len(skipped) == 1 and "skipped" in skipped[0] and "not a valid notebook" in skipped[0], err
    assert f"{EX01}: not compared" not in err
