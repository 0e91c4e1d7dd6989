"""Real student habits in real notebooks, graded with `tapetrace grade`'s engine: exact scores.

Each notebook is the student template with correct answers and one habit written as students write
it (a scratch cell reusing an earlier section, IPython syntax Colab accepts, their own markdown,
moved cells, Colab's packages, a jupytext file, a broken earlier section). With correct code every
exercise gets full marks; with a wrong answer (a mutant's code) it loses exactly that mutant's
points, and nothing else does (docs/grading-contract.md, "Notebook semantics": a notebook means what "Run all" does).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import MUTANTS, mutant_meta

from autograder.builders import notebook as _notebook
from autograder.core.paths import ROOT, SOLUTIONS
from autograder.hidden import load_suite

TEMPLATE = ROOT / "student_template" / _notebook.NOTEBOOK
EX01, EX02, EX03, EX06, EX09, EX10 = ("ex01_torch_mlp", "ex02_torch_training", "ex03_torch_cnn",
                                      "ex06_per_example_grads", "ex09_autograd_tape", "ex10_bridge")


def answer(text: str) -> str:
    """A solution or mutant file as a student's answer cell: no docstring, no markers, no header comments."""
    code = _notebook.code_cell_source(text)
    return re.sub(r"^[ \t]*# (BEGIN|END) SOLUTION\n", "", code, flags=re.M)


def solution(ex: str) -> str:
    return answer((SOLUTIONS / f"{ex}.py").read_text())


def mutant(ex: str, name: str) -> tuple[str, float]:
    """A mutant's code as an answer, and the points it must lose."""
    path = MUTANTS / ex / f"{name}.py"
    fails = mutant_meta(path)["fails"]
    return answer(path.read_text()), sum(c.points for c in load_suite(ex).checks if c.name in fails)


def without_imports(code: str) -> str:
    """What a student writes who imported everything once at the top of the notebook."""
    return "\n".join(ln for ln in code.splitlines() if not ln.startswith(("import ", "from "))) + "\n"


def cell(src: str, **tapetrace) -> dict:
    meta = {"tapetrace": tapetrace} if tapetrace else {}
    return {"cell_type": "code", "id": f"c{abs(hash(src)) % 10**8}", "metadata": meta, "execution_count": None,
            "outputs": [], "source": src.splitlines(keepends=True)}


def markdown(src: str) -> dict:
    return {"cell_type": "markdown", "id": f"m{abs(hash(src)) % 10**8}", "metadata": {},
            "source": src.splitlines(keepends=True)}


def notebook(answers: dict[str, str]) -> dict:
    """The template with these answer cells filled in (the other exercises keep their stubs)."""
    return _notebook.fill_with(json.loads(TEMPLATE.read_text(encoding="utf-8")), answers)


def position(nb: dict, ex: str | None, role: str) -> int:
    return next(i for i, c in enumerate(nb["cells"]) if _notebook.role_of(c) == (ex, role))


def insert(nb: dict, at: int, *cells: dict) -> None:
    nb["cells"][at:at] = list(cells)


def scores(run, tmp_path: Path, nb: dict, only: list[str], name: str = "nb.ipynb") -> dict[str, tuple]:
    path = tmp_path / name
    path.write_text(_notebook.dumps(nb), encoding="utf-8")
    res = run.grade([str(path)], only=only)[0]["exercises"]
    return {ex: (r["score"], r["status"], r["message"][:300]) for ex, r in res.items()}


def full(ex: str) -> tuple:
    return (load_suite(ex).max_score, "graded", "")


