"""``tapetrace similarity`` (autograder/reports/similarity.py): renamed, reordered copies rank above honest work;
template code never counts; notebooks are compared by their graded code only; the outputs (pages with
marked spans, pairs.csv, the MOSS/JPlag export) are written.

The class: the solutions and the valid variants of tests/mutants (honest work, written apart from one
another), copies of two of them with renamed variables and helpers in another order (one as a folder, one
as a notebook made from the student template), and an untouched stub.
"""

from __future__ import annotations

import ast
import copy
import csv
import json
import re
import shutil

import pytest
from conftest import MUTANTS

from autograder.core.paths import EXERCISES_DIR, ROOT, SOLUTIONS

pytest.importorskip("copydetect", reason="pip install 'tapetrace[similarity]'")

from autograder import cli  # noqa: E402
from autograder.reports import similarity as _similarity

EX2, EX3 = "ex02_torch_training", "ex03_torch_cnn"


def renamed_and_reordered(src: str) -> str:
    """What a student who copies does: rename the local variables, move the top-level helpers around."""
    for old in sorted(set(re.findall(r"^\s+([a-z_][a-z0-9_]*) = ", src, re.M)), key=len, reverse=True):
        src = re.sub(rf"\b{old}\b", f"{old}_mine", src)
    tree = ast.parse(src)
    lines = src.splitlines(keepends=True)
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    start = min([defs[0].lineno, *(d.lineno for d in defs[0].decorator_list)]) - 1
    chunks = ["".join(lines[min([n.lineno, *(d.lineno for d in n.decorator_list)]) - 1:n.end_lineno]) for n in defs]
    return "".join(lines[:start]) + "\n\n".join(reversed(chunks)) + "\n"


def _folder(top, name, files):
    d = top / name
    d.mkdir(parents=True)
    for ex, text in files.items():
        (d / f"{ex}.py").write_text(text)
    return str(d)


def _notebook(top, name, ex, code):
    nb = json.loads((ROOT / "student_template" / "tapetrace.ipynb").read_text())
    nb = copy.deepcopy(nb)
    cell = next(c for c in nb["cells"] if c.get("metadata", {}).get("tapetrace", {}) == {"exercise": ex,
                                                                                            "role": "answer"})
    cell["source"] = code
    path = top / f"{name}.ipynb"
    path.write_text(json.dumps(nb))
    return str(path)


def _valid(ex, stem):
    return (MUTANTS / ex / f"{stem}.py").read_text()


@pytest.fixture(scope="module")
def cls(tmp_path_factory):
    top = tmp_path_factory.mktemp("sim") / "class"
    sol2, sol3 = (SOLUTIONS / f"{EX2}.py").read_text(), (SOLUTIONS / f"{EX3}.py").read_text()
    honest2 = {"sol": sol2, **{s: _valid(EX2, s) for s in ("valid_grad_none_after_forward_explicit_adam",
                                                           "valid_relu_log_no_log1p",
                                                           "valid_softplus_and_set_to_none_false")}}
    honest3 = [sol3, _valid(EX3, "valid_functional_layers"),
               _valid(EX3, "valid_one_sequential_pool_before_relu_dropout_before_relu")]
    subs = []
    for k, (name, code) in enumerate(honest2.items()):
        subs.append(_folder(top, name, {EX2: code, EX3: honest3[k % 3]}))
    subs.append(_folder(top, "copier", {EX2: renamed_and_reordered(honest2["valid_relu_log_no_log1p"])}))
    subs.append(_folder(top, "stub", {EX2: (EXERCISES_DIR / f"{EX2}.py").read_text(),
                                      EX3: (EXERCISES_DIR / f"{EX3}.py").read_text()}))
    mine = _valid(EX2, "valid_logsigmoid_inference_mode_loop")
    subs.append(_notebook(top, "nb_alice", EX2, mine))
    subs.append(_notebook(top, "nb_bob", EX2, renamed_and_reordered(mine)))
    out = top.parent / "out"
    assert cli.main(["similarity", *subs, "--out", str(out), "--threshold", "0.99"]) == 0
    with open(out / "pairs.csv", encoding="utf-8") as fh:
        above = list(csv.DictReader(fh))
    per, _notes = _similarity.collect(subs)
    pairs = {ex: _similarity.compare(ex, {n: _similarity.canonical(c) for n, c in codes.items()},
                                     _similarity.template_code(ex)) for ex, codes in per.items()}
    return {"subs": subs, "out": out, "above": above, "pairs": pairs}


