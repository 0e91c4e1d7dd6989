"""A Spanish run's messages hold no English: every field a check or a probe puts into a message is code
or a catalogued label (``autograder.core.i18n.label``), rendered in the run's language.

A check's message is a catalogued template (both languages: ``tests/test_i18n.py``) filled with fields.
This reads every place where a check or a probe fills one — ``Fail``, ``StudentProblem``, ``ProbeFail``,
``ctx.assert_close``, the ``call=`` of ``ctx.both``/``ctx.student``, and the ``what`` a check hands to
its own helper or a probe helper (``tree_to_np(p, call)``), by position or keyword, following a name to
the values assigned to it — and renders what it puts there in Spanish: a string literal must be code (no
prose words), a label must render with no English word left. No English phrase is tolerated (issue 29: 88
were, in probes and hidden suites). Then it grades mutants with ``lang="es"`` and reads their messages:
what a probe sends from the worker (a type, an expected value) must arrive as a label and render in Spanish.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from autograder.core import i18n as messages
from autograder.core.paths import ROOT

sys.path.insert(0, str(Path(__file__).parent))
from test_i18n import ENGLISH_WORDS, prose_words  # noqa: E402

FAILURES = {"Fail", "StudentProblem", "ProbeFail", "CheckFailure"}
NOT_MESSAGE_FIELDS = {"kind", "framework"}  # what a helper uses, never shown
CODE_FIELDS = {"prims"}  # names of JAX primitives (``while``), shown in backticks
LABELS = {"label", "text"}  # autograder.core.i18n.label (imported "as text" where a variable is named label)
# Names that read the same in both languages (frameworks, acronyms), besides code.
SAME_IN_BOTH = {"jax", "pytorch", "torch", "flax", "optax", "nan", "inf", "mlp", "cnn", "nhwc", "hwio", "oihw",
                "sgd", "adam", "gib", "mib"}
# Parameters through which a helper passes a message field on (a probe helper's ``call``, a check's ``what``).
PASSED_ON = {"what", "call"}


def _files() -> list[Path]:
    pkg = ROOT / "autograder"
    out = sorted((pkg / "hidden").glob("ex*.py")) + [pkg / "probing" / "tools.py"]
    for ex in sorted((pkg / "exercises").glob("ex*")):
        out += [p for p in (ex / "public.py", ex / "probes.py") if p.exists()]
    return out


def _helpers() -> dict[str, list[str]]:
    """Every function the checks and probes define (``_probing``'s, each exercise's, the hidden suites'):
    name -> its positional parameters, so a field handed to one (``tree_to_np(p, call)``) is read too."""
    out: dict[str, list[str]] = {}
    for path in _files():
        for n in ast.walk(ast.parse(path.read_text())):
            if isinstance(n, ast.FunctionDef) and PASSED_ON & {a.arg for a in n.args.args}:
                out[n.name] = [a.arg for a in n.args.args]
    return out


def _name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _values(node: ast.expr, assigned: dict[str, list[ast.expr]]) -> list[ast.expr]:
    """What a field's expression may be: itself, both branches of ``a if c else b``, and for a name every
    value assigned to it in the module (``call = f"step(x, y) with {opt}"`` then ``call=call``)."""
    if isinstance(node, ast.IfExp):
        return _values(node.body, assigned) + _values(node.orelse, assigned)
    if isinstance(node, ast.BoolOp):
        return [v for n in node.values for v in _values(n, assigned)]
    if isinstance(node, ast.Name) and node.id in assigned:
        return [v for n in assigned[node.id] if n is not node for v in _values(n, {})]
    return [node]


def _literal(node: ast.expr) -> str | None:
    """A string literal's text (an f-string's with each value as ``{x}``), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(p.value if isinstance(p, ast.Constant) else "{x}" for p in node.values)
    return None


def _is_code(text: str) -> bool:
    """A Python expression (an f-string's values standing in as ``x``): shown as code, never translated.
    A bare tuple is not (``"clip_by_norm(zeros, max_norm), differentiated"`` parses as one)."""
    try:
        tree = ast.parse(text.replace("{x}", "x"), mode="eval")
    except SyntaxError:
        return False
    return not (isinstance(tree.body, ast.Tuple) and not text.lstrip().startswith("("))