# --------------------------------------------------------------------------- using what earlier cells define
def _reuse_notebook(ex02_answer: str) -> dict:
    nb = notebook({EX01: without_imports(solution(EX01)), EX02: ex02_answer})
    insert(nb, position(nb, None, "setup") + 1,
           cell("# my imports, once for the whole notebook\nimport numpy as np\nimport torch\n"
                "from torch import nn, Tensor\nfrom collections.abc import Callable, Sequence\n"))
    at = position(nb, EX02, "answer") + 1
    insert(nb, at, cell(
        "# quick sanity check with my MLP from exercise 1\n"
        "torch.manual_seed(0)\n"
        "xs = torch.randn(64, 2)\n"
        "ys = (xs[:, :1] * xs[:, 1:] > 0).float()\n"
        "net = MLP(2, [16, 16], 1)\n"
        "hist = fit(net, xs, ys, epochs=20, lr=0.05)\n"
        "print(f'loss {hist[0]:.3f} -> {hist[-1]:.3f}', np.round(evaluate(net, xs, ys, bce_with_logits), 3))\n"))
    return nb


def test_names_from_earlier_sections_and_the_top_cell(run, tmp_path):
    """ex01 uses torch imported in a cell above the first exercise; ex02's scratch cell builds ex01's MLP."""
    got = scores(run, tmp_path, _reuse_notebook(without_imports(solution(EX02))), [EX01, EX02])
    assert got == {EX01: full(EX01), EX02: full(EX02)}


def test_names_from_earlier_sections_wrong_answer_loses_its_points(run, tmp_path):
    code, lost = mutant(EX02, "bce_naive")
    got = scores(run, tmp_path, _reuse_notebook(without_imports(code)), [EX01, EX02])
    assert got[EX01] == full(EX01)
    assert got[EX02][:2] == (load_suite(EX02).max_score - lost, "graded")


def test_a_helper_from_an_earlier_section_called_inside_a_later_function(run, tmp_path):
    """ex10's torch_mlp_to_jax calls a helper the student wrote in ex06's section; ex10 reuses ex01's MLP."""
    ex06 = solution(EX06) + (
        "\n\ndef _to_numpy(t):\n    \"\"\"My helper: a detached CPU copy as numpy.\"\"\"\n"
        "    return t.detach().cpu().numpy().copy()\n")
    ex10 = solution(EX10).replace("layer.weight.detach().cpu().numpy().T", "_to_numpy(layer.weight).T")
    ex10 = ex10.replace("layer.bias.detach().cpu().numpy()", "_to_numpy(layer.bias)")
    assert "_to_numpy" in ex10
    nb = notebook({EX01: solution(EX01), EX06: ex06, EX10: ex10})
    insert(nb, position(nb, EX10, "answer") + 1, cell(
        "# does my bridge round-trip?\nm = MLP(3, [5], 2)\np = torch_mlp_to_jax(m)\n"
        "jax_to_torch_mlp(p, m)\nprint([w.shape for w in p['W']])\n"))
    got = scores(run, tmp_path, nb, [EX10])
    assert got == {EX10: full(EX10)}


# --------------------------------------------------------------------------- IPython that Colab accepts
def _ipython_notebook(ex03_answer: str) -> dict:
    """Also: a one-line `pip install` (automagic), `input()`, a helper module written with `%%writefile` and
    imported, and a `%%timeit` cell that defines a `CNN` (inside IPython's timing function: not the notebook's)."""
    ex01 = ("gpu = !nvidia-smi -L\n%matplotlib inline\nprint(gpu)\n" + solution(EX01)
            + "\n\nnn.Linear?\ndisplay(MLP(2, [4], 1))\ncheck(\"ex01\")\n")
    nb = notebook({EX01: ex01, EX03: "%%time\n" + ex03_answer})
    insert(nb, position(nb, EX01, "answer") + 1,
           cell("pip install -q torchviz"), cell("who = input('your name: ')\nprint('hi', who)\n"))
    at = position(nb, EX03, "answer") + 1
    insert(nb, at,
           cell("%%bash\nnvidia-smi | head -n 5\n"),
           cell("ip = get_ipython()\nip.run_line_magic('load_ext', 'autoreload')\n%autoreload 2\n"
                "%time cnn = CNN()\nprint(cnn)\n"),
           cell("%%capture captured\nprint(sum(p.numel() for p in CNN().parameters()))\n"),
           cell("%%timeit -n1 -r1\nclass CNN:  # how long does a class statement take?\n    pass\n"),
           cell("from my_utils import count_params\nprint(count_params(CNN()))\n"))
    insert(nb, position(nb, None, "setup") + 1, cell("!pip install -q tqdm\n%env MY_FLAG=1\n"),
           cell("%%writefile my_utils.py\ndef count_params(m):\n    return sum(p.numel() for p in m.parameters())\n"))
    return nb


