"""Notebook semantics = "Run all", without a grading run: the builder (_cells) and the executor (_exec).

What a student's notebook means is decided here in text (cells, sections, IPython's view of a cell,
the context each exercise gets) and in one process (the context's budget, failures swallowed, the
stand-ins). tests/test_notebook_habits.py grades whole notebooks; this file pins the rules.
"""

from __future__ import annotations

import json
import sys
import textwrap
import types

import pytest

from autograder.builders import public_graded as _public_graded
from autograder.core import registry as _registry
from autograder.core.paths import EXERCISES
from autograder.submissions import cells as _cells
from autograder.submissions import execute as _exec
from autograder.submissions import ipython_cells as _ipython_cells
from autograder.submissions import loader as _loader
from autograder.submissions import standins as _standins

EX = EXERCISES


def _code(src, **meta):
    return {"cell_type": "code", "source": textwrap.dedent(src), "metadata": {"tapetrace": meta} if meta else {},
            "outputs": [], "execution_count": None}


def _md(src, **meta):
    return {"cell_type": "markdown", "source": src, "metadata": {"tapetrace": meta} if meta else {}}


def _graded(cells, contracts=None):
    return _cells.graded_sources(_cells.notebook_cells({"cells": cells}, EX), EX, contracts=contracts)


def _sections(cells):
    return _cells.sections(_cells.notebook_cells({"cells": cells}, EX), EX)


def _load(text, contract=(), budget=_exec.CONTEXT_BUDGET):
    """Runs a graded module in a fresh namespace the way a worker does; returns (namespace, report)."""
    prepared = _exec.prepare(text, "/graded/section.py", contract)
    ns = {"__name__": "graded"}
    return ns, _exec.run(prepared, ns, budget=budget)


# --------------------------------------------------------------------------- IPython's view of a cell
@pytest.mark.parametrize("cell,expect", [
    ("gpu = !nvidia-smi\nprint(gpu)\n", "gpu = get_ipython().getoutput('nvidia-smi')\nprint(gpu)\n"),
    ("jax.lax.cond?\nx = 1\n", "get_ipython().run_line_magic('pinfo', 'jax.lax.cond')\nx = 1\n"),
    ("def f():\n    %timeit g()\n    return 1\n", "def f():\n    get_ipython().run_line_magic('timeit', 'g()')\n"
                                                   "    return 1\n"),
    ("\n\nx = 1\n", "\n\nx = 1\n"),  # leading blank lines kept: line numbers stay the cell's
    ("%time params = fit(3)\n", "params = fit(3)\n"),  # %time runs its statement in the notebook
    ("%%time\nx = 1\ny = 2\n", "\nx = 1\ny = 2\n"),  # a Python cell magic keeps its body, same lines
    ("%%capture out\n%pip install tqdm\nz = 3\n", "\nget_ipython().run_line_magic('pip', 'install tqdm')\nz = 3\n"),
    # %%timeit runs its body in a function: what it assigns or defines is not the notebook's (IPython's own rule)
    ("%%timeit -n1\ndef MLP():\n    return 1\n\nz = MLP()\n",
     "def _tapetrace_timeit():\n    def MLP():\n        return 1\n\n    z = MLP()\n    pass\n_tapetrace_timeit()\n"),
    ("!pip install \\\n   tqdm\nw = 1\n", "get_ipython().system('pip install    tqdm')\n\nw = 1\n"),
    # a one-line cell naming a magic without `%` runs it (IPython's automagic; Colab shows `pip install` so)
    ("pip install -q tqdm\n", "get_ipython().run_line_magic('pip', 'install -q tqdm')\n"),
    ("cd /content/drive\n", "get_ipython().run_line_magic('cd', '/content/drive')\n"),
    ("ls\n", "get_ipython().run_line_magic('ls', '')\n"),
    ("reset -f\n", "get_ipython().run_line_magic('reset', '-f')\n"),
    ("time params = fit(3)\n", "params = fit(3)\n"),
    # a notebook runs as __main__ (a graded module has its own name)
    ("if __name__ == '__main__':\n    demo = 1\n", "if \"__main__\" == \"__main__\":\n    demo = 1\n"),
    ("x = 1 if \"__main__\"==__name__ else 2\n", "x = 1 if \"__main__\" == \"__main__\" else 2\n"),
    ("ls = 3\n", "ls = 3\n"),  # an assignment, a call, a longer cell: Python
    ("time.sleep(0)\n", "time.sleep(0)\n"),
    ("run (model)\n", "run (model)\n"),
    ("history = fit(1)\nhistory [-1]\n", "history = fit(1)\nhistory [-1]\n"),
])
def test_cells_read_as_ipython_reads_them(cell, expect):
    out = _ipython_cells.transform_cell(cell)
    assert out == expect
    compile(out, "cell", "exec")


