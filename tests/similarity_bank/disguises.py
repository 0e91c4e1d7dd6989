"""The disguises a student who copies applies, and how each disguised copy ranks among honest work.

``tests/similarity_bank/<exercise>/honest_*.py`` are implementations of the exercise written apart from
one another and from ``solutions/`` (each fills the template's stubs its own way). For each of them, a
copy is disguised (:data:`DISGUISES`: each alone, then all combined) and put in the class with the honest
ones; :func:`table` says the (original, copy) pair's score, its rank among every pair of that class
(1 is the top) and the best honest pair's score. ``tests/test_after_similarity_bank.py`` asserts every
copy ranks first; ``benchmarks/similarity_disguises.py`` prints the table.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable
from pathlib import Path

BANK = Path(__file__).resolve().parent


def honest(exercise: str) -> dict[str, str]:
    """The bank's honest implementations of ``exercise``: name -> code."""
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted((BANK / exercise).glob("honest_*.py"))}


def exercises() -> list[str]:
    """The exercises the bank has implementations of."""
    return sorted(p.name for p in BANK.iterdir() if p.is_dir() and list(p.glob("honest_*.py")))


def no_docstrings(src: str) -> str:
    """The docstrings the template handed out deleted (every line of them; the rest as written)."""
    tree = ast.parse(src)
    drop: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)):
            drop.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
    return "".join(ln for k, ln in enumerate(src.splitlines(keepends=True), 1) if k not in drop)


def reformatted(src: str) -> str:
    """The file through ``ast.unparse`` (what a formatter does: layout, parentheses, quotes; comments go)."""
    return ast.unparse(ast.parse(src)) + "\n"


def renamed(src: str) -> str:
    """Every name a function assigns (its locals, loop variables, nested helpers) renamed."""
    tree = ast.parse(src)
    local: set[str] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    local.add(node.id)
                elif isinstance(node, ast.FunctionDef) and node is not fn:
                    local.add(node.name)
    for name in sorted(local, key=len, reverse=True):
        src = re.sub(rf"(?<![.\w]){re.escape(name)}\b(?!\s*=[^=])(?![\"'])", f"my_{name}", src)
        src = re.sub(rf"(?<![.\w\"']){re.escape(name)}(\s*=[^=])", rf"my_{name}\1", src)
    return src


def reordered(src: str) -> str:
    """The top-level functions and classes in reverse order (the imports and constants first, as before)."""
    tree = ast.parse(src)
    lines = src.splitlines(keepends=True)
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    first = [min([n.lineno, *(d.lineno for d in n.decorator_list)]) - 1 for n in defs]
    chunks = ["".join(lines[f:n.end_lineno]) for f, n in zip(first, defs)]
    return "".join(lines[:first[0]]) + "\n\n".join(reversed(chunks)) + "\n"


def recommented(src: str) -> str:
    """The student's comments deleted and others written: one above every other statement in a function."""
    kept = []
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type != tokenize.COMMENT:
            kept.append(tok)
    lines = tokenize.untokenize(kept).splitlines(keepends=True)
    out = []
    for k, line in enumerate(lines):
        body = line.lstrip()
        indent = line[:len(line) - len(body)]
        if indent and body.strip() and k % 2 == 0 and not body.startswith(('"""', ")", "]", "}")):
            out.append(f"{indent}# step {k}: see the notes\n")
        out.append(line)
    return "".join(out)


def combined(src: str) -> str:
    """Every disguise at once: docstrings deleted, locals renamed, order reversed, reformatted, recommented."""
    return recommented(reformatted(reordered(renamed(no_docstrings(src)))))


DISGUISES: dict[str, Callable[[str], str]] = {
    "verbatim": lambda s: s,
    "no docstrings": no_docstrings,
    "ast.unparse": reformatted,
    "locals renamed": renamed,
    "order reversed": reordered,
    "comments changed": recommented,
    "combined": combined,
}


def table(exercise_list: list[str] | None = None) -> list[dict[str, object]]:
    """Per exercise, original and disguise: the copy pair's score and rank among every pair of its class.

    Returns:
        rows ``{"exercise", "original", "disguise", "score", "rank", "pairs", "best_honest"}``; ``rank`` 1 is
        the top pair, ``best_honest`` the best score of a pair that is not the copy's.
    """
    from autograder.reports import similarity as _similarity

    rows: list[dict[str, object]] = []
    for ex in exercise_list or exercises():
        work = honest(ex)
        templates = _similarity.template_code(ex)
        for original, code in work.items():
            for disguise, make in DISGUISES.items():
                copy = make(code)
                compile(copy, f"{original}-{disguise}", "exec")  # a disguise keeps the code valid
                cls = {**work, "copier": copy}
                codes = {n: _similarity.canonical(c) for n, c in cls.items()}
                pairs = _similarity.compare(ex, codes, templates)
                key = frozenset((original, "copier"))
                rank = next((k for k, p in enumerate(pairs, 1) if frozenset((p.a, p.b)) == key), None)
                score = next((p.score for p in pairs if frozenset((p.a, p.b)) == key), 0.0)
                best = max((p.score for p in pairs if frozenset((p.a, p.b)) != key), default=0.0)
                rows.append({"exercise": ex, "original": original, "disguise": disguise, "score": score,
                             "rank": rank, "pairs": len(cls) * (len(cls) - 1) // 2, "best_honest": best})
    return rows


def render(rows: list[dict[str, object]]) -> str:
    """The table as text, one line per (exercise, original, disguise)."""
    out = [f"{'exercise':<22}{'original':<28}{'disguise':<18}{'score':>7}{'rank':>6}{'of':>4}{'best honest':>13}"]
    for r in rows:
        out.append(f"{r['exercise']:<22}{r['original']:<28}{r['disguise']:<18}{r['score']:>7.3f}"
                   f"{str(r['rank']):>6}{r['pairs']:>4}{r['best_honest']:>13.3f}")
    return "\n".join(out)