def _prose(text: str) -> list[str]:
    """The words of ``text`` a Spanish message would show in English (none for code)."""
    if _is_code(text):
        return []
    return [w for w in prose_words(text) if len(w) > 1 and w not in SAME_IN_BOTH]


def _fields(tree: ast.AST, helpers: dict[str, list[str]] | None = None) -> list[tuple[int, str, ast.expr]]:
    """(line, field name, value) of every message field filled in a module: the fields of a failure, the
    ``call``/``what`` handed to ``ctx`` or to a helper (by position or keyword), each value a name may hold."""
    helpers = dict(helpers or {})
    helpers.update({n.name: [a.arg for a in n.args.args] for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)})
    assigned: dict[str, list[ast.expr]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    assigned.setdefault(t.id, []).append(node.value)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        found: list[tuple[str, ast.expr]] = []
        if name in FAILURES or name == "assert_close":
            found += [(kw.arg, kw.value) for kw in node.keywords
                      if kw.arg and kw.arg not in NOT_MESSAGE_FIELDS | CODE_FIELDS]
        elif name in ("both", "student"):
            found += [(kw.arg, kw.value) for kw in node.keywords if kw.arg == "call"]
        elif name in helpers:
            params = helpers[name][1:] if isinstance(node.func, ast.Attribute) and helpers[name][:1] == ["self"] \
                else helpers[name]
            found += [(params[i], arg) for i, arg in enumerate(node.args) if i < len(params) and params[i] in PASSED_ON]
            found += [(kw.arg, kw.value) for kw in node.keywords if kw.arg in PASSED_ON]
        out += [(node.lineno, field, v) for field, value in found for v in _values(value, assigned)]
    return out


def _problems() -> tuple[list[str], list[str]]:
    """(English fields: 'file:line field=text', labels that do not render in Spanish)."""
    english, bad_labels = [], []
    es = messages.catalogue("es")
    helpers = _helpers()
    for path in _files():
        rel = path.relative_to(ROOT).as_posix()
        for line, field, value in _fields(ast.parse(path.read_text()), helpers):
            text = _literal(value)
            if text is not None and _prose(text):
                english.append(f"{rel}:{line} {field}={text!r}")
            elif isinstance(value, ast.Call) and _name(value.func) in LABELS and value.args:
                key = _literal(value.args[0])
                keys = [k for k in es if re.fullmatch(key.replace("{x}", r"\w+"), k)] if key else []
                if not keys:
                    bad_labels.append(f"{rel}:{line} {field}: label {key!r} is not catalogued")
                for k in keys:
                    fields = {f: "3" for f in messages.placeholders(es[k])}
                    left = set(prose_words(messages.render(k, "es", **fields))) & ENGLISH_WORDS
                    if left:
                        bad_labels.append(f"{rel}:{line} {field}: {k} renders English words {sorted(left)} in Spanish")
    return english, bad_labels


def test_every_label_a_check_uses_renders_in_spanish():
    _, bad = _problems()
    assert not bad, "\n".join(bad)


def test_no_check_puts_english_words_into_a_message():
    """Every field a check or a probe fills is code or a label: no English phrase is left (issue 29: 88 were,
    in probes' ``call=``/``expected=``/``got=`` and in the hidden suites' ``what=``/``call=``)."""
    english, _ = _problems()
    assert not english, "English words in message fields (make them code or a label):\n" + "\n".join(english)


@pytest.mark.parametrize("field", ["what", "call", "expected"])
def test_the_scan_sees_an_english_field(tmp_path, field):
    """The scan is not blind: an English label in any of the places it reads is found."""
    src = (f"def check(ctx):\n    ctx.assert_close(1, 2, kind='forward', {field}='the losses after 3 steps')\n"
           if field != "call" else "def check(ctx):\n    ctx.both('p', call='the step on a mesh of 2')\n")
    found = [f for _, f, v in _fields(ast.parse(src)) if _prose(_literal(v) or "")]
    assert found == [field]


def test_a_mismatch_in_spanish_is_all_spanish():
    from autograder.core.i18n import label

    detail = "output: 3 of 8 values off (shape (8,), max abs error 0.5, max rel error 0.2, worst at index (1,); " \
             "tolerance atol=1e-05, rtol=0.001)"
    msg = messages.render("MISMATCH", "es", what=label("ex13.what.losses", k=3, n=2), detail=detail)
    assert "las pérdidas de 3 pasos de paralelismo de datos en 2 dispositivo(s)" in msg
    assert not set(prose_words(msg)) & ENGLISH_WORDS, msg


def test_every_what_label_is_translated():
    """The labels that named what differs (``what=``: 36 English ones leaked into Spanish messages) are
    all catalogued now: none is left, none is tracked as debt."""
    english, _ = _problems()
    assert not [e for e in english if " what=" in e], english


def test_optimizer_labels_are_code():
    """What ``autograder.probing.families`` names an optimizer by is code, shown as is in both languages."""
    from autograder.probing import families as _families

    rng = np.random.default_rng(0)
    specs = [("optax", s) for s in _families.optax_needing_params(rng)]
    specs += [("optax", {"name": n}) for n in ("sgd", "momentum", "adam")]
    specs += [("torch", s) for s in _families.torch_optimizers(rng, ("sgd_momentum", *_families.TORCH_OTHERS))]
    for lib, spec in specs:
        text = _families.optax_label(spec) if lib == "optax" else _families.torch_label(spec)
        assert _is_code(text) and not _prose(text), text


def test_a_label_in_a_code_slot_stands_for_the_code_span():
    """``WRONG_TYPE`` shows ``call`` as code (`` `{call}` ``): a label there marks its own code instead."""
    from autograder.core.i18n import label

    msg = messages.render("CALL_TIMEOUT", "es", call=label("ex11.call.stale_with", opt="torch.optim.AdamW(...)"),
                          timeout=3)
    assert msg.startswith("`step(x, y)` con `torch.optim.AdamW(...)` y gradientes ya acumulados en los parámetros "
                          "no terminó"), msg
    assert messages.render("CALL_TIMEOUT", "es", call="f(x)", timeout=3).startswith("`f(x)` no terminó")


# Words of English prose a Spanish message must not show (besides test_i18n's), among those the labels use
# ("float", "array" are the catalogue's Spanish too).
PROSE = ENGLISH_WORDS | {"after", "steps", "losses", "parameters", "gradients", "gradient", "returned", "already",
                         "holding", "leaf", "pair", "items", "called", "times", "gives", "list", "calls",
                         "function", "tuple", "scalar", "loss", "key", "model", "use", "append", "wrap"}
# An English article after a Spanish verb: "devolvió a `list`", "se esperaba an nn.Module".
ARTICLE = re.compile(r"\b(devolvió|esperaba|contiene|es|da) an? [`\w]")
# Mutants whose messages carry what probes and hidden checks name in words: types and expected values of
# WRONG_TYPE, the labels of calls with stale gradients and of optimizer families.
SPANISH_MUTANTS = ["ex02_torch_training/evaluate_returns_tensors", "ex02_torch_training/train_step_zero_grad_after_step",
                   "ex04_jax_mlp/accuracy_jax_array", "ex05_jit_train_step/fit_losses_not_floats",
                   "ex05_jit_train_step/update_without_params", "ex09_autograd_tape/returns_list",
                   "ex09_autograd_tape/returns_tensors", "ex10_bridge/to_jax_numpy_leaves"]


@pytest.fixture(scope="module")
def spanish_run():
    from conftest import SEED

    from autograder.engine import GradingRun

    run = GradingRun(device="cpu", seed=SEED, lang="es")
    yield run
    run.close()


@pytest.mark.parametrize("case", SPANISH_MUTANTS)
def test_a_mutant_graded_in_spanish_reads_no_english(spanish_run, tmp_path, case):
    """Graded with ``--lang es``, each failing test's message is all Spanish (code aside)."""
    from conftest import MUTANTS, make_submission

    ex = case.split("/")[0]
    sub = make_submission(tmp_path / "sub", {ex: (MUTANTS / f"{case}.py").read_text()}, only=[ex])
    res = spanish_run.grade([str(sub)], only=[ex])[0]["exercises"][ex]
    failed = [t["message"] for t in res["tests"] if not t["passed"]]
    assert failed, res
    english = {m: sorted(set(prose_words(m)) & PROSE) + ARTICLE.findall(m) + re.findall(r"\{'key'", m)
               for m in failed}  # a label the worker sent as text, never rendered
    assert not any(english.values()), english