@pytest.mark.parametrize("magic", ["%%bash\necho hi\n", "%%html\n<b>x</b>\n", "%%writefile helpers.py\nx = 1\n",
                                   "  %%javascript\nalert(1)\n"])
def test_cell_magics_whose_body_is_not_python_are_dropped(magic):
    assert _ipython_cells.transform_cell(magic) is None


# --------------------------------------------------------------------------- sections
def test_only_template_headings_start_sections_and_moved_cells_go_alone():
    cells = [
        _code("import numpy as np\n"),
        _md("## ex01_torch_mlp — an nn.Module", exercise=EX[0], role="markdown"),
        _code("A = 1\n", exercise=EX[0], role="answer"),
        _md("### compare with ex01: my notes"),  # the student's own heading: nothing changes
        _code("A2 = A + 1\n"),
        _md("## ex02_torch_training — a copy the student pasted, no metadata"),
        _code("A3 = 3\n"),
        _md("## ex02_torch_training — training", exercise=EX[1], role="markdown"),
        _code("B0 = 0\n"),
        _code("C = 'moved'\n", exercise=EX[2], role="answer"),  # ex03's answer cell, moved up here
        _code("B = A + 1\n"),  # still ex02's: the moved cell drags nothing with it
        _code('check("ex02")\n', exercise=EX[1], role="check"),
        _md("## ex03_torch_cnn", exercise=EX[2], role="markdown"),
        _md("## Submit", role="markdown"),  # the template's outro closes the last section
        _code("AFTER = 1\n"),
    ]
    src = _sections(cells)
    assert src[EX[0]].split() == ["A", "=", "1", "A2", "=", "A", "+", "1", "A3", "=", "3"]
    assert src[EX[1]].split() == ["B0", "=", "0", "B", "=", "A", "+", "1"]
    assert src[EX[2]].strip() == "C = 'moved'"
    assert all(src[e] is None for e in EX[3:])


def test_without_metadata_only_headings_of_the_template_form_start_sections():
    cells = [_md("# My homework"), _code("import math\n"),
             _md("## ex01_torch_mlp — MLP"), _code("A = 1\n"),
             _md("## Exercise ex02 — my own title"), _code("A2 = 2\n"),  # not the template's form
             _md("### ex02 notes"), _code("A3 = 3\n"),
             _md("Text first\n\n## ex02_torch_training"), _code("A4 = 4\n"),  # the heading is not its first line
             _md("## ex02_torch_training — training"), _code("B = 1\n")]
    src = _sections(cells)
    assert src[EX[0]].split() == ["A", "=", "1", "A2", "=", "2", "A3", "=", "3", "A4", "=", "4"]
    assert src[EX[1]].strip() == "B = 1"


