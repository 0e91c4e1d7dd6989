"""``tapetrace similarity`` on a MOOC-sized class: 1,000 synthetic submissions (printed, not a timed test).

    python benchmarks/similarity.py [--students 1000] [--exercises ex01_torch_mlp,ex02_torch_training,...]
                                    [--rings 20] [--ring-size 3] [--seed 0]

Each student writes each exercise from the files the test suite holds (the solution, each valid variant,
each mutant: tests/mutants): every top-level definition taken from one of them at random, two lines of
their own inserted in each, every local variable renamed with a suffix of their own, the definitions in a
shuffled order. So most pairs share a lot of code (there are few ways to write a 20-line exercise, and
many students wrote the same mistake) without being copies.
``--rings`` groups of ``--ring-size`` students then copy one ring member's files (renamed again and
reordered again). Printed: the time of each phase (reading, fingerprinting and comparing per exercise,
writing the pages), the pairs compared, and how many of the ring pairs are among the top pairs of
their exercise (recall at the number of ring pairs).
"""

from __future__ import annotations

import argparse
import ast
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _loud import require_rows, require_score  # noqa: E402

from autograder.core.paths import EXERCISES, ROOT, SOLUTIONS  # noqa: E402
from autograder.reports import similarity as _similarity  # noqa: E402

MUTANTS = ROOT / "tests" / "mutants"


def _chunks(src: str) -> tuple[str, dict[str, str]]:
    """A file's head (up to its first definition) and its top-level definitions by name."""
    tree = ast.parse(src)
    lines = src.splitlines(keepends=True)
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    if not defs:
        return src, {}
    first = lambda n: min([n.lineno, *(d.lineno for d in n.decorator_list)]) - 1  # noqa: E731
    return "".join(lines[:first(defs[0])]), {n.name: "".join(lines[first(n):n.end_lineno]) for n in defs}


