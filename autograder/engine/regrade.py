"""``tapetrace regrade``: grade again only what a change can have moved, and say what moved and why.

Each exercise of every result carries a fingerprint of what decides its verdicts
(autograder/core/verdict_fp.py). :func:`plan` compares an earlier run's fingerprints with this install's,
on this run's device, with the earlier seed: a (submission, exercise) pair is graded again when a part
moved (its suite, public checks, probes, reference, tolerances, engine, datasets, device), when it has no
fingerprint, when the grader could not grade it (``grader_error``/``ungraded``), or with ``--all``.
The new rows are merged into the earlier ones (autograder/engine/resume.py's ``merge``) and :func:`diff` lists,
per submission and exercise whose score, maximum or any check's verdict moved, the old and new score out
of the old and new maximum, the checks that changed verdict, and why (the parts that moved). Each row
also records, per check, its points and digests of its definition and of the tolerances it names
(:func:`check_parts`, stamped by :func:`stamp_checks`): the diff names the checks whose definition, points
or tolerance changed (:func:`changed_checks`). The diff is data (:class:`Diff`): its JSON form feeds
``tapetrace report --regrade DIFF.json``; its CSV, Markdown and HTML for people are the reports'
(:mod:`autograder.reports.regrade_render`).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from autograder.core import status as _status
from autograder.core import verdict_fp as _verdict_fp
from autograder.core.records import ResultRow, TestRow
from autograder.engine.resume import same_place


class RegradeRefused(Exception):
    """The earlier results cannot be regraded as asked (mixed seeds, an unknown submission)."""


class NamedCheck(TypedDict):
    """A check whose definition, points or tolerance changed: ``what`` is ``"points 1 → 2"``, ``"removed"``..."""

    name: str
    what: str


class CheckMove(TypedDict):
    """A check whose verdict moved: ``old``/``new`` are ``passed``, ``failed`` or ``absent``."""

    name: str
    old: str
    new: str
    old_code: str
    new_code: str
    message: str


class Moved(TypedDict):
    """A (submission, exercise) pair whose score, maximum, status or any verdict moved."""

    submission: str
    exercise: str
    old_score: float
    new_score: float
    old_max_score: float
    max_score: float  # the new one
    old_status: str | None
    new_status: str | None
    reasons: list[str]
    checks: list[CheckMove]


class Diff(TypedDict):
    """What a regrade moved (:func:`diff`), written as ``NEW.diff.json``.

    ``considered``: every pair of the chosen submissions; ``unchanged``: considered - moved (the pairs not
    graded again did not move: nothing that decides them changed); ``kept``: considered - regraded.
    ``overrides``: the instructor's overrides' audit, when ``--overrides`` was given.
    """

    tapetrace_regrade: int
    seed: int | None
    regraded: int
    checks_changed: dict[str, list[NamedCheck]]
    moved: list[Moved]
    considered: int
    unchanged: int
    kept: int
    overrides: NotRequired[dict[str, Any]]


@dataclass
class Plan:
    """What a regrade grades.

    Attributes:
        seed: the earlier run's seed (every pair is graded with it).
        exercises: the exercises of the earlier rows, in their order.
        paths: the submissions with something to grade again, in the earlier order.
        exercises_for: per such path, the exercises to grade again.
        reasons: per (path, exercise), why (``["suite changed"]``...).
        old: per path, the earlier row.
        definitions: per (path, exercise), the checks whose definition, points or tolerance changed since
            that row was graded (:func:`changed_checks`; empty when the earlier row did not record them).
        considered: every (submission, exercise) pair of the chosen submissions, graded again or not.
    """

    seed: int | None
    exercises: list[str]
    paths: list[str] = field(default_factory=list)
    exercises_for: dict[str, list[str]] = field(default_factory=dict)
    reasons: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    old: dict[str, ResultRow] = field(default_factory=dict)
    definitions: dict[tuple[str, str], list[NamedCheck]] = field(default_factory=dict)
    considered: int = 0

    @property
    def pairs(self) -> int:
        """How many (submission, exercise) pairs are graded again."""
        return sum(len(v) for v in self.exercises_for.values())


_TOLERANCE_KINDS = re.compile(r"""["']([a-z_]+)["']""")
_CHECK_CACHE: dict[tuple[Any, ...], dict[str, Any]] = {}


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _source(fn: Callable[..., Any]) -> str:
    """A check function's text (its code object's parts where the file cannot be read)."""
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        code = getattr(fn, "__code__", None)
        return repr((code.co_code, code.co_consts, code.co_names)) if code is not None else repr(fn)


def _check_part(check: Any) -> dict[str, Any]:
    from autograder.core.tolerances import TOLERANCES

    key = (check.name, id(check.fn), check.points, check.hidden, check.timeout_scale, check.needs)
    if key not in _CHECK_CACHE:
        src = _source(check.fn)
        kinds = sorted(set(_TOLERANCE_KINDS.findall(src)) & set(TOLERANCES))
        tols = {k: {b: [t.atol, t.rtol] for b, t in TOLERANCES[k].items()} for k in kinds}
        _CHECK_CACHE[key] = {"points": float(check.points),
                             "definition": _digest([src, check.hidden, check.timeout_scale, check.needs]),
                             "tolerance": _digest(tols)}
    return _CHECK_CACHE[key]


def check_parts(exercise: str) -> dict[str, dict[str, Any]]:
    """Per check of ``exercise``'s suite: its points, a digest of its definition (its function's text, whether
    hidden, its timeout scale, what it needs) and one of the tolerances it names (``"forward"``, ``"step"``...).

    A helper the check calls is not its definition: a change there moves the suite's part (``suite changed``)
    without naming the check.
    """
    from autograder import hidden

    return {c.name: _check_part(c) for c in hidden.load_suite(exercise).checks}


def stamp_checks(row: ResultRow) -> None:
    """Adds ``checks`` (:func:`check_parts`) to each graded exercise's fingerprint of a result row."""
    for ex, e in (row.get("exercises") or {}).items():
        if isinstance(e, dict) and isinstance(e.get("fingerprint"), dict):
            try:
                e["fingerprint"]["checks"] = check_parts(ex)
            except Exception:  # noqa: BLE001 - naming checks is for the diff's reader; grading never depends on it
                continue


def changed_checks(before: dict[str, Any] | None, now: dict[str, Any] | None) -> list[NamedCheck]:
    """The checks whose definition, points or tolerance differ between two :func:`check_parts`, in words.

    Returns:
        ``[{"name", "what"}]`` (``"points 1 → 2"``, ``"definition changed"``, ``"tolerance changed"``,
        ``"added (2 points)"``, ``"removed"``), in the suite's order; ``[]`` when either is unknown.
    """
    if not isinstance(before, dict) or not isinstance(now, dict):
        return []
    out: list[NamedCheck] = []
    for name in dict.fromkeys([*now, *before]):
        a, b = before.get(name), now.get(name)
        if not isinstance(a, dict):  # a check the row did not have: ``now`` (check_parts) has it
            out.append({"name": name, "what": f"added ({float(now[name]['points']):g} points)"})
            continue
        if not isinstance(b, dict):
            out.append({"name": name, "what": "removed"})
            continue
        if float(a.get("points", 0)) != float(b["points"]):
            out.append({"name": name, "what": f"points {float(a.get('points', 0)):g} → {float(b['points']):g}"})
        if a.get("definition") != b.get("definition"):
            out.append({"name": name, "what": "definition changed"})
        elif a.get("tolerance") != b.get("tolerance"):  # (a new definition may name other tolerances: it says so)
            out.append({"name": name, "what": "tolerance changed"})
    return out


def _seed(rows: list[ResultRow]) -> int | None:
    seeds = sorted({int(r["seed"]) for r in rows if r.get("seed") is not None})
    if len(seeds) > 1:
        raise RegradeRefused(f"the file mixes seeds ({', '.join(map(str, seeds))}); regrade each run's file alone")
    return seeds[0] if seeds else None


def plan(old_rows: list[ResultRow], submissions: list[str] | None, device: dict[str, Any],
         public_only: bool = False, everything: bool = False, fingerprint: Any = None,
         checks: Callable[[str], dict[str, Any]] | None = None) -> Plan:
    """Decides which (submission, exercise) pairs to grade again.

    Args:
        old_rows: the earlier run's rows.
        submissions: the submissions to consider (their rows must be in ``old_rows``); None: every row's.
        device: this run's devices (``{"torch": ..., "jax": ...}``).
        public_only: whether this run grades the public checks only.
        everything: ``--all``: every pair, whatever its fingerprint.
        fingerprint: ``(exercise, device, seed, public_only) -> fingerprint`` (default
            :func:`autograder.core.verdict_fp.make`; tests pass another).
        checks: ``exercise -> check parts`` (default :func:`check_parts`), to name the checks that changed.

    Raises:
        RegradeRefused: mixed seeds, or a submission the earlier results do not hold.
    """
    make = fingerprint or _verdict_fp.make
    seed = _seed(old_rows)
    exercises = list(dict.fromkeys(ex for r in old_rows for ex in r.get("exercises", {})))
    by_place = {same_place(str(r["submission"])): r for r in old_rows}
    if submissions is None:
        chosen = [str(r["submission"]) for r in old_rows]
    else:
        chosen = []
        for p in dict.fromkeys(submissions):
            if same_place(p) not in by_place:
                raise RegradeRefused(f"{p} is not in the earlier results (grade it with tapetrace grade)")
            chosen.append(p)
    now = {ex: make(ex, device, seed, public_only) for ex in exercises}
    parts_now: dict[str, dict[str, Any] | None] = {}

    def current(ex: str) -> dict[str, Any] | None:
        if ex not in parts_now:
            try:
                parts_now[ex] = (checks or check_parts)(ex)
            except Exception:  # noqa: BLE001 - an unknown exercise: nothing to name
                parts_now[ex] = None
        return parts_now[ex]

    out = Plan(seed=seed, exercises=exercises)
    for p in chosen:
        old = by_place[same_place(p)]
        out.old[p] = old
        out.considered += len(old.get("exercises", {}))
        again = []
        for ex, e in old.get("exercises", {}).items():
            why = _verdict_fp.changed(e.get("fingerprint"), now[ex])
            if _status.is_graders(str(e.get("status"))):
                why = [*why, f"{e.get('status')} before"]
            if everything and not why:
                why = ["--all"]
            if why:
                again.append(ex)
                out.reasons[(p, ex)] = why
                before = (e.get("fingerprint") or {}).get("checks") if isinstance(e.get("fingerprint"), dict) else None
                out.definitions[(p, ex)] = changed_checks(before, current(ex)) if before else []
        if again:
            out.paths.append(p)
            out.exercises_for[p] = again
    return out


def _verdicts(e: Mapping[str, Any] | None) -> dict[str, TestRow]:
    """An exercise's row (or what an older row holds for it) -> its test records by name."""
    return {str(t.get("name")): t for t in (e.get("tests") if e else None) or []}


def _points_moved(ov: dict[str, TestRow], nv: dict[str, TestRow]) -> list[NamedCheck]:
    """Checks whose points differ between two rows' test records (rows graded before checks were recorded)."""
    out: list[NamedCheck] = []
    for name in dict.fromkeys([*nv, *ov]):
        a, b = ov.get(name), nv.get(name)
        if a is None or b is None:
            out.append({"name": name, "what": "added" if a is None else "removed"})
        elif float(a.get("max_score") or 0) != float(b.get("max_score") or 0):
            out.append({"name": name, "what": f"points {float(a.get('max_score') or 0):g} → "
                                              f"{float(b.get('max_score') or 0):g}"})
    return out


def diff(the_plan: Plan, new_rows: dict[str, ResultRow]) -> Diff:
    """What moved: per (submission, exercise) graded again whose score, maximum, status or any verdict changed.

    Args:
        the_plan: the :class:`Plan` that was graded.
        new_rows: per path, the merged new row.

    Returns:
        The :class:`Diff` (``regraded``: the pairs graded again; ``checks_changed``: per exercise, the
        :class:`NamedCheck` s; ``moved``: the :class:`Moved` pairs, in the plan's order).
    """
    moved: list[Moved] = []
    named: dict[str, dict[tuple[str, str], NamedCheck]] = {}
    for p, exs in the_plan.exercises_for.items():
        old_row, new_row = the_plan.old[p], new_rows.get(p)
        if new_row is None:
            continue
        for ex in exs:
            o: Mapping[str, Any] = old_row["exercises"].get(ex) or {}
            n: Mapping[str, Any] = new_row["exercises"].get(ex) or {}
            ov, nv = _verdicts(o), _verdicts(n)
            for c in [*the_plan.definitions.get((p, ex), []), *(_points_moved(ov, nv) if ov and nv else [])]:
                named.setdefault(ex, {}).setdefault((c["name"], c["what"].split(" (")[0]), c)
            checks: list[CheckMove] = []
            for name in dict.fromkeys([*ov, *nv]):
                a: Mapping[str, Any] = ov.get(name, {})
                b: Mapping[str, Any] = nv.get(name, {})
                if bool(a.get("passed")) != bool(b.get("passed")) or (name in ov) != (name in nv):
                    checks.append({"name": name, "old": _word(a, name in ov), "new": _word(b, name in nv),
                                   "old_code": a.get("code", ""), "new_code": b.get("code", ""),
                                   "message": str(b.get("message") or a.get("message") or "")})
            os_, ns = float(o.get("score") or 0.0), float(n.get("score") or 0.0)
            om, nm = float(o.get("max_score") or 0.0), float(n.get("max_score") or o.get("max_score") or 0.0)
            if checks or abs(os_ - ns) > 1e-9 or abs(om - nm) > 1e-9 or o.get("status") != n.get("status"):
                moved.append({"submission": str(old_row["submission"]), "exercise": ex, "old_score": os_,
                              "new_score": ns, "old_max_score": om, "max_score": nm,
                              "old_status": o.get("status"), "new_status": n.get("status"),
                              "reasons": the_plan.reasons.get((p, ex), []), "checks": checks})
    changed = {ex: _merge_named(list(v.values())) for ex, v in named.items()}
    return {"tapetrace_regrade": 1, "seed": the_plan.seed, "regraded": the_plan.pairs, "checks_changed": changed,
            "moved": moved, "considered": max(the_plan.considered, the_plan.pairs),
            "unchanged": max(the_plan.considered, the_plan.pairs) - len(moved),
            "kept": max(the_plan.considered - the_plan.pairs, 0)}


def _merge_named(items: list[NamedCheck]) -> list[NamedCheck]:
    """One entry per (check, what): "added (2 points)" over a bare "added" the test records gave."""
    out: dict[tuple[str, str], NamedCheck] = {}
    for c in items:
        key = (c["name"], c["what"].split(" (")[0])
        if key not in out or len(c["what"]) > len(out[key]["what"]):
            out[key] = c
    return list(out.values())


def _word(t: Mapping[str, Any], present: bool) -> str:
    if not present:
        return "absent"
    return "passed" if t.get("passed") else "failed"