def test_setup_and_helper_only_cells_are_never_graded_nor_context():
    cells = [_code("_tapetrace_setup('x', 'y')\nSECRET = 1\n"), _code("SETUP = 1\n", role="setup"),
             _md("## ex01_torch_mlp"), _code('check("ex01")\nhint("ex01", 2)  # stuck\n'),
             _code("A = 1\ncheck('ex01')\n"),  # an answer cell ending with a check: graded (check is a no-op)
             _md("## ex02_torch_training"), _code("B = A\n")]
    g = _graded(cells)
    sec, ctx = _cells.split_graded(g[EX[1]])
    assert "SECRET" not in g[EX[1]] and "SETUP" not in json.dumps(ctx)
    assert _cells.split_graded(g[EX[0]])[0].strip() == "A = 1\ncheck('ex01')"
    ns, _ = _load(g[EX[1]])
    assert ns["B"] == 1


# --------------------------------------------------------------------------- the context
def test_context_is_what_later_code_can_see_and_only_what_it_needs():
    cells = [
        _code("import math\nimport numpy as np\nPI = math.pi\nprint('hello')\n"),
        _md("## ex01_torch_mlp"),
        _code("""\
            from __future__ import annotations
            def helper(x: Undefined) -> float:
                return np.tanh(x) + PI
            SCALE = 2.0
            SCALE *= 3
            CONFIG = {"lr": 0.1}
            CONFIG["lr"] = 0.5
            for i in range(10 ** 9):  # a loop: never replayed
                SCALE += 1
            UNUSED = [0] * 10
            train_for_hours = 1
            helper(3.0)  # a bare expression: never replayed
            if True:
                BRANCH = "kept"
            else:
                BRANCH = "no"
            try:
                import tqdm_not_installed_here
            except ImportError:
                tqdm_not_installed_here = None
            """),
        _md("## ex02_torch_training"),
        _code("def f():\n    return helper(0.0), SCALE, CONFIG['lr'], BRANCH, tqdm_not_installed_here\n"),
        _code("LATER = 1\n"),
        _md("## ex03_torch_cnn"),
        _code("NOT_ABOVE = 1\n"),
    ]
    g = _graded(cells)
    ns, report = _load(g[EX[1]])
    assert ns["f"]() == (pytest.approx(3.14159265), 6.0, 0.5, "kept", None)
    assert "UNUSED" not in ns and "train_for_hours" not in ns and "i" not in ns  # not needed: not run
    assert "NOT_ABOVE" not in json.dumps(_cells.split_graded(g[EX[1]])[1])  # below: not context
    assert report.failed == 0 and report.interrupted == 0 and report.chosen == report.ran


def test_contract_names_defined_in_an_earlier_section_are_found():
    cells = [_md("## ex01_torch_mlp"), _code("def fit(model):\n    return 'from ex01'\n"),
             _md("## ex02_torch_training"), _code("def train_step():\n    return 1\n")]
    ns, _ = _load(_graded(cells)[EX[1]], contract=("train_step", "fit"))
    assert ns["fit"](None) == "from ex01"