def test_renamed_reordered_copies_rank_above_honest_work(cls):
    pairs = cls["pairs"][EX2]
    copies = {frozenset(("copier", "valid_relu_log_no_log1p")), frozenset(("nb_alice", "nb_bob"))}
    top = [frozenset((p.a, p.b)) for p in pairs[:2]]
    assert set(top) == copies, [(p.a, p.b, round(p.score, 3)) for p in pairs[:5]]
    honest = [p for p in pairs if frozenset((p.a, p.b)) not in copies]
    assert min(p.score for p in pairs[:2]) > 0.99 > max(p.score for p in honest)
    assert {frozenset((r["a"], r["b"])) for r in cls["above"] if r["exercise"] == EX2} == copies  # pairs.csv


def test_the_template_never_counts(cls):
    for ex, pairs in cls["pairs"].items():
        assert not [p for p in pairs if "stub" in (p.a, p.b)], ex  # the stub shares only template code
    # the notebooks left ex03 as the template gave it: nothing of theirs to compare there
    assert not [p for p in cls["pairs"].get(EX3, []) if p.a.startswith("nb_") or p.b.startswith("nb_")]


def test_notebooks_are_compared_by_their_graded_code_only(cls):
    nb = next(s for s in cls["subs"] if s.endswith("nb_alice.ipynb"))
    code = _similarity.graded_code(nb)
    assert "def fit" in code[EX2] or "def train_step" in code[EX2]
    assert "class MLP" not in code[EX2]  # not ex01's section (context "Run all" would give it)
    setup = next(c for c in json.loads(open(nb).read())["cells"]
                 if c.get("metadata", {}).get("tapetrace", {}).get("role") == "setup")
    first = next(ln for ln in "".join(setup["source"]).splitlines() if ln.strip() and not ln.startswith("#"))
    assert first not in code[EX2]  # nor the set-up cell


def test_outputs_pages_csv_and_moss_jplag_export(cls):
    out = cls["out"]
    page = (out / f"{EX2}.html").read_text()
    assert page.count("<mark>") >= 2 and "nb_alice" in page and "copier" in page
    assert f'href="{EX2}.html"' in (out / "index.html").read_text()
    exp = out / "export" / EX2
    assert sorted(p.stem for p in (exp / "submissions").glob("*.py")) == sorted(
        ["sol", "valid_grad_none_after_forward_explicit_adam", "valid_relu_log_no_log1p",
         "valid_softplus_and_set_to_none_false", "copier", "stub", "nb_alice", "nb_bob"])
    assert (exp / "template" / f"{EX2}.py").read_text() == (EXERCISES_DIR / f"{EX2}.py").read_text()
    assert "moss -l python -b" in (out / "export" / "README.md").read_text()
    # the export holds the graded code as the student wrote it (not the canonical order)
    assert (exp / "submissions" / "copier.py").read_text() == renamed_and_reordered(
        _valid(EX2, "valid_relu_log_no_log1p"))


def test_canonical_order_ignores_names_and_order():
    a = "import x\n\ndef f(a):\n    b = a + 1\n    return b\n\ndef g(c):\n    return [c] * 2\n"
    b = "import x\n\ndef g(zz):\n    return [zz] * 2\n\ndef f(q):\n    r = q + 1\n    return r\n"
    from copydetect.utils import filter_code

    assert filter_code(_similarity.canonical(a), "a.py", "python")[0] == \
        filter_code(_similarity.canonical(b), "b.py", "python")[0]
    assert _similarity.canonical("def broken(:\n") == "def broken(:\n"


