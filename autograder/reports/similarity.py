"""``tapetrace similarity``: pairwise similarity of students' code per exercise, template code removed first.

Fingerprinting is copydetect's (winnowing over a token stream in which names, strings and comments are
normalised, as MOSS does): ``pip install 'tapetrace[similarity]'``. Per exercise:

1. each submission's **graded code** is read with the project's loader (autograder/submissions/loader.py): a
   notebook's own section only (not the earlier sections "Run all" gives it as context), a folder's or
   zip's exercise file;
2. the **template's** fingerprints (the stub in ``exercises/``, the student template's file and notebook
   section) are removed from every submission (copydetect's boilerplate), and so are passages more than
   ``max_share`` of the class wrote (MOSS's ``-m``: code everyone shares is not evidence);
3. candidate pairs are those sharing fingerprints (an inverted index, so 1,000 submissions do not mean
   500,000 full comparisons); each is compared with ``copydetect.compare_files``.

Outputs in ``--out``: ``index.html``; ``<exercise>.html`` with the top pairs side by side and the matching
spans marked; ``pairs.csv`` (pairs at or above ``--threshold``); ``export/<exercise>/`` with one file per
student and the template, in the form MOSS (``moss -l python -b template/...``) and JPlag (``-bc``) take.
"""

from __future__ import annotations

import csv
import html
import io
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.core.paths import EXERCISES, EXERCISES_DIR, ROOT

NOISE = 25  # copydetect's default noise threshold: k-grams of 25 filtered characters
GUARANTEE = 30  # copydetect's default guarantee threshold: window = GUARANTEE - NOISE + 1
MIN_SHARED = 3  # candidate pairs share at least this many fingerprints


class SimilarityError(Exception):
    """Similarity cannot be computed (copydetect missing, nothing to compare)."""


def _copydetect() -> Any:
    try:
        import copydetect
    except ImportError:
        raise SimilarityError("copydetect is not installed: pip install 'tapetrace[similarity]'") from None
    return copydetect


@dataclass
class Pair:
    """Two submissions' similarity on one exercise (shares of each one's fingerprinted tokens)."""

    exercise: str
    a: str
    b: str
    sim_a: float
    sim_b: float
    tokens: int
    slices: tuple[Any, Any] | None = field(default=None, repr=False)

    @property
    def score(self) -> float:
        """The pair's rank: the mean of the two shares (a whole copy is 1; a short file inside a longer
        one, which a mutant or a variant of the same solution often is, is not)."""
        return (self.sim_a + self.sim_b) / 2


def graded_code(path: str) -> dict[str, str]:
    """Each exercise's graded code in a submission (a notebook: its own section only), ``{}`` if unreadable."""
    from autograder.submissions import cells as _cells
    from autograder.submissions import loader as _loader

    try:
        sources = _loader.load(path).sources
    except Exception:  # noqa: BLE001 - an unreadable submission has nothing to compare (and is said so)
        return {}
    # a notebook's graded module (a folder's, a zip's, a jupytext file's) carries, after its own section, the
    # context "Run all" gives it (the cells above): only the section is the student's code for this exercise
    own = {ex: _cells.split_graded(src)[0] for ex, src in sources.items() if src}
    return {ex: src for ex, src in own.items() if src.strip()}


def template_code(exercise: str) -> list[str]:
    """The template's texts of an exercise: the stub, the student template's file and notebook section."""
    out = []
    for p in (EXERCISES_DIR / f"{exercise}.py", ROOT / "student_template" / f"{exercise}.py"):
        if p.is_file():
            out.append(p.read_text(encoding="utf-8"))
    for nb in sorted((ROOT / "student_template").glob("*.ipynb")):
        src = graded_code(str(nb)).get(exercise)
        if src:
            out.append(src)
    return out