def test_later_redefinitions_of_the_contract_win_as_in_run_all():
    """A scratch cell below a section that redefines one of its contract's names is what "Run all" leaves:
    it is graded, with what it reads (an import only it needs, a helper between). Not a redefinition: a name
    the later section's own contract has (ex05's `fit`), a helper that only shares the name (another
    signature), an assignment; a later cell never modifies an object (monkeypatching)."""
    cells = [_code("import math\nimport json\n"),
             _md("## ex01_torch_mlp"), _code("class MLP:\n    v = 'first try'\n"),
             _md("## ex02_torch_training"),
             _code("def fit():\n    return 'torch'\ndef train_step(model, optimizer, x, y, loss_fn):\n    return 'step'\n"),
             _md("## ex03_torch_cnn"),
             _code("def _scale():\n    return math.pi\n"),
             _code("class MLP:  # fixed it\n    v = _scale()\n    w = json.dumps(1)\n"),
             _md("## ex04_jax_mlp"), _code("def accuracy(params, x, y):\n    return 'first try'\n"),
             _md("## ex05_jit_train_step"),
             _code("def fit():\n    return 'jax'\ndef accuracy(params, x, y):  # fixed\n    return 'fixed'\n"),
             _md("## ex07_flax_cnn"),
             _code("def accuracy(logits, labels):  # my helper\n    return 'helper'\ntrain_step = lambda: 'flax'\n"),
             _md("## Submit", role="markdown"),
             _code("json.dumps = None\nmath.pi = 3\nMLP.v = 'patched'\n")]
    contracts = _registry.contracts(EX)
    g = _graded(cells, contracts)
    ns, _ = _load(g[EX[0]], contract=contracts[EX[0]])
    assert (ns["MLP"].v, ns["MLP"].w) == (pytest.approx(3.14159265), "1")
    ns, _ = _load(g[EX[1]], contract=contracts[EX[1]])
    assert ns["fit"]() == "torch"
    assert ns["train_step"](*"mxyzl") == "step"
    ns, _ = _load(g[EX[4]], contract=contracts[EX[4]])
    assert ns["fit"]() == "jax"
    ns, _ = _load(g[EX[3]], contract=contracts[EX[3]])
    assert ns["accuracy"](1, 2, 3) == "fixed"
    assert _cells.later_cells(_graded(cells)[EX[0]]) == []  # no contracts given: no later cells
    del cells[2]  # ex01's answer cell deleted: the one further down is the exercise's answer
    ns, _ = _load(_graded(cells, contracts)[EX[0]], contract=contracts[EX[0]])
    assert ns["MLP"].v == pytest.approx(3.14159265)
    assert _graded(cells[:3], contracts)[EX[0]] is None and _graded(cells)[EX[0]] is None


def test_files_written_with_writefile_are_imported_and_run_as_in_colab():
    """`%%writefile NAME.py` writes a file Colab's kernel then imports or `%run`s; the grader has no such file:
    the notebook's own text is served instead (the last write, appends joined); a file written below the
    section is not there yet."""
    cells = [_code("%%writefile my_utils.py\ndef double(x):\n    return 2 * x\n"),
             _code("%%writefile -a my_utils.py\nTHREE = 3\n"),
             _code("%%writefile 'setup_vars.py'\nSEED = 7\n"),
             _md("## ex01_torch_mlp"),
             _code("from my_utils import double, THREE\n%run -i setup_vars.py\nA = (double(THREE), SEED)\n"),
             _md("## ex02_torch_training"),
             _code("%%writefile late.py\nX = 1\n")]
    try:
        ns, _ = _load(_graded(cells)[EX[0]])
        assert ns["A"] == (6, 7)
        assert "late.py" not in _cells.written_files(_graded(cells)[EX[0]])
        assert set(_cells.written_files(_graded(cells)[EX[1]])) == {"my_utils.py", "setup_vars.py", "late.py"}
    finally:
        _standins.install_written_files({})
        sys.modules.pop("my_utils", None)
    assert not any(type(f).__name__ == "_FilesFinder" for f in sys.meta_path)


def test_dynamic_lookups_get_every_kept_statement():
    cells = [_md("## ex01_torch_mlp"), _code("A = 1\nB = 2\n"),
             _md("## ex02_torch_training"), _code("TOTAL = sum(globals()[k] for k in ('A', 'B'))\n")]
    ns, _ = _load(_graded(cells)[EX[1]])
    assert ns["TOTAL"] == 3


def test_failures_in_other_sections_are_skipped_and_counted():
    cells = [_code("import sys\nnot valid python (\n"),  # a cell that does not parse defines nothing
             _md("## ex01_torch_mlp"),
             _code("""\
                 import sys
                 def good():
                     return "ok"
                 BROKEN = 1 / 0
                 STOPPED = sys.exit("stop")
                 INTERRUPTED = (_ for _ in ()).throw(KeyboardInterrupt)
                 AFTER = good()
                 """),
             _md("## ex02_torch_training"),
             _code("def f():\n    return AFTER, good(), [n for n in ('BROKEN', 'STOPPED') if n in globals()]\n")]
    ns, report = _load(_graded(cells)[EX[1]])
    assert ns["f"]() == ("ok", "ok", [])
    assert report.failed == 3


