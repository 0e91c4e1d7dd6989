"""Reading is bounded: linear-time parsing, and every read in a child process under a time and memory budget.

The deadlines here are hang guards, never speed targets: what took minutes to hours before (a
backtracking pattern, IPython re-reading a cell per rewrite) must finish at all within a generous
budget, and what still exceeds a budget must cost its own submission only.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from autograder.core.paths import EXERCISES, ROOT, SOLUTIONS
from autograder.engine import reading as _reading
from autograder.engine.run import GradingRun
from autograder.submissions import ipython_cells as _ipython_cells
from autograder.submissions import loader as _loader
from autograder.submissions import loadguard as _loadguard

TEMPLATE = ROOT / "student_template" / "tapetrace.ipynb"
GENEROUS = 300.0  # seconds: a hang guard on a loaded machine
TIGHT = 1.0  # seconds: a reading budget the child's start is not on (it says "ready" first)
SLOW_CELLS = 40_000  # cells of three lines: ~9 s to read on this machine, 1 s would need 9x its speed


def slow_notebook(tmp: Path) -> Path:
    """A notebook whose reading (not parsing of one pathological cell: plain volume) takes many seconds."""
    return notebook_with(tmp, "many.ipynb", [code(f"v{i} = {i}\ndef f{i}(x):\n    return x + v{i}\n")
                                             for i in range(SLOW_CELLS)])


def notebook_with(tmp: Path, name: str, extra_cells: list[dict], extra_meta: str = "") -> Path:
    """The template notebook with cells added after ex01's code cell (and raw text added to its metadata)."""
    nb = json.loads(TEMPLATE.read_text())
    at = next(i for i, c in enumerate(nb["cells"])
              if c["cell_type"] == "code" and c["metadata"].get("tapetrace", {}).get("role") == "answer")
    nb["cells"][at + 1:at + 1] = extra_cells
    text = json.dumps(nb)
    if extra_meta:
        text = text[:-1] + f', "x": {extra_meta}}}'
    path = tmp / name
    path.write_text(text)
    return path


def code(source: str) -> dict:
    return {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}


# ------------------------------------------------------------------ linear parsing
def test_a_jupytext_header_of_spaces_reads_at_once(tmp_path):
    """`# %%` then 50,000 spaces: a backtracking pattern took ~24 s at 2,000 and grew with the cube."""
    script = tmp_path / "script.py"
    script.write_text("# %%" + " " * 50_000 + "x\nimport math\n\n# %% [markdown]\n## ex01_torch_mlp\n\n# %%\nx = 1\n")
    with _loadguard.Reader(GENEROUS) as reader:
        sub = reader.load(str(script))
    assert sub.form == "percent" and "x = 1" in sub.sources["ex01_torch_mlp"]


def test_thousands_of_shell_lines_are_tokenised_once(monkeypatch):
    """IPython re-tokenised the whole cell after each of up to 500 rewrites (~1 min per 1,000 `!cmd` lines):
    counted in lines tokenised, not in seconds."""
    from IPython.core import inputtransformer2

    read = [0]
    tokenise = inputtransformer2.make_tokens_by_line

    def counting(lines: list[str]) -> list:
        read[0] += len(lines)
        return tokenise(lines)

    monkeypatch.setattr(inputtransformer2, "make_tokens_by_line", counting)
    n = 3000
    cell = "\n".join(f"!echo {i}" for i in range(n)) + "\n"
    _ipython_cells.transform_cell(cell)
    assert read[0] <= 3 * n, f"{read[0]} lines tokenised for a cell of {n}"


def test_a_cell_of_shell_lines_reads_in_a_notebook(tmp_path):
    path = notebook_with(tmp_path, "bang.ipynb", [code("\n".join(f"!echo {i}" for i in range(5000)))])
    with _loadguard.Reader(GENEROUS) as reader:
        sub = reader.load(str(path))
    assert sub.sources["ex01_torch_mlp"] is not None


def test_ipython_transforms_are_unchanged():
    """The linear transform gives what IPython's own whole-cell transform gives, on seeded random cells."""
    from IPython.core.inputtransformer2 import TransformerManager

    tm = TransformerManager()
    pieces = ["x = 1", "!ls -la", "%time y = 2", "files = !ls", "r = %pwd", "obj?", "obj.attr??", "?obj",
              "def f():\n    !echo hi\n    return 1", "if True:\n    %matplotlib inline\n    z = 3",
              "s = '''multi\n!not a magic\n'''", "d = {\n  'a': 1,\n  'b': 2}", "print('why?')", "x = (1,\n  2)",
              "  # comment?", "", "y = x % 3", ",f a b", "/f 1", ";f a", "x = [i for i in\n  range(3)]?",
              ">>> a = 1", "s = 'unterminated", "x = (1,", "  bad_indent = 1", "x = 1; !ls", "if x:\n  !a\n !b"]
    rng = random.Random(2026)
    compared = 0
    for _ in range(1500):
        src = "\n".join(rng.choice(pieces) for _ in range(rng.randint(1, 10))) + "\n"
        try:
            want = tm.transform_cell(src)
        except Exception:  # noqa: BLE001 - IPython gives up on it: so does transform_cell (it keeps the text)
            continue
        assert _ipython_cells._ipython(tm, src) == want, src
        compared += 1
    assert compared > 1000


