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