def test_a_slow_earlier_section_is_interrupted_within_the_budget():
    """Top-level training in an early section costs a later exercise at most the context's budget, even
    when it swallows the interruption with a bare except; definitions still run after the budget."""
    cells = [_md("## ex01_torch_mlp"),
             _code("""\
                 import time
                 def train_forever():
                     while True:
                         try:
                             time.sleep(0.01)
                         except:  # noqa: E722 - what students write
                             pass
                 def spin():
                     n = 0
                     while True:
                         n += 1
                 MODEL = train_forever()
                 OTHER = spin()
                 LIMIT = 7
                 def late():
                     return 7
                 """),
             _md("## ex02_torch_training"),
             _code("""\
                 def f():
                     try:
                         return MODEL, OTHER, LIMIT
                     except NameError:
                         return late()
                 X = f()
                 """)]
    clock = _exec._Clock()  # working seconds (the budget's own measure): a busy machine does not inflate them
    ns, report = _load(_graded(cells)[EX[1]], budget=1.5)
    took = clock.elapsed()
    assert ns["X"] == 7
    assert not {"MODEL", "OTHER", "LIMIT"} & set(ns)
    # MODEL: stopped after STATEMENT_LIMIT (1 s); OTHER: after the 0.5 s left; LIMIT: skipped; `def late`: ran
    assert (report.interrupted, report.skipped) == (2, 1), report
    assert took < 1.5 + 0.5, (report, took)


def test_section_errors_point_at_the_section_lines():
    cells = [_code("x = 1\n"), _md("## ex01_torch_mlp"), _code("a = 1\n\nb = undefined_name\n")]
    prepared = _exec.prepare(_graded(cells)[EX[0]], "/graded/ex01.py")
    ns: dict = {}
    with pytest.raises(NameError) as err:
        _exec.run(prepared, ns)
    frames = [f for f in __import__("traceback").extract_tb(err.value.__traceback__) if f.filename == "/graded/ex01.py"]
    assert frames and frames[-1].lineno == 3
    cells[2] = _code("a = 1\nb = (\n")
    with pytest.raises(SyntaxError) as serr:
        _exec.prepare(_graded(cells)[EX[0]], "/graded/ex01.py")
    assert serr.value.lineno == 2


def test_standins_make_notebook_helpers_harmless():
    cells = [_md("## ex01_torch_mlp"), _code("""\
        gpu = !nvidia-smi
        %load_ext autoreload
        get_ipython().run_line_magic("matplotlib", "inline")
        get_ipython().events.register("post_run_cell", print)
        display("shown")
        torch_help = dir?
        A = (len(gpu), gpu.s, check("ex01"), hint("ex01", 2), figure("ex01"), solution("ex01"))
        NAME = input("your name: ")  # Colab waits for an answer; nobody types in a worker
        """)]
    ns, _ = _load(_graded(cells)[EX[0]])
    assert ns["A"] == (0, "", None, None, None, None)
    assert ns["NAME"] == ""
    cells = [_md("## ex01_torch_mlp"), _code("# my answer, timed\n%%time\nA = 1\n")]  # IPython: UsageError, no A
    with pytest.raises(_standins.UsageError, match="%%time"):
        _load(_graded(cells)[EX[0]])


def test_google_colab_standin_only_where_the_real_one_is_absent():
    finder = _standins.install_colab_standin()
    try:
        assert finder is not None  # no Colab here
        from google.colab import drive, files  # noqa: PLC0415

        assert files.upload() == {} and drive.mount("/content/drive") is None
        import google.colab.output as output  # noqa: PLC0415

        assert output.clear() is None
        import google.protobuf  # noqa: PLC0415, F401 - protobuf's namespace package is not shadowed
    finally:
        _standins.remove_colab_standin(finder)
    assert not any(k == "google.colab" or k.startswith("google.colab.") for k in sys.modules)