def canonical(code: str) -> str:
    """``code`` as it is compared: docstrings out, top-level definitions in an order renaming and reordering
    do not change.

    Docstrings become ``...`` (copydetect reads any string as one token ``S``: they are no evidence, and the
    template's are long). Statements other than definitions (imports, constants) stay first, in their
    order; the functions and classes follow, sorted by their shape (the syntax tree's node types and
    constants, not its names). A copy with renamed variables and its helpers moved around is then the same
    text as its origin. Code that does not parse is left as it is.
    """
    import ast

    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    lines = code.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            doc = body[0]
            lines[doc.lineno - 1] = " " * doc.col_offset + "...\n"
            for k in range(doc.lineno, doc.end_lineno or doc.lineno):
                lines[k] = ""
    head, defs = [], []
    for node in tree.body:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        text = "".join(lines[first:node.end_lineno])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            shape = " ".join(type(n).__name__ + (repr(n.value) if isinstance(n, ast.Constant) else "")
                             for n in ast.walk(node))
            defs.append((shape, text))
        else:
            head.append(text)
    return "".join(head) + "\n" + "\n".join(t for _k, t in sorted(defs, key=lambda d: d[0]))


def _fingerprint(cd: Any, name: str, code: str, boilerplate: Any = None) -> Any:
    return cd.CodeFingerprint(f"{name}.py", NOISE, GUARANTEE - NOISE + 1, boilerplate=boilerplate,
                              fp=io.StringIO(code), language="python")


def _fingerprint_all(items: list[tuple[str, str]], boilerplate: Any) -> list[Any]:
    cd = _copydetect()
    return [_fingerprint(cd, name, code, boilerplate) for name, code in items]


def fingerprints(codes: dict[str, str], boilerplate: Any, jobs: int = 1) -> list[Any]:
    """copydetect's fingerprints of ``codes`` (in sorted name order), in ``jobs`` processes (tokenizing is
    most of the time: pygments, about 10 ms a file)."""
    items = sorted(codes.items())
    if jobs <= 1 or len(items) < 64:
        return _fingerprint_all(items, boilerplate)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    size = math.ceil(len(items) / (jobs * 4))
    chunks = [items[k:k + size] for k in range(0, len(items), size)]
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        return [fp for part in pool.map(_fingerprint_all, chunks, [boilerplate] * len(chunks)) for fp in part]


def default_jobs() -> int:
    """Processes for fingerprinting: the CPUs this process may use, at most 8."""
    import os

    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(8, n))


def compare(exercise: str, codes: dict[str, str], templates: list[str], max_share: float = 0.1,
            min_shared: int = MIN_SHARED, jobs: int = 1) -> list[Pair]:
    """Every pair of ``codes`` (student -> graded code) that shares code beyond the template, best first.

    Args:
        exercise: the exercise (named in each pair).
        codes: student name -> code (:func:`canonical` form: what the pages show).
        templates: the template's texts (their fingerprints are removed first).
        max_share: a passage found in more than this share of the submissions (and more than 10 of them)
            is common code, not evidence.
        min_shared: fingerprints two submissions must share to be compared.
        jobs: processes for fingerprinting.
    """
    import numpy as np

    cd = _copydetect()
    from copydetect.utils import get_token_coverage

    boiler: set[int] = set()
    for k, t in enumerate(templates):
        boiler |= set(_fingerprint(cd, f"template{k}", canonical(t)).hashes)
    bp = np.array(sorted(boiler), dtype=np.int64) if boiler else None
    names = sorted(codes)
    fps = fingerprints(codes, bp, jobs)
    owners: dict[int, list[int]] = {}
    for i, fp in enumerate(fps):
        for h in fp.hashes:
            owners.setdefault(h, []).append(i)
    cap = max(10, math.ceil(max_share * len(names)))
    common = {h for h, who in owners.items() if len(who) > cap}
    if common:
        for fp in fps:
            if fp.hashes & common:
                fp.hashes = fp.hashes - common
                fp.hash_idx = {h: v for h, v in fp.hash_idx.items() if h not in common}
                fp.token_coverage = get_token_coverage(fp.hash_idx, fp.k, len(fp.filtered_code))
    shared: Counter[tuple[int, int]] = Counter()
    for h, who in owners.items():
        if h in common or len(who) < 2:
            continue
        for x in range(len(who)):
            for y in range(x + 1, len(who)):
                shared[(who[x], who[y])] += 1
    pairs = []
    for (i, j), n in shared.items():
        if n < min_shared:
            continue
        tokens, (sa, sb), slices = cd.compare_files(fps[i], fps[j])
        if tokens:
            pairs.append(Pair(exercise, names[i], names[j], float(sa), float(sb), int(tokens), slices))
    pairs.sort(key=lambda p: (-p.score, p.a, p.b))
    return pairs