def test_ipython_syntax_colab_accepts(run, tmp_path):
    got = scores(run, tmp_path, _ipython_notebook(solution(EX03)), [EX01, EX03])
    assert got == {EX01: full(EX01), EX03: full(EX03)}


def test_ipython_syntax_wrong_answer_loses_its_points(run, tmp_path):
    code, lost = mutant(EX03, "no_relu_conv2")
    got = scores(run, tmp_path, _ipython_notebook(code), [EX01, EX03])
    assert got[EX01] == full(EX01)
    assert got[EX03][:2] == (load_suite(EX03).max_score - lost, "graded")


# --------------------------------------------------------------------------- students' markdown, moved cells
def _layout_notebook(ex01_answer: str) -> dict:
    """Also: ex03's answer cell keeps a wrong `CNN`; the student's fixed `CNN` is a cell at the very end (Run all
    leaves that one)."""
    nb = notebook({EX02: solution(EX02), EX03: mutant(EX03, "no_relu_conv2")[0], EX09: solution(EX09)})
    nb["cells"].append(cell("# ex03 again: my CNN, fixed\n" + solution(EX03)))
    # the student moves ex01's answer cell (it keeps its metadata) to the end of ex02's section ...
    moved = nb["cells"].pop(position(nb, EX01, "answer"))
    moved["source"] = ex01_answer.splitlines(keepends=True)
    at = position(nb, EX02, "figure") + 1
    # ... writes own notes with headings, and scratch cells that use ex02's names right after the moved cell
    insert(nb, at, markdown("### compare with ex01 — my notes\n\nThe MLP from ex01 again:"), moved,
           cell("net = MLP(2, [8], 1)\nx0 = torch.randn(16, 2)\n"
                "hist = fit(net, x0, (x0[:, :1] > 0).float(), epochs=3, lr=0.1)\n"),
           markdown("## ex03 preview\n\n#### ex09_autograd_tape is next week"))
    insert(nb, position(nb, EX09, "answer") + 1, markdown("### ex02_torch_training: why did my loss plateau?"),
           cell("t = torch.tensor(2.0, requires_grad=True)\nprint(backward_graph(t * t + 1))\n"))
    return nb


def test_own_headings_and_moved_cells_follow_the_template(run, tmp_path):
    got = scores(run, tmp_path, _layout_notebook(solution(EX01)), [EX01, EX02, EX03, EX09])
    assert got == {EX01: full(EX01), EX02: full(EX02), EX03: full(EX03), EX09: full(EX09)}


def test_a_moved_cell_with_a_wrong_answer_costs_only_its_exercise(run, tmp_path):
    code, lost = mutant(EX01, "relu_after_last")
    got = scores(run, tmp_path, _layout_notebook(code), [EX01, EX02])
    assert got[EX01][:2] == (load_suite(EX01).max_score - lost, "graded")
    assert got[EX02] == full(EX02)