# --------------------------------------------------------------------------- jupytext percent files
PERCENT = '''\
# ---
# jupyter:
#   jupytext:
#     text_representation:
#       format_name: percent
# ---

# %% [markdown] tapetrace={"role": "markdown"}
# # tapetrace

# %%
from __future__ import annotations
import math

# %% [markdown] tapetrace={"exercise": "ex01_torch_mlp", "role": "markdown"}
# ## ex01_torch_mlp — an MLP

# %% tapetrace={"exercise": "ex01_torch_mlp", "role": "answer"} otter={"ignore": true}
from __future__ import annotations
# gpu = !nvidia-smi
# %matplotlib inline
def fit():
    return "torch " + str(len(gpu))

# %% tapetrace={"exercise": "ex01_torch_mlp", "role": "check"}
check("ex01")

# %% [markdown]
# ## ex02_torch_training

# %%
from __future__ import annotations
def fit():
    return "jax", math.pi
'''


def test_percent_scripts_split_like_notebooks(tmp_path):
    p = tmp_path / "tapetrace.py"
    p.write_text(PERCENT)
    sub = _loader.load(str(p))
    assert sub.form == "percent"
    ex01, ex02 = (_cells.split_graded(sub.sources[e])[0] for e in EX[:2])
    assert "get_ipython().getoutput('nvidia-smi')" in ex01 and "check(" not in ex01
    assert '"jax"' in ex02 and '"torch "' not in ex02
    ns, _ = _load(sub.sources[EX[1]], contract=("fit",))
    assert ns["fit"]() == ("jax", pytest.approx(3.14159265))
    ns, _ = _load(sub.sources[EX[0]], contract=("fit",))
    assert ns["fit"]() == "torch 0"
    (tmp_path / "plain.py").write_text("# %%\nx = 1\n")  # cells but no exercise: the whole-file script
    assert set(_loader.load(str(tmp_path / "plain.py")).sources.values()) == {"# %%\nx = 1\n"}


# --------------------------------------------------------------------------- the self-check's graded view
def test_self_check_loads_the_graded_module_or_says_why_not(tmp_path, monkeypatch):
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    cells = [_code("import math\n"), _md("## ex01_torch_mlp"), _code("def MLP():\n    return math.pi\n"),
             _md("## ex02_torch_training"), _code("def fit():\n    return MLP()\n"),
             _md("## ex03_torch_cnn"), _code("class CNN:\n    pass\nVALUE = undefined_here\n")]
    g = _graded(cells)
    view = _public_graded.graded_module(EX[1], g[EX[1]], ("fit",), "en")
    assert not view.problem and view.module.fit() == pytest.approx(3.14159265)
    for lang, words, line in (("en", "as graded, ex03_torch_cnn does not load", "line 3 of the exercise's code"),
                              ("es", "tal como se corrige, ex03_torch_cnn no se carga", "línea 3 del código")):
        view = _public_graded.graded_module(EX[2], g[EX[2]], ("CNN",), lang)
        assert view.module is None and view.code == "LOAD_EXCEPTION"
        assert words in view.problem and "`NameError: name 'undefined_here'" in view.problem, view.problem
        assert line in view.problem and "`VALUE = undefined_here`" in view.problem, view.problem
    monkeypatch.setattr(_public_graded, "SAID", set())
    assert _public_graded.graded_view(EX[0], {"MLP": 1}, ("MLP",), "en").note.startswith("Note: check could not read")
    # said once a session (outside Jupyter every check would repeat it, issue 37): later views say nothing
    assert [_public_graded.graded_view(ex, {"MLP": 1}, ("MLP",), "en").note for ex in EX[:3]] == ["", "", ""]

    nb = tmp_path / "work.ipynb"
    nb.write_text(json.dumps({"cells": cells}))
    monkeypatch.setenv("JPY_SESSION_NAME", str(nb))
    assert _public_graded.notebook_json({})[1] == "file"
    monkeypatch.delenv("JPY_SESSION_NAME")
    assert _public_graded.notebook_json({"__vsc_ipynb_file__": str(nb)})[1] == "file"
    assert _public_graded.notebook_json({}) == (None, "")
    fake = types.ModuleType("google.colab")
    message = types.ModuleType("google.colab._message")
    message.blocking_request = lambda kind, request="", timeout_sec=0: {"ipynb": {"cells": cells[:2]}}
    fake._message = message
    monkeypatch.setitem(sys.modules, "google.colab", fake)
    monkeypatch.setitem(sys.modules, "google.colab._message", message)
    got, where = _public_graded.notebook_json({})
    assert where == "colab" and got["cells"] == cells[:2]