def collect(submissions: list[str], exercises: list[str] | None = None) -> tuple[dict[str, dict[str, str]], list[str]]:
    """Per exercise, student -> graded code; and notes (unreadable submissions, two of one name)."""
    from autograder.reports.gradebook import student_key

    per: dict[str, dict[str, str]] = {}
    notes = []
    seen: dict[str, str] = {}
    for path in submissions:
        name = student_key(path)
        if name in seen:
            name = f"{name}~{len([s for s in seen if s.split('~')[0] == name])}"
            notes.append(f"{path}: another submission is named {student_key(path)}; compared as {name}")
        seen[name] = path
        codes = graded_code(path)
        if not codes:
            notes.append(f"{path}: no exercise code could be read")
        for ex, src in codes.items():
            if exercises is None or ex in exercises:
                per.setdefault(ex, {})[name] = src
    return {ex: per[ex] for ex in EXERCISES if ex in per} | {ex: v for ex, v in per.items() if ex not in EXERCISES}, notes


_CSS = """body{font-family:system-ui,sans-serif;max-width:90rem;margin:1rem auto;padding:0 1rem;color:#1d2330}
table{border-collapse:collapse;font-size:.9rem} th,td{padding:.25rem .5rem;border-bottom:1px solid #eee;text-align:left}
td.n{text-align:right} .side{display:flex;gap:1rem} .side pre{flex:1;overflow:auto;background:#f8f9fa;padding:.5rem;
font-size:.8rem;max-height:40rem;min-width:0} mark{background:#ffe066} .meta{color:#667;font-size:.9rem}
"""


def _marked(cd: Any, code: str, slices: Any) -> str:
    from copydetect.utils import highlight_overlap

    if slices is None or getattr(slices, "shape", (0, 0))[1] == 0:
        return html.escape(code)
    text, _ = highlight_overlap(code, slices, "<mark>", "</mark>", escape_html=True)
    return text


def exercise_page(exercise: str, pairs: list[Pair], codes: dict[str, str], top: int = 20) -> str:
    """One exercise's page: the top pairs, each side by side with the matching spans marked."""
    cd = _copydetect()
    out = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(exercise)} similarity"
           f"</title><style>{_CSS}</style></head><body><h1>{html.escape(exercise)}</h1>",
           f"<p class=\"meta\">{len(codes)} submissions, {len(pairs)} pairs sharing code beyond the template; "
           f"top {min(top, len(pairs))} shown. Marked: code both wrote (names and strings normalised). Shares: of "
           "each one's code beyond the template. Code is shown as compared: top-level definitions in a canonical "
           "order, so moved helpers line up.</p>",
           "<table><tr><th>#</th><th>a</th><th>b</th><th class=n>a's code shared</th><th class=n>b's code shared</th>"
           "<th class=n>tokens</th></tr>"]
    for k, p in enumerate(pairs[:top], 1):
        out.append(f"<tr><td><a href=\"#pair{k}\">{k}</a></td><td>{html.escape(p.a)}</td><td>{html.escape(p.b)}</td>"
                   f"<td class=n>{100 * p.sim_a:.0f}%</td><td class=n>{100 * p.sim_b:.0f}%</td>"
                   f"<td class=n>{p.tokens}</td></tr>")
    out.append("</table>")
    for k, p in enumerate(pairs[:top], 1):
        sa, sb = p.slices if p.slices is not None else (None, None)
        out.append(f"<h2 id=\"pair{k}\">{k}. {html.escape(p.a)} – {html.escape(p.b)} ({100 * p.score:.0f}%)</h2>"
                   f"<div class=\"side\"><pre>{_marked(cd, codes[p.a], sa)}</pre>"
                   f"<pre>{_marked(cd, codes[p.b], sb)}</pre></div>")
    out.append("</body></html>")
    return "\n".join(out)