# --------------------------------------------------------------------------- Colab's packages, google.colab
def test_colab_packages_and_google_colab_imports(run, tmp_path):
    ex02 = ("from tqdm.auto import tqdm\nimport pandas as pd\nimport seaborn as sns\n"
            "from sklearn.datasets import make_moons\nfrom google.colab import files\n"
            + solution(EX02).replace("for _ in range(epochs)]", "for _ in tqdm(range(epochs), leave=False)]"))
    assert "tqdm(range(epochs)" in ex02
    nb = notebook({EX02: ex02, EX09: "import matplotlib.pyplot as plt\n" + solution(EX09)})
    insert(nb, position(nb, None, "setup") + 1,
           cell("from google.colab import drive\ndrive.mount('/content/drive')\nimport torch\n"))
    insert(nb, position(nb, EX02, "answer") + 1, cell(
        "X, Y = make_moons(200, noise=0.2, random_state=0)\n"
        "df = pd.DataFrame({'x0': X[:, 0], 'x1': X[:, 1], 'y': Y})\n"
        "uploaded = files.upload()\n"
        "df.describe()\n"))
    got = scores(run, tmp_path, nb, [EX02, EX09])
    assert got == {EX02: full(EX02), EX09: full(EX09)}


# --------------------------------------------------------------------------- jupytext percent scripts
def percent(nb: dict) -> str:
    """The notebook as jupytext writes it in the percent format (magics commented, metadata in the marker)."""
    out = ["# ---", "# jupyter:", "#   jupytext:", "#     text_representation:", "#       extension: .py",
           "#       format_name: percent", "# ---", ""]
    for c in nb["cells"]:
        src = _notebook.source_of(c)
        meta = " ".join(f"{k}={json.dumps(v)}" for k, v in c.get("metadata", {}).items())
        if c["cell_type"] == "markdown":
            out.append(("# %% [markdown] " + meta).rstrip())
            out += [("# " + ln).rstrip() for ln in src.splitlines()]
        else:
            out.append(("# %% " + meta).rstrip())
            out += [("# " + ln) if re.match(r"\s*(%|!|\w+ = !)", ln) else ln for ln in src.splitlines()]
        out.append("")
    return "\n".join(out) + "\n"


def test_jupytext_percent_file_is_split_like_its_notebook(run, tmp_path):
    """Each exercise's cells start with `from __future__ import annotations`, and ex02 and ex05 both define
    `fit`: as one script that was a SyntaxError everywhere and one `fit` for both."""
    ex01 = "%matplotlib inline\n" + solution(EX01)
    nb = notebook({EX01: ex01, EX02: solution(EX02), "ex05_jit_train_step": solution("ex05_jit_train_step")})
    path = tmp_path / "tapetrace.py"
    path.write_text(percent(nb))
    res = run.grade([str(path)], only=[EX01, EX02, "ex05_jit_train_step"])[0]["exercises"]
    assert {ex: (r["score"], r["status"]) for ex, r in res.items()} == {
        ex: full(ex)[:2] for ex in (EX01, EX02, "ex05_jit_train_step")}


# --------------------------------------------------------------------------- isolation still holds
def test_broken_and_endless_earlier_sections_cost_later_ones_nothing(fast_run, tmp_path):
    """ex01's cell raises at its end, ex02's never finishes (a top-level loop, and a call that loops with a
    bare except: stopped at its budget, ex02 is graded on its definitions); ex03 uses names from both: it gets full
    marks, within the budget."""
    ex01 = solution(EX01) + "\nraise RuntimeError('not finished yet')\n"
    ex02 = solution(EX02) + (
        "\n\nimport time\n\ndef train_all_night():\n    while True:\n        try:\n            time.sleep(0.01)\n"
        "        except:\n            pass\n\nHIDDEN = 16\ntrained = train_all_night()\n\nwhile True:\n    pass\n")
    ex03 = solution(EX03) + (
        "\n\n_helper_net = MLP(4, [HIDDEN], 2)\n\ndef _debug():\n    return trained\n")
    nb = notebook({EX01: ex01, EX02: ex02, EX03: ex03})
    got = scores(fast_run, tmp_path, nb, [EX01, EX02, EX03])
    assert got[EX01][:2] == (0.0, "error") and "not finished yet" in got[EX01][2]
    # its own endless top-level run is stopped and it is graded on its definitions (tests/test_top_level_runs.py)
    assert got[EX02][:2] == full(EX02)[:2] and "`trained = train_all_night()`" in got[EX02][2]
    assert got[EX03] == full(EX03)
