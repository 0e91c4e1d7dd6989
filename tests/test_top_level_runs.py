"""A notebook that trains at its top level, as the seed notebooks do: graded on what its code defines (issue 57).

An exercise's own top-level statements other than definitions and imports get half the load's time limit together
(``autograder.submissions.execute.TOP_LEVEL_SHARE``, working seconds); the one still running then is stopped and the
exercise is graded on what its section defined before it, with a note naming that line. A name of the contract only
defined past it makes the load a timeout, as does a definition that never finishes (a hang in a class body).

The slow statements here never end (deterministic, whatever the machine's speed): the gradings use a short load
limit (6 s: the cut comes after 3 working seconds), as the hang tests do.
"""

from __future__ import annotations

import importlib
import signal
import time
import types

import pytest
from test_notebook_habits import cell, insert, notebook, position, scores, solution

from autograder.builders import public_graded
from autograder.core.i18n import render
from autograder.core.wire import WireError
from autograder.hidden import load_suite
from autograder.submissions import execute as _exec
from autograder.workers import intake

EX01, EX02, EX07 = "ex01_torch_mlp", "ex02_torch_training", "ex07_flax_cnn"

# the seed notebooks' loop, on the digits' shapes (random pixels: no data set to read), never ending
FLAX_TRAINING = (
    "import itertools\n"
    "_rng = np.random.default_rng(0)\n"
    "x_train = jnp.asarray(_rng.normal(size=(1437, 8, 8, 1)).astype(np.float32))\n"
    "y_train = jnp.asarray(_rng.integers(0, 10, 1437).astype(np.int32))\n"
    "model = FlaxCNN(num_classes=10)\n"
    "opt = optax.adam(1e-3)\n"
    "params = model.init(jax.random.key(0), x_train[:1])\n"
    "opt_state = opt.init(params)\n"
    "train_step = make_flax_train_step(model, opt)\n"
    "for i in itertools.count():  # my training run\n"
    "    params, opt_state, loss = train_step(params, opt_state, x_train, y_train)\n"
    "    if i % 50 == 0:\n"
    "        print(i, float(loss))\n")
TORCH_TRAINING = (
    "torch.manual_seed(0)\n"
    "xs = torch.randn(200, 2)\n"
    "ys = (xs[:, :1] * xs[:, 1:] > 0).float()\n"
    "net = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1))\n"
    "opt = torch.optim.Adam(net.parameters(), lr=1e-2)\n"
    "step = 0\n"
    "while True:  # train until I stop it\n"
    "    loss = train_step(net, opt, xs, ys, bce_with_logits)\n"
    "    step += 1\n")


@pytest.fixture(scope="module")
def short_run():
    from conftest import SEED

    from autograder.engine.run import GradingRun

    r = GradingRun(device="cpu", timeout=6.0, seed=SEED)
    yield r
    r.close()


def _cut_note(got: tuple, line_text: str) -> None:
    score, status, message = got
    assert status == "graded" and message.startswith(render("LOAD_CUT", "en", seconds=3, where="")[:30]), got
    assert f"`{' '.join(line_text.split())}`" in message, got  # (as any text a worker sends: one space a run)


# --------------------------------------------------------------------------- graded with the engine
def test_flax_training_at_the_top_level_of_the_answer_cell_is_graded_on_its_definitions(short_run, tmp_path):
    nb = notebook({EX07: solution(EX07) + "\n\n" + FLAX_TRAINING})
    got = scores(short_run, tmp_path, nb, [EX07])[EX07]
    assert got[0] == load_suite(EX07).max_score, got
    _cut_note(got, "for i in itertools.count():  # my training run")
    assert "line " in got[2]


def test_torch_training_in_a_scratch_cell_below_the_answer_is_graded_on_its_definitions(short_run, tmp_path):
    nb = notebook({EX02: solution(EX02)})
    insert(nb, position(nb, EX02, "answer") + 1, cell(TORCH_TRAINING))
    got = scores(short_run, tmp_path, nb, [EX02])[EX02]
    assert got[0] == load_suite(EX02).max_score, got
    _cut_note(got, "while True:  # train until I stop it")