# ------------------------------------------------------------------ budgets
def test_over_the_time_budget_costs_that_submission_only(tmp_path):
    many = slow_notebook(tmp_path)
    with _loadguard.Reader(TIGHT) as reader:
        with pytest.raises(_loadguard.ReadBudgetExceeded) as over:
            reader.load(str(many))
        assert over.value.key == "READ_TIMEOUT" and over.value.status == "unreadable"
        assert reader.load(str(SOLUTIONS)).sources["ex01_torch_mlp"]  # the next one: a fresh child


def test_over_the_memory_budget_costs_that_submission_only(tmp_path):
    """20 MB of nested empty lists in a notebook's metadata: ~1 GB once parsed (in the grader's process before)."""
    lists = notebook_with(tmp_path, "lists.ipynb", [], "[" + "[]," * 7_000_000 + "[]]")
    with _loadguard.Reader(GENEROUS, mem_bytes=256 * 1024**2) as reader:
        with pytest.raises(_loadguard.ReadBudgetExceeded) as over:
            reader.load(str(lists))
        assert over.value.key in ("READ_MEMORY", "READ_FAILED")
        assert reader.load(str(SOLUTIONS)).sources["ex01_torch_mlp"]


def test_the_child_reads_what_the_loader_reads():
    paths = [*sorted(str(p) for p in (ROOT / "examples" / "submissions").iterdir()), str(TEMPLATE)]
    with _loadguard.Reader(GENEROUS) as reader:
        for p in paths:
            assert reader.load(p) == _loader.load(p), p
        with pytest.raises(_loader.SubmissionError, match="no such file"):
            reader.load(str(ROOT / "nope"))


def test_an_oversized_exercise_file_costs_its_exercise_only(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "ex01_torch_mlp.py").write_text((SOLUTIONS / "ex01_torch_mlp.py").read_text())
    with open(sub / "ex03_torch_cnn.py", "wb") as fh:  # sparse: 1 GB without the disk
        fh.truncate(1024**3)
    got = _loader.load(str(sub))
    assert got.sources["ex01_torch_mlp"] and got.refused["ex03_torch_cnn"] == ("ex03_torch_cnn.py", "FILE_TOO_LARGE")
    run = GradingRun(device="cpu", timeout=30, seed=3, sandbox=False, launcher="spawn")
    try:
        res = run.grade([str(sub)], only=["ex01_torch_mlp", "ex03_torch_cnn"])[0]
    finally:
        run.close()
    ex01, ex03 = res["exercises"]["ex01_torch_mlp"], res["exercises"]["ex03_torch_cnn"]
    assert ex01["score"] == ex01["max_score"] > 0, ex01["message"]
    assert ex03["status"] == "unreadable" and ex03["score"] == 0 and "larger than" in ex03["message"]


def test_a_submission_over_budget_is_unreadable_and_the_batch_goes_on(tmp_path, monkeypatch):
    many = slow_notebook(tmp_path)
    monkeypatch.setattr(_loadguard, "read_seconds", lambda timeout: TIGHT)
    run = GradingRun(device="cpu", timeout=30, seed=3, sandbox=False, launcher="spawn", lang="es")
    try:
        slow, good = run.grade([str(many), str(SOLUTIONS)], only=["ex01_torch_mlp"])
    finally:
        run.close()
    e = slow["exercises"]["ex01_torch_mlp"]
    assert e["status"] == "unreadable" and e["score"] == 0 and "1 s" in e["message"] and "leerla" in e["message"]
    assert good["total"] == good["max_total"] > 0
    assert list(good["exercises"]) == ["ex01_torch_mlp"] and set(EXERCISES) >= set(slow["exercises"])


def test_the_childs_start_is_not_on_the_budget(tmp_path, monkeypatch):
    """A busy machine may take seconds to start Python and import IPython: that is not the submission's time."""
    (tmp_path / "sitecustomize.py").write_text(f"import time\ntime.sleep({2 * TIGHT})\n")  # a slow start
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    with _loadguard.Reader(TIGHT) as reader:
        assert reader.load(str(SOLUTIONS)).sources["ex01_torch_mlp"]


def test_a_reader_that_cannot_start_is_the_graders_trouble(monkeypatch):
    """No answer from the child (here: Python cannot even run it) gives grader_error rows, never unreadable."""
    monkeypatch.setattr(_loadguard, "START_SECONDS", 5.0)
    with monkeypatch.context() as m:
        m.setattr(_loadguard.sys, "executable", "/bin/false")
        with _loadguard.Reader(GENEROUS) as reader:
            with pytest.raises(_loadguard.ReaderTrouble, match="did not start"):
                reader.load(str(SOLUTIONS))

    def cannot_start(self):
        raise _loadguard.ReaderTrouble("the grader's reading process did not start (EOFError)")

    monkeypatch.setattr(_loadguard.Reader, "_start", cannot_start)
    assert isinstance(_reading.read_all([str(SOLUTIONS)], 30)[0], _loadguard.ReaderTrouble)
    run = GradingRun(device="cpu", timeout=30, seed=3, sandbox=False, launcher="spawn")
    try:
        row = run.grade([str(SOLUTIONS)], only=["ex01_torch_mlp"])[0]["exercises"]["ex01_torch_mlp"]
    finally:
        run.close()
    assert row["status"] == "grader_error" and row["score"] == 0 and "did not start" in row["grader_reason"]