def test_cli_refusals(tmp_path, capsys):
    assert cli.main(["similarity", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 2
    assert cli.main(["similarity", str(tmp_path), "--out", str(tmp_path / "o"), "--threshold", "2"]) == 2
    shutil.rmtree(tmp_path / "o", ignore_errors=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli.main(["similarity", str(empty), "--out", str(tmp_path / "o")]) == 2
    assert "no exercise code" in capsys.readouterr().err


def test_fingerprinting_in_processes_gives_the_same_pairs():
    base = _similarity.canonical((SOLUTIONS / f"{EX2}.py").read_text())
    codes = {f"s{k:02d}": base + f"\nSTUDENT = ({k} * 7) - {k % 5}\n" for k in range(70)}
    one = _similarity.compare(EX2, codes, _similarity.template_code(EX2), max_share=1.0, jobs=1)
    two = _similarity.compare(EX2, codes, _similarity.template_code(EX2), max_share=1.0, jobs=2)
    assert len(one) == 70 * 69 // 2 and [(p.a, p.b, p.sim_a, p.sim_b) for p in one] == [(p.a, p.b, p.sim_a, p.sim_b) for p in two]


def test_a_zipped_notebook_is_compared_by_its_section_too(cls, tmp_path):
    import zipfile

    nb = next(s for s in cls["subs"] if s.endswith("nb_alice.ipynb"))
    z = tmp_path / "alice.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.write(nb, "alice/nb_alice.ipynb")
    assert _similarity.graded_code(str(z)) == _similarity.graded_code(nb)
    assert "tapetrace-context" not in _similarity.graded_code(str(z))[EX2]


# ------------------------------------------------------------------ one submission never stops the report
def test_a_submission_nested_too_deep_is_skipped_and_the_rest_finish(tmp_path, capsys):
    """A 30,000-term expression raised RecursionError and stopped the class's report (exit 1, no pairs.csv)."""
    sol = (SOLUTIONS / f"{EX2}.py").read_text()
    deep = sol + "\n\nBIG = " + " + ".join(["1"] * 30000) + "\n"
    subs = [_folder(tmp_path, "alice", {EX2: sol}), _folder(tmp_path, "bob", {EX2: renamed_and_reordered(sol)}),
            _folder(tmp_path, "deep", {EX2: deep})]
    out = tmp_path / "out"
    assert cli.main(["similarity", *subs, "--out", str(out), "--threshold", "0.9"]) == 0
    err = capsys.readouterr().err
    assert re.search(rf"note: deep: {EX2} skipped \(RecursionError", err), err
    with open(out / "pairs.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["a"], r["b"]) for r in rows] == [("alice", "bob")]
    assert "deep" in (out / "index.html").read_text()  # the note is on the page too


def test_a_tokenizer_failure_skips_that_submission_only(monkeypatch):
    real = _similarity._fingerprint

    def flaky(cd, name, code, boilerplate=None):
        if name.startswith("bad"):
            raise MemoryError("the tokenizer gave up")
        return real(cd, name, code, boilerplate)

    monkeypatch.setattr(_similarity, "_fingerprint", flaky)
    sol = _similarity.canonical((SOLUTIONS / f"{EX2}.py").read_text())
    notes: list[str] = []
    pairs = _similarity.compare(EX2, {"a": sol, "b": sol, "bad": sol}, _similarity.template_code(EX2), notes=notes)
    assert [(p.a, p.b) for p in pairs] == [("a", "b")]
    assert notes == [f"bad: {EX2} skipped (MemoryError: the tokenizer gave up)"]


def test_the_export_gives_each_student_a_file_of_their_own(tmp_path):
    """Names that map to one file name ("a b" and "a_b") once shared one export file: the last one written
    replaced the other's code in MOSS's and JPlag's input. A name that had to change gets a hash now."""
    _similarity.export(EX2, {"a b": "A = 1\n", "a_b": "B = 2\n", "=x": "C = 3\n"}, [], tmp_path)
    files = sorted((tmp_path / EX2 / "submissions").glob("*.py"))
    assert len(files) == 3, files
    assert sorted(f.read_text() for f in files) == ["A = 1\n", "B = 2\n", "C = 3\n"]
    assert (tmp_path / EX2 / "submissions" / "a_b.py").read_text() == "B = 2\n"
    assert all(not f.name.startswith(("=", "-")) for f in files)


# ------------------------------------------------------------------ the text boundary, per medium
def test_student_names_are_text_in_every_medium(tmp_path):
    sol = (SOLUTIONS / f"{EX2}.py").read_text()
    names = ["=HYPERLINK(1)", "<img src=x onerror=alert(1)>"]
    subs = [_folder(tmp_path, n.replace("/", "_"), {EX2: sol}) for n in names]
    out = tmp_path / "out"
    assert cli.main(["similarity", *subs, "--out", str(out), "--threshold", "0.5"]) == 0
    with open(out / "pairs.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[1][1:3] in (["'=HYPERLINK(1)", "<img src=x onerror=alert(1)>"],
                            ["<img src=x onerror=alert(1)>", "'=HYPERLINK(1)"])
    assert float(rows[1][3]) == 1.0 and not rows[1][3].startswith("'") and rows[1][6].isdigit()  # numbers
    page = (out / f"{EX2}.html").read_text()
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_matched_lines_are_marked_on_the_code_as_written():
    src = ("import torch\n\n\ndef helper(v):\n    # the student's comment\n    total = (v +\n             1)\n"
           "    return total * 2\n")
    norm = _similarity.normalise(src)
    assert "comment" not in norm.text and "total = v + 1" in norm.text
    at = norm.text.index("total = v + 1")
    assert norm.source_lines(at, at + 5) == {6, 7}  # the statement's lines as written
    # a copy reordered and without comments: the page shows each side's own text, its matched lines marked
    sol = (SOLUTIONS / f"{EX2}.py").read_text()
    raw = {"a": sol, "b": renamed_and_reordered(sol)}
    sources = {n: _similarity.normalise(c) for n, c in raw.items()}
    codes = {n: s.text for n, s in sources.items()}
    pairs = _similarity.compare(EX2, codes, _similarity.template_code(EX2))
    page = _similarity.exercise_page(EX2, pairs, codes, sources=sources)
    assert "BEGIN SOLUTION" in page  # the original's comments: the code as written is shown
    marked = re.findall(r"<mark>(.*?)</mark>", page)
    assert any("_mine" in m for m in marked) and any("optimizer.step()" in m for m in marked)
    assert not any('"""' in m for m in marked)  # docstrings are the template's, never evidence


def test_scores_are_the_same_on_every_run(tmp_path):
    """copydetect hashed k-grams with the per-process salted ``hash``: scores moved between runs."""
    import os
    import subprocess
    import sys

    prog = ("from autograder.reports import similarity as s\nfrom autograder.core.paths import SOLUTIONS\n"
            f"a = (SOLUTIONS / '{EX2}.py').read_text()\n"
            f"b = open({str(MUTANTS / EX2 / 'valid_relu_log_no_log1p.py')!r}).read()\n"
            f"p = s.compare('{EX2}', {{'a': s.canonical(a), 'b': s.canonical(b)}}, s.template_code('{EX2}'))\n"
            "print(repr([(x.sim_a, x.sim_b) for x in p]))\n")
    got = {subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert len(got) == 1, got


def test_f_strings_with_fields_are_compared_not_skipped():
    """An f-string with a field (``f"{loss:.3f}"``, in most students' training loops) is unparsed like any code:
    the unparser makes a recorder of its own type per field (it once raised TypeError, and every such submission
    was skipped)."""
    a = 'def f(loss, n):\n    print(f"step {n}: {loss:.3f} {loss!r}")\n    return f"{n}"\n'
    b = 'def f(l, k):\n    print(f"step {k}: {l:.3f} {l!r}")\n    return f"{k}"\n'
    ca, cb = _similarity.canonical(a), _similarity.canonical(b)
    assert ca != a and "{" in ca and ":.3f}" in ca
    from copydetect.utils import filter_code

    assert filter_code(ca, "a.py", "python")[0] == filter_code(cb, "b.py", "python")[0]