def test_a_name_defined_only_after_the_cut_is_a_timeout(short_run, tmp_path):
    """``make_flax_train_step`` comes after the endless loop (which uses its own step): as before, 0 and timeout."""
    sol = solution(EX07)
    at = sol.index("def make_flax_train_step")
    mine = ("def my_step(model, opt):\n    def step(p, s, x, y):\n"
            "        loss, g = jax.value_and_grad(lambda p: optax.softmax_cross_entropy_with_integer_labels("
            "model.apply(p, x), y).mean())(p)\n"
            "        u, s = opt.update(g, s, p)\n        return optax.apply_updates(p, u), s, loss\n"
            "    return jax.jit(step)\n\n")
    training = FLAX_TRAINING.replace("make_flax_train_step(model, opt)", "my_step(model, opt)")
    nb = notebook({EX07: sol[:at] + mine + training + "\n\n" + sol[at:]})
    score, status, message = scores(short_run, tmp_path, nb, [EX07])[EX07]
    assert (score, status) == (0.0, "timeout"), message
    assert "`make_flax_train_step`" in message and "`for i in itertools.count(): # my training run`" in message


def test_a_hang_in_a_class_body_is_still_a_timeout(short_run, tmp_path):
    body = solution(EX01).replace("class MLP(nn.Module):\n", "class MLP(nn.Module):\n    while True:\n        pass\n", 1)
    assert "while True" in body
    score, status, message = scores(short_run, tmp_path, notebook({EX01: body}), [EX01])[EX01]
    assert (score, status) == (0.0, "timeout") and "did not finish within 6 s" in message, message


# --------------------------------------------------------------------------- the section's run, in this process
def _loaded(source: str, load_timeout: float, contract: tuple[str, ...] = ("f", "g")) -> tuple[dict, _exec.ContextReport]:
    prepared = _exec.prepare(source, "<section>", contract)
    ns: dict = {"__name__": "graded"}
    return ns, _exec.run(prepared, ns, load_timeout=load_timeout)


def test_the_section_stops_at_a_statement_that_outlasts_the_budget():
    src = ('"""My module."""\nfrom __future__ import annotations\n\ndef f(x: int) -> int:\n    return x\n\n'
           "n = 0\nwhile True:\n    n += 1\n\ndef g():\n    return 1\nafter = 1\n")
    ns, report = _loaded(src, 0.4)
    assert report.cut == _exec.Cut(8, "while True:", 0.2, ("g",))
    assert "f" in ns and "g" not in ns and "after" not in ns and ns["n"] > 0
    assert ns["__doc__"] == "My module." and ns["f"].__annotations__ == {"x": "int", "return": "int"}  # the future


def test_a_statement_that_swallows_the_interruption_is_cut_too():
    src = "def f():\n    return 1\n\ntry:\n    while True:\n        pass\nexcept BaseException:\n    pass\n\ng = f\n"
    ns, report = _loaded(src, 0.4)
    assert report.cut is not None and report.cut.line == 4 and report.cut.missing == ("g",)
    assert "g" not in ns


def test_the_budget_is_shared_by_the_top_level_statements_and_not_spent_by_definitions():
    """Two loops of 0.25 CPU-s each, and a class whose body burns 0.6 CPU-s (a definition: not timed)."""
    src = ("import time\n\nclass Slow:\n    t = time.process_time()\n    while time.process_time() - t < 0.6:\n"
           "        pass\n\nt0 = time.process_time()\nwhile time.process_time() - t0 < 0.25:\n    pass\n"
           "t0 = time.process_time()\nwhile time.process_time() - t0 < 0.25:\n    pass\n\ndef g():\n    return 2\n")
    ns, report = _loaded(src, 0.8)  # 0.4 s for both loops: the second is cut
    assert report.cut is not None and report.cut.line == 12 and report.cut.missing == ("g",), report.cut
    ns, report = _loaded(src, 2.0)  # 1 s: both run, then g is defined
    assert report.cut is None and ns["g"]() == 2