def test_a_budget_left_with_only_a_sliver_is_spent(monkeypatch):
    """A deadline ends a statement with up to ``SLIVER`` of the budget unspent (its alarm rings early in working
    seconds and gives up re-arming for less): the next statement is then not started for that sliver. Before,
    ``LIMIT = 7`` ran on a loaded machine (1 run in 8 of the test above) with half a millisecond left."""
    readings = iter([0.0, 1.0, 3.0 - _exec.SLIVER / 2, 3.0 - _exec.SLIVER / 2, 3.0 - _exec.SLIVER / 2])

    class Clock:
        def elapsed(self) -> float:
            return next(readings)

    monkeypatch.setattr(_exec, "_Clock", Clock)
    cells = [{"file": "<cell 1>", "source": "A = 1\nLIMIT = 7\ndef late():\n    return 7\n",
              "stmts": [[0, "other", ["A"], []], [1, "other", ["LIMIT"], []], [2, "definition", ["late"], []]]}]
    ns: dict = {}
    report = _exec.run_context(ns, cells, None, budget=3.0, grace=2.0)
    assert ns["A"] == 1 and "LIMIT" not in ns and ns["late"]() == 7
    assert (report.ran, report.skipped) == (2, 1), report


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="Python 3.12 parses these f-strings itself")
def test_a_later_redefinition_written_with_312_f_strings_wins_on_an_older_grader():
    """A redefinition below the section that uses Python 3.12's f-strings (quotes reused inside a field) is read
    like any other later cell on a 3.11 grader: its signature matches, it is kept, and it is what is graded."""
    cells = [_md("## ex01_torch_mlp"), _code("class MLP:\n    v = 'first try'\n    def __init__(self, d):\n"
                                              "        pass\n"),
             _md("## ex02_torch_training"), _code("x = 1\n"),
             _code('CFG = {"name": "net"}\nclass MLP:  # fixed it\n    v = f"{CFG["name"]}!"\n'
                   "    def __init__(self, d):\n        pass\n")]
    contracts = _registry.contracts(EX)
    ns, _ = _load(_graded(cells, contracts)[EX[0]], contract=contracts[EX[0]])
    assert ns["MLP"].v == "net!"


def test_a_line_separator_python_does_not_split_on_stays_in_its_string():
    """U+2028, U+0085, a form feed inside a cell: IPython keeps them and the cell runs (Colab); the cells layer
    split on them (``str.splitlines``) and joined with newlines, so ``NOTE = 'a\\u2028b'`` became a SyntaxError
    (an answer cell: a load error; a later cell: its redefinition silently lost). Found by issue 64's similarity
    work."""
    from autograder.submissions.ipython_cells import transform_cell

    src = "NOTE = 'a\u2028b'\x0c\nX = '\x85'\ndef f():\n    return 1\n%time y = 2\n"
    out = transform_cell(src)
    assert out is not None and out.count("\n") == src.count("\n")  # line numbers kept
    ns: dict = {"get_ipython": lambda: type("Shell", (), {"run_line_magic": lambda *a: None})()}
    exec(compile(out, "cell", "exec"), ns)  # noqa: S102 - the test's own source
    assert ns["NOTE"] == "a\u2028b" and ns["X"] == "\x85" and ns["f"]() == 1