def _own_lines(chunk: str, rng: random.Random, tag: str, k: int) -> str:
    """``chunk`` with ``k`` statements of the student's own, each after a simple statement of the code."""
    for _ in range(k):
        lines = chunk.splitlines(keepends=True)
        spots = [(n.end_lineno, n.col_offset) for n in ast.walk(ast.parse(chunk))
                 if isinstance(n, (ast.Assign, ast.AugAssign, ast.Expr, ast.Return, ast.AnnAssign))
                 and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
        spots = [(end, col) for end, col in spots if not isinstance_return(lines, end)]
        for fn in ast.walk(ast.parse(chunk)):  # the start of each function body (after its docstring)
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.body:
                doc = isinstance(fn.body[0], ast.Expr) and isinstance(fn.body[0].value, ast.Constant)
                spots.append((fn.body[0].end_lineno if doc else fn.body[0].lineno - 1, fn.body[0].col_offset))
        if not spots:
            break
        end, col = rng.choice(spots)
        ops = rng.choices(["+", "-", "*", "//", "%"], k=2)
        mine = f"{' ' * col}_{tag} = ({rng.randint(2, 999)} {ops[0]} {rng.randint(2, 99)}) {ops[1]} {rng.randint(2, 9)}\n"
        chunk = "".join(lines[:end] + [mine] + lines[end:])
    return chunk


def isinstance_return(lines: list[str], end: int) -> bool:
    """Whether line ``end`` (1-based) is a ``return`` (a statement after it would be dead code)."""
    return lines[end - 1].lstrip().startswith("return")


def rename(src: str, tag: str) -> str:
    """Every local variable renamed with the student's suffix."""
    for old in sorted(set(re.findall(r"^\s+([a-z_][a-z0-9_]*) = ", src, re.M)), key=len, reverse=True):
        src = re.sub(rf"\b{old}\b", f"{old}_{tag}", src)
    return src


def student_file(bases: list[dict[str, str]], heads: list[str], rng: random.Random, tag: str) -> str:
    """One exercise as a student writes it: each definition taken from some file of the suite, own lines in
    it, variables renamed, the definitions in an order of their own."""
    names = list(bases[0])
    chunks = []
    for name in names:
        options = [b[name] for b in bases if name in b]
        chunks.append(_own_lines(rng.choice(options), rng, tag, 2))
    rng.shuffle(chunks)
    return rename(rng.choice(heads) + f"# written by {tag}\n" + "\n\n".join(chunks) + "\n", tag)


def copy_of(src: str, rng: random.Random, tag: str) -> str:
    """A copy of another student's file: renamed again, definitions moved around."""
    head, defs = _chunks(src)
    chunks = list(defs.values())
    rng.shuffle(chunks)
    return rename(head + "\n\n".join(chunks) + "\n", tag)


def make_class(top: Path, n: int, exercises: list[str], rings: int, ring_size: int, seed: int
               ) -> tuple[list[str], set[tuple[str, frozenset[str]]]]:
    """``n`` student folders under ``top``; returns their paths and the ring pairs (exercise, {a, b})."""
    rng = random.Random(seed)
    parsed = {}
    for ex in exercises:
        files = [SOLUTIONS / f"{ex}.py", *sorted((MUTANTS / ex).glob("*.py"))]
        split = [_chunks(f.read_text(encoding="utf-8")) for f in files]
        parsed[ex] = ([d for _h, d in split if d], [h for h, d in split if d])
    names = [f"s{i:04d}" for i in range(n)]
    for name in names:
        d = top / name
        d.mkdir(parents=True)
        for ex in exercises:
            bases, heads = parsed[ex]
            (d / f"{ex}.py").write_text(student_file(bases, heads, rng, name), encoding="utf-8")
    ring_pairs: set[tuple[str, frozenset[str]]] = set()
    members = rng.sample(names, rings * ring_size)
    for r in range(rings):
        ring = members[r * ring_size:(r + 1) * ring_size]
        ex = exercises[r % len(exercises)]
        origin = (top / ring[0] / f"{ex}.py").read_text(encoding="utf-8")
        for other in ring[1:]:
            (top / other / f"{ex}.py").write_text(copy_of(origin, rng, other + "c"), encoding="utf-8")
        ring_pairs |= {(ex, frozenset((a, b))) for i, a in enumerate(ring) for b in ring[i + 1:]}
    return [str(top / name) for name in names], ring_pairs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--students", type=int, default=1000)
    p.add_argument("--exercises", default="ex01_torch_mlp,ex02_torch_training,ex05_jit_train_step,ex09_autograd_tape")
    p.add_argument("--rings", type=int, default=20)
    p.add_argument("--ring-size", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=_similarity.default_jobs(), help="processes for fingerprinting")
    p.add_argument("--keep", metavar="DIR", help="write the outputs here (default: a temporary folder)")
    args = p.parse_args(argv)
    exercises = [e for e in args.exercises.split(",") if e in EXERCISES]
    require_rows(f"exercises among --exercises {args.exercises!r}", exercises)
    tmp = Path(tempfile.mkdtemp(prefix="tapetrace-sim-bench-"))
    try:
        t0 = time.perf_counter()
        subs, ring_pairs = make_class(tmp / "class", args.students, exercises, args.rings, args.ring_size, args.seed)
        t1 = time.perf_counter()
        per, _notes = _similarity.collect(subs, exercises)
        t2 = time.perf_counter()
        print(f"class: {len(subs)} students x {len(exercises)} exercises made in {t1 - t0:.1f} s; "
              f"read with the loader in {t2 - t1:.1f} s; fingerprinting in {args.jobs} process(es)")
        require_rows("submissions read", [c for raw in per.values() for c in raw])
        found = total = compared = 0
        for ex, raw in per.items():
            s = time.perf_counter()
            codes = {k: _similarity.canonical(v) for k, v in raw.items()}
            pairs = _similarity.compare(ex, codes, _similarity.template_code(ex), jobs=args.jobs)
            el = time.perf_counter() - s
            compared += len(pairs)
            want = {pr for e, pr in ring_pairs if e == ex}
            top = {frozenset((q.a, q.b)) for q in pairs[:len(want)]}
            found += len(want & top)
            total += len(want)
            print(f"{ex}: {len(codes)} submissions, {len(pairs)} candidate pairs compared, {el:.1f} s; ring pairs in "
                  f"the top {len(want)}: {len(want & top)}/{len(want)}"
                  + (f"; lowest ring score {min(q.score for q in pairs if frozenset((q.a, q.b)) in want):.3f}, "
                     f"best other {max((q.score for q in pairs if frozenset((q.a, q.b)) not in want), default=0):.3f}"
                     if want else ""))
        out = Path(args.keep) if args.keep else tmp / "out"
        s = time.perf_counter()
        _similarity.run(subs, out, exercises=exercises, jobs=args.jobs)
        print(f"tapetrace similarity end to end (reading, comparing, pages, export): {time.perf_counter() - s:.1f} s")
        print(f"ring pairs ranked first: {found}/{total}")
        require_rows("candidate pairs compared", range(compared))
        if total:
            require_score("ring pairs ranked first", found, total)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