def _safe(name: str) -> str:
    import re

    return re.sub(r"[^A-Za-z0-9._~-]+", "_", name)[:120] or "_"


def export(exercise: str, codes: dict[str, str], templates: list[str], folder: Path) -> None:
    """``folder/<exercise>/submissions/<student>.py`` and ``template/<exercise>.py``: MOSS's and JPlag's input."""
    top = folder / exercise
    (top / "submissions").mkdir(parents=True, exist_ok=True)
    (top / "template").mkdir(parents=True, exist_ok=True)
    for name, code in codes.items():
        (top / "submissions" / f"{_safe(name)}.py").write_text(code, encoding="utf-8")
    if templates:
        (top / "template" / f"{exercise}.py").write_text(templates[0], encoding="utf-8")


EXPORT_README = """# Exports for MOSS and JPlag

One folder per exercise: `submissions/` holds each student's graded code (one file each), `template/`
the code every student was given.

    moss -l python -b EXERCISE/template/EXERCISE.py EXERCISE/submissions/*.py
    java -jar jplag.jar -l python3 -bc EXERCISE/template EXERCISE/submissions
"""


def run(submissions: list[str], out: Path, threshold: float = 0.5, top: int = 20, max_share: float = 0.1,
        exercises: list[str] | None = None, jobs: int | None = None) -> dict[str, Any]:
    """Writes every output into ``out``; returns ``{"pairs": n_above, "exercises": {ex: n}, "notes": [...]}``."""
    _copydetect()
    per, notes = collect(submissions, exercises)
    if not per:
        raise SimilarityError("no exercise code in any submission")
    out.mkdir(parents=True, exist_ok=True)
    rows: list[Pair] = []
    summary: dict[str, dict[str, Any]] = {}
    for ex, raw in per.items():
        templates = template_code(ex)
        codes = {name: canonical(src) for name, src in raw.items()}
        pairs = compare(ex, codes, templates, max_share=max_share, jobs=jobs or default_jobs())
        (out / f"{_safe(ex)}.html").write_text(exercise_page(ex, pairs, codes, top), encoding="utf-8")
        export(ex, raw, templates, out / "export")
        above = [p for p in pairs if p.score >= threshold]
        rows += above
        summary[ex] = {"submissions": len(codes), "pairs": len(pairs), "above": len(above),
                       "top": pairs[0].score if pairs else 0.0}
    (out / "export" / "README.md").write_text(EXPORT_README, encoding="utf-8")
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["exercise", "a", "b", "similarity", "a_shared", "b_shared", "tokens"])
    for p in rows:
        w.writerow([p.exercise, p.a, p.b, f"{p.score:.4f}", f"{p.sim_a:.4f}", f"{p.sim_b:.4f}", p.tokens])
    (out / "pairs.csv").write_text(buf.getvalue(), encoding="utf-8")
    index = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>similarity</title>"
             f"<style>{_CSS}</style></head><body><h1>Similarity</h1><p class=\"meta\">{len(submissions)} submissions; "
             f"template code removed; pairs at or above {100 * threshold:.0f}% in pairs.csv; MOSS/JPlag input in "
             "export/.</p><table><tr><th>exercise</th><th class=n>submissions</th><th class=n>pairs sharing code</th>"
             f"<th class=n>at or above {100 * threshold:.0f}%</th><th class=n>top</th></tr>"]
    for ex, s in summary.items():
        index.append(f"<tr><td><a href=\"{html.escape(_safe(ex))}.html\">{html.escape(ex)}</a></td>"
                     f"<td class=n>{s['submissions']}</td><td class=n>{s['pairs']}</td><td class=n>{s['above']}</td>"
                     f"<td class=n>{100 * s['top']:.0f}%</td></tr>")
    index.append("</table>")
    index += [f"<p class=\"meta\">{html.escape(n)}</p>" for n in notes]
    index.append("</body></html>")
    (out / "index.html").write_text("\n".join(index), encoding="utf-8")
    return {"pairs": len(rows), "exercises": summary, "notes": notes}
