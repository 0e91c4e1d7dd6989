"""A Spanish run's messages hold no English: every field a check or a probe puts into a message is code
or a catalogued label (``autograder.core.i18n.label``), rendered in the run's language.

A check's message is a catalogued template (both languages: ``tests/test_i18n.py``) filled with fields.
This reads every place where a check or a probe fills one — ``Fail``, ``StudentProblem``, ``ProbeFail``,
``ctx.assert_close``, the ``call=`` of ``ctx.both``/``ctx.student``, and the ``what`` a check hands to
its own helper — and renders what it puts there in Spanish: a string literal must be code (no prose
words), a label must render with no English word left.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

from autograder.core import i18n as messages
from autograder.core.paths import ROOT

sys.path.insert(0, str(Path(__file__).parent))
from test_i18n import ENGLISH_WORDS, prose_words  # noqa: E402

FAILURES = {"Fail", "StudentProblem", "ProbeFail", "CheckFailure"}
NOT_MESSAGE_FIELDS = {"kind", "framework"}  # what a helper uses, never shown
LABELS = {"label", "text"}  # autograder.core.i18n.label (imported "as text" where a variable is named label)
# Names that read the same in both languages (frameworks, acronyms), besides code.
SAME_IN_BOTH = {"jax", "pytorch", "torch", "flax", "optax", "nan", "inf", "mlp", "cnn", "nhwc", "hwio", "oihw",
                "sgd", "adam", "gib", "mib"}
# Message fields that are still English words, by file: the debt this test tracks (the `call=`, `expected=`
# and `got=` phrases of probes' WRONG_TYPE failures, a few `call=` descriptions). Each must become code or a
# label; a file may only go down (every `what=` label is translated already: none is counted here).
KNOWN_ENGLISH: dict[str, int] = {
    "autograder/probing/tools.py": 3,
    "autograder/exercises/ex01_torch_mlp/probes.py": 1,
    "autograder/exercises/ex03_torch_cnn/probes.py": 1,
    "autograder/exercises/ex04_jax_mlp/probes.py": 1,
    "autograder/exercises/ex05_jit_train_step/probes.py": 6,
    "autograder/exercises/ex06_per_example_grads/probes.py": 3,
    "autograder/exercises/ex07_flax_cnn/probes.py": 7,
    "autograder/exercises/ex08_jax_transforms/probes.py": 1,
    "autograder/exercises/ex09_autograd_tape/probes.py": 4,
    "autograder/exercises/ex10_bridge/probes.py": 2,
    "autograder/exercises/ex11_torch_compile/probes.py": 6,
    "autograder/exercises/ex11_torch_compile/public.py": 1,
    "autograder/exercises/ex12_checkpointing/probes.py": 2,
    "autograder/exercises/ex12_checkpointing/public.py": 1,
    "autograder/exercises/ex13_spmd/probes.py": 7,
    "autograder/exercises/ex13_spmd/public.py": 2,
    "autograder/hidden/ex02_torch_training.py": 1,
    "autograder/hidden/ex04_jax_mlp.py": 5,
    "autograder/hidden/ex05_jit_train_step.py": 3,
    "autograder/hidden/ex07_flax_cnn.py": 1,
    "autograder/hidden/ex10_bridge.py": 2,
    "autograder/hidden/ex11_torch_compile.py": 1,
    "autograder/hidden/ex12_checkpointing.py": 1,
    "autograder/hidden/ex13_spmd.py": 2,
}


def _files() -> list[Path]:
    pkg = ROOT / "autograder"
    out = sorted((pkg / "hidden").glob("ex*.py")) + [pkg / "_probing.py"]
    for ex in sorted((pkg / "exercises").glob("ex*")):
        out += [p for p in (ex / "public.py", ex / "probes.py") if p.exists()]
    return out


def _name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _literal(node: ast.expr) -> str | None:
    """A string literal's text (an f-string's with each value as ``{x}``), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(p.value if isinstance(p, ast.Constant) else "{x}" for p in node.values)
    return None


def _is_code(text: str) -> bool:
    """A Python expression (an f-string's values standing in as ``x``): shown as code, never translated."""
    try:
        ast.parse(text.replace("{x}", "x"), mode="eval")
    except SyntaxError:
        return False
    return True


def _prose(text: str) -> list[str]:
    """The words of ``text`` a Spanish message would show in English (none for code)."""
    if _is_code(text):
        return []
    return [w for w in prose_words(text) if len(w) > 1 and w not in SAME_IN_BOTH]


def _fields(tree: ast.AST) -> list[tuple[int, str, ast.expr]]:
    """(line, field name, value) of every message field filled in a module."""
    helpers = {n.name: [a.arg for a in n.args.args] for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        if name in FAILURES or name == "assert_close":
            out += [(node.lineno, kw.arg, kw.value) for kw in node.keywords if kw.arg not in NOT_MESSAGE_FIELDS]
        elif name in ("both", "student"):
            out += [(node.lineno, kw.arg, kw.value) for kw in node.keywords if kw.arg == "call"]
        elif isinstance(node.func, ast.Name) and name in helpers:
            params = helpers[name]
            out += [(node.lineno, params[i], arg) for i, arg in enumerate(node.args)
                    if i < len(params) and params[i] == "what"]
            out += [(node.lineno, kw.arg, kw.value) for kw in node.keywords if kw.arg == "what"]
    return out


def _problems() -> tuple[list[str], list[str]]:
    """(English fields: 'file:line field=text', labels that do not render in Spanish)."""
    english, bad_labels = [], []
    es = messages.catalogue("es")
    for path in _files():
        rel = path.relative_to(ROOT).as_posix()
        for line, field, value in _fields(ast.parse(path.read_text())):
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
    english, _ = _problems()
    by_file: dict[str, int] = {}
    for e in english:
        f = e.split(":", 1)[0]
        by_file[f] = by_file.get(f, 0) + 1
    grown = {f: n for f, n in by_file.items() if n > KNOWN_ENGLISH.get(f, 0)}
    assert not grown, "English words in message fields (make them code or a label):\n" + "\n".join(
        e for e in english if e.split(":", 1)[0] in grown)


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