def test_a_section_that_runs_to_its_end_has_no_cut():
    ns, report = _loaded("def f():\n    return 1\n\nprint(f())\ng = f\n", 0.5)
    assert report.cut is None and ns["g"] is ns["f"]


def test_an_exception_of_the_section_is_still_its_load_error():
    with pytest.raises(ZeroDivisionError):
        _loaded("def f():\n    return 1\n\n1 / 0\n", 5.0)


def test_a_timer_already_running_is_set_again_after_a_statement():
    """The self-check bounds the whole load with a wall-clock timer: each statement's deadline puts it back."""
    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(1))
    try:
        signal.setitimer(signal.ITIMER_REAL, 30.0)
        _loaded("def f():\n    return 1\n\nx = 1\nwhile True:\n    pass\n", 0.2)
        left = signal.getitimer(signal.ITIMER_REAL)[0]
        assert 25.0 < left <= 30.0 and not fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_an_interruption_waits_out_a_request_to_the_grader():
    """A worker's request for a compiled program (``compile_cache.Borrower.get``) is never left half made: the
    statement is stopped once the request is over, never inside it."""
    helpers: dict = {"time": time, "done": []}
    exec(compile("def request(seconds):\n    t0 = time.process_time()\n"  # noqa: S102
                 "    while time.process_time() - t0 < seconds:\n        pass\n    done.append(1)\n",
                 "<the grader's pipe>", "exec"), helpers)
    prepared = _exec.prepare("def f():\n    return 1\n\nrequest(0.4)\nwhile True:\n    pass\n", "<section>", ("f",))
    _exec.UNINTERRUPTED.add("<the grader's pipe>")
    try:
        report = _exec.run(prepared, {"request": helpers["request"]}, load_timeout=0.2)  # 0.1 s for the statements
    finally:
        _exec.UNINTERRUPTED.discard("<the grader's pipe>")
    assert helpers["done"] == [1] and report.cut is not None


# --------------------------------------------------------------------------- what a worker may say of a cut
def test_the_grader_accepts_a_cut_and_nothing_else_in_its_place():
    where = {"key": "where.line_code", "line": 8, "code": "while True:"}
    good = {"status": "loaded", "missing": [], "cut": {"where": where, "seconds": 15.0, "names": ""}}
    assert intake.status(good)["cut"] == {"where": where, "seconds": 15.0, "names": ""}
    for bad in ({"where": where, "seconds": "15", "names": ""}, {"where": "line 8", "seconds": 1, "names": ""},
                {"where": where, "seconds": 1.0, "names": "", "extra": 1}, ["while True:"],
                {"where": {"key": "public.where", "line": 1}, "seconds": 1.0, "names": ""}):
        with pytest.raises(WireError):
            intake.status({**good, "cut": bad})


# --------------------------------------------------------------------------- the notebook's self-check agrees
def test_the_self_check_says_what_grading_does(monkeypatch):
    monkeypatch.setattr(_exec, "TOP_LEVEL_SHARE", 0.01)  # 0.3 of the self-check's 30 s
    names = tuple(importlib.import_module(f"autograder.exercises.{EX02}").META.names)
    src = solution(EX02) + "\n\nwhile True:  # train until I stop it\n    pass\n"
    view = public_graded.graded_module(EX02, src, names, "en")
    assert view.problem == "" and isinstance(view.module, types.ModuleType) and view.module.fit
    assert view.note.startswith("note: grading stopped") and "`while True:  # train until I stop it`" in view.note
    sol = solution(EX02)
    at = sol.index("def fit(")
    view = public_graded.graded_module(EX02, sol[:at] + "while True:\n    pass\n\n" + sol[at:], names, "es")
    assert view.code == "LOAD_CUT_MISSING" and "`fit`" in view.problem and "no terminó en 0.3 s" in view.problem
