"""``tapetrace regrade``: after one check changes, only that exercise is graded again, with the old seed,
and exactly the students whose score moved are listed (autograder/engine/regrade.py, autograder/core/verdict_fp.py).

One class is graded for real (two exercises, five students made of the solutions, mutants from
tests/mutants and a renamed copy); the plan's rules (device, --all, the grader's rows, no fingerprint)
are checked without grading.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
import shutil

import pytest
from conftest import MUTANTS, SEED, make_submission

from autograder import cli
from autograder.core import verdict_fp as _verdict_fp
from autograder.core.paths import HIDDEN, SOLUTIONS
from autograder.engine import GradingRun
from autograder.engine import regrade as _regrade
from autograder.hidden import load_suite
from autograder.reports import regrade_render as _render

EXS = ["ex01_torch_mlp", "ex09_autograd_tape"]
CHANGED = "manual_grads_at_random_points"  # ex09's check the instructor "fixes" (made lenient)


def _renamed(src: str) -> str:
    """A copy with its local names renamed (what a student who copies does first)."""
    for old in sorted(set(re.findall(r"^\s+([a-z_][a-z0-9_]*) = ", src, re.M)), key=len, reverse=True):
        src = re.sub(rf"\b{old}\b", f"my_{old}", src)
    return src


def _class(tmp):
    def sub(name, ex01=None, ex09=None):
        d = tmp / "class" / name
        d.mkdir(parents=True)
        for ex, mutant in (("ex01_torch_mlp", ex01), ("ex09_autograd_tape", ex09)):
            src = (MUTANTS / ex / f"{mutant}.py") if mutant else (SOLUTIONS / f"{ex}.py")
            (d / f"{ex}.py").write_text(src.read_text())
        return str(d)

    subs = [sub("alice"), sub("bob", "relu_after_last", "figure2_dldw"), sub("carol", None, "swapped_w_x"),
            sub("dave", "sigmoid_output", "no_visited_set")]
    erin = tmp / "class" / "erin"
    shutil.copytree(subs[0], erin)
    for ex in EXS:
        (erin / f"{ex}.py").write_text(_renamed((erin / f"{ex}.py").read_text()))
    return [*subs, str(erin)]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("regrade")
    subs = _class(tmp)
    old = tmp / "old.json"
    code = cli.main(["grade", *subs, "--only", ",".join(EXS), "--device", "cpu", "--seed", str(SEED), "--json",
                     str(old), "--quiet", "--jobs", "2"])
    assert code == 0
    return tmp, subs, old


def test_every_row_records_what_decides_its_verdicts(graded):
    _tmp, _subs, old = graded
    rows = json.loads(old.read_text())
    for r in rows:
        for ex, e in r["exercises"].items():
            fp = e["fingerprint"]
            assert set(fp["parts"]) == set(_verdict_fp.WORDS)
            assert fp["parts"]["seed"] == SEED and fp["parts"]["device"] == "torch cpu, jax cpu"
            assert fp["digest"] == _verdict_fp.digest(fp["parts"]) == _verdict_fp.make(ex, r["device"], SEED)["digest"]
    assert rows[0]["exercises"]["ex01_torch_mlp"]["fingerprint"]["parts"]["suite"] != \
        rows[0]["exercises"]["ex09_autograd_tape"]["fingerprint"]["parts"]["suite"]


def test_grade_writes_the_receipt_beside_the_results(graded):
    _tmp, subs, old = graded
    rec = json.loads(old.with_name("old.receipt.json").read_text())["receipt"]
    assert rec["submissions"] == len(subs) and rec["statuses"]["graded"] == 2 * len(subs)
    assert rec["seeds"] == [SEED] and rec["devices"] == {"torch cpu, jax cpu": len(subs)}
    assert rec["mutant_kill_rates"]["ex09_autograd_tape"]["mutants"] >= 19
    assert set(rec["suites"]) == set(EXS) and rec["anomalies"] == []


def test_nothing_changed_nothing_graded(graded, monkeypatch, capsys):
    tmp, subs, old = graded
    calls = []
    monkeypatch.setattr(GradingRun, "grade", lambda self, *a, **k: calls.append(a) or [])
    assert cli.main(["regrade", str(old), "--json", str(tmp / "same.json"), "--device", "cpu"]) == 0
    assert not calls
    d = json.loads((tmp / "same.diff.json").read_text())
    assert d["regraded"] == 0 and d["moved"] == []
    # issue 56: the pairs not graded again count as unchanged (it said "0 moved, 0 unchanged")
    n = len(subs) * len(EXS)
    assert d["unchanged"] == n and d["kept"] == n and d["considered"] == n
    assert f"0 moved, {n} unchanged ({n} not graded again" in capsys.readouterr().err
    assert f"0 moved, {n} unchanged" in (tmp / "same.diff.md").read_text()
    assert json.loads((tmp / "same.json").read_text()) == json.loads(old.read_text())


def test_one_changed_check_regrades_only_its_exercise_and_lists_exactly_the_moved(graded, monkeypatch):
    tmp, subs, old = graded
    before = json.loads(old.read_text())
    failed_it = {r["submission"] for r in before for t in r["exercises"]["ex09_autograd_tape"]["tests"]
                 if t["name"] == CHANGED and not t["passed"]}
    assert failed_it == {subs[1], subs[2]}  # bob and carol (the class is built so)

    # The instructor's fix: the check becomes lenient. A copy of the suite file with the edit gives the new hash.
    suite = load_suite("ex09_autograd_tape")
    monkeypatch.setattr(suite, "checks", [dataclasses.replace(c, fn=lambda ctx: None) if c.name == CHANGED else c
                                          for c in suite.checks])
    edited = tmp / "ex09_autograd_tape.py"
    edited.write_text((HIDDEN / "ex09_autograd_tape.py").read_text() + "\n# fixed: lenient at random points\n")
    real = _verdict_fp.file_parts

    def parts(exercise, *a, **k):
        out = real(exercise, *a, **k)
        return {**out, "suite": _verdict_fp._sha([edited])} if exercise == "ex09_autograd_tape" else out

    monkeypatch.setattr(_verdict_fp, "file_parts", parts)
    graded_pairs, planned = [], []
    real_grade_exercise = GradingRun.grade_exercise

    def spy(self, sub, exercise, final=None):
        graded_pairs.append((sub.path, exercise, self.seed))
        planned.append(self.exercises)
        return real_grade_exercise(self, sub, exercise, final)

    monkeypatch.setattr(GradingRun, "grade_exercise", spy)
    new = tmp / "new.json"
    code = cli.main(["regrade", str(old), "--json", str(new), "--csv", str(tmp / "new.csv"), "--device", "cpu",
                     "--quiet"])
    assert code == 0
    assert sorted(graded_pairs) == sorted((s, "ex09_autograd_tape", SEED) for s in subs)  # ex01 never re-run
    assert planned and all(p == ["ex09_autograd_tape"] for p in planned)  # its run made for ex09 alone
    d = json.loads((tmp / "new.diff.json").read_text())
    assert d["seed"] == SEED and d["regraded"] == len(subs)
    assert {m["submission"] for m in d["moved"]} == failed_it  # exactly the students whose score moved
    for m in d["moved"]:
        assert m["exercise"] == "ex09_autograd_tape" and m["new_score"] > m["old_score"]
        assert m["reasons"] == ["suite changed"]
        assert [(c["name"], c["old"], c["new"]) for c in m["checks"]] == [(CHANGED, "failed", "passed")]
    assert d["unchanged"] == len(subs) * len(EXS) - len(failed_it)  # ex01's pairs, not graded again, count too
    assert d["kept"] == len(subs)
    after = {r["submission"]: r for r in json.loads(new.read_text())}
    for r in before:  # ex01 rows kept as they were; totals recomputed
        assert after[r["submission"]]["exercises"]["ex01_torch_mlp"] == r["exercises"]["ex01_torch_mlp"]
        assert after[r["submission"]]["total"] == pytest.approx(
            sum(e["score"] for e in after[r["submission"]]["exercises"].values()))
    with open(tmp / "new.diff.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["submission"] for r in rows} == failed_it and all(r["why"] == "suite changed" for r in rows)
    md = (tmp / "new.diff.md").read_text()
    assert "2 moved" in md and f"{CHANGED}: failed -> passed" in md
    with open(tmp / "new.csv", encoding="utf-8") as fh:
        assert len(list(csv.DictReader(fh))) == len(subs)
    # the report shows it
    from autograder.cli.report import main as report

    assert report([str(new), "--out", str(tmp / "rep"), "--regrade", str(tmp / "new.diff.json")]) == 0
    page = (tmp / "rep" / "index.html").read_text()
    assert "<h2>Regrade</h2>" in page and page.count("suite changed") == 2
    assert (tmp / "rep" / "regrade.csv").read_text() == (tmp / "new.diff.csv").read_text()


# ------------------------------------------------------------------ the plan, without grading
def _fp(suite="s"):
    def make(ex, device, seed, public_only=False):
        p = {"suite": suite, "reference": "r", "device": _verdict_fp.device_words(device), "seed": seed,
             "public_only": public_only}
        return {"digest": _verdict_fp.digest(p), "parts": p}
    return make


def _rows(device=None, status="graded", fingerprint=True):
    dev = device or {"torch": "cpu", "jax": "cpu"}
    rows = []
    for name in ("a", "b"):
        exs = {}
        for ex in EXS:
            exs[ex] = {"score": 1.0, "max_score": 2.0, "status": status if name == "a" else "graded", "tests": []}
            if fingerprint:
                exs[ex]["fingerprint"] = _fp()(ex, dev, 5)
        rows.append({"submission": f"/nowhere/{name}", "seed": 5, "device": dev, "exercises": exs})
    return rows


CPU = {"torch": "cpu", "jax": "cpu"}


def test_plan_device_differs_regrades_everything_with_that_reason():
    p = _regrade.plan(_rows(device={"torch": "cuda", "jax": "gpu"}), None, CPU, fingerprint=_fp())
    assert p.pairs == 4 and p.seed == 5
    assert set(map(tuple, p.reasons.values())) == {("device differs",)}


def test_plan_all_grader_rows_and_missing_fingerprints():
    assert _regrade.plan(_rows(), None, CPU, fingerprint=_fp()).pairs == 0
    p = _regrade.plan(_rows(), None, CPU, everything=True, fingerprint=_fp())
    assert p.pairs == 4 and set(map(tuple, p.reasons.values())) == {("--all",)}
    p = _regrade.plan(_rows(status="grader_error"), None, CPU, fingerprint=_fp())
    assert p.exercises_for == {"/nowhere/a": EXS} and p.reasons[("/nowhere/a", EXS[0])] == ["grader_error before"]
    p = _regrade.plan(_rows(fingerprint=False), None, CPU, fingerprint=_fp())
    assert p.pairs == 4 and p.reasons[("/nowhere/b", EXS[1])] == ["no fingerprint before"]
    p = _regrade.plan(_rows(), None, CPU, fingerprint=_fp(suite="new"))
    assert p.pairs == 4 and p.reasons[("/nowhere/a", EXS[0])] == ["suite changed"]


def test_nothing_moved_counts_every_pair_unchanged():
    """Issue 56: with nothing changed the diff said "0 moved, 0 unchanged"."""
    p = _regrade.plan(_rows(), None, CPU, fingerprint=_fp())
    d = _regrade.diff(p, {})
    assert (p.pairs, p.considered) == (0, 4)
    assert (d["regraded"], d["unchanged"], d["kept"]) == (0, 4, 4)
    assert _render.summary_words(d) == "0 moved, 4 unchanged (4 not graded again: nothing that decides them changed)"
    one = _regrade.plan(_rows(), ["/nowhere/b"], CPU, fingerprint=_fp())
    assert _regrade.diff(one, {})["unchanged"] == 2  # only the chosen submission's pairs


def test_plan_refuses_mixed_seeds_and_strangers():
    rows = _rows()
    rows[1]["seed"] = 6
    with pytest.raises(_regrade.RegradeRefused, match="mixes seeds"):
        _regrade.plan(rows, None, CPU, fingerprint=_fp())
    with pytest.raises(_regrade.RegradeRefused, match="not in the earlier results"):
        _regrade.plan(_rows(), ["/nowhere/zed"], CPU, fingerprint=_fp())
    p = _regrade.plan(_rows(), ["/nowhere/b"], CPU, everything=True, fingerprint=_fp())
    assert list(p.exercises_for) == ["/nowhere/b"]


def test_fingerprint_parts_follow_the_files_that_decide_verdicts(tmp_path):
    pkg, sol = tmp_path / "autograder", tmp_path / "solutions"
    own = pkg / "exercises" / "ex01_torch_mlp"
    for path in (pkg / "hidden" / "ex01_torch_mlp.py", own / "public.py", own / "probes.py", own / "__init__.py",
                 own / "messages.py", pkg / "core" / "tolerances.py", sol / "ex01_torch_mlp.py"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {path.name}\n")
    before = _verdict_fp.file_parts("ex01_torch_mlp", root=pkg, solutions=sol)
    (own / "messages.py").write_text("# other words, same verdicts\n")
    assert _verdict_fp.file_parts("ex01_torch_mlp", root=pkg, solutions=sol) == before
    for path, part in ((pkg / "hidden" / "ex01_torch_mlp.py", "suite"), (sol / "ex01_torch_mlp.py", "reference"),
                       (own / "probes.py", "probes"), (pkg / "core" / "tolerances.py", "tolerances")):
        path.write_text(path.read_text() + "x = 1\n")
        now = _verdict_fp.file_parts("ex01_torch_mlp", root=pkg, solutions=sol)
        assert {k for k in now if now[k] != before[k]} == {part}
        before = now
    old = _verdict_fp.make("ex01_torch_mlp", CPU, 5)
    new = _verdict_fp.make("ex01_torch_mlp", {"torch": "cuda", "jax": "gpu"}, 5)
    assert _verdict_fp.changed(old, new) == ["device differs"] and _verdict_fp.changed(old, old) == []


# ------------------------------------------------------------------ the diff says what changed (issue 37)
def _checks_rows(names_scores, points, parts):
    """Rows of one exercise (EXS[1]) with checks c1..c3 worth ``points``; ``names_scores``: name -> passed set."""
    rows = []
    for name, passed in names_scores.items():
        tests = [{"name": c, "score": points[c] if c in passed else 0.0, "max_score": points[c],
                  "passed": c in passed, "code": "" if c in passed else "MISMATCH"} for c in points]
        fp = {**_fp()(EXS[1], CPU, 5), "checks": parts}
        rows.append({"submission": name, "seed": 5, "device": CPU, "exercises": {EXS[1]: {
            "score": sum(t["score"] for t in tests), "max_score": sum(points.values()), "status": "graded",
            "tests": tests, "fingerprint": fp}}})
    return rows


def _parts(points, definition=None, tolerance=None):
    return {c: {"points": p, "definition": (definition or {}).get(c, "d"), "tolerance": (tolerance or {}).get(c, "t")}
            for c, p in points.items()}


def test_a_check_worth_more_points_moves_every_maximum_and_is_named():
    """c2 went from 1 to 2 points: who passed it moves 3/10 -> 4/11, who failed it 3/10 -> 3/11; both are listed,
    with the check that changed verdict for nobody, and c2 is named as changed."""
    before, after = {"c1": 3.0, "c2": 1.0, "c3": 6.0}, {"c1": 3.0, "c2": 2.0, "c3": 6.0}
    who = {"/nowhere/passed_c2": {"c2", "c1"}, "/nowhere/failed_c2": {"c1"}}
    old = _checks_rows(who, before, _parts(before))
    new = {r["submission"]: r for r in _checks_rows(who, after, _parts(after))}
    plan = _regrade.plan(old, None, CPU, fingerprint=_fp(suite="new"), checks=lambda ex: _parts(after))
    d = _regrade.diff(plan, new)
    assert d["checks_changed"] == {EXS[1]: [{"name": "c2", "what": "points 1 → 2"}]}
    assert {m["submission"]: (m["old_score"], m["old_max_score"], m["new_score"], m["max_score"])
            for m in d["moved"]} == {"/nowhere/passed_c2": (4.0, 10.0, 5.0, 11.0),
                                     "/nowhere/failed_c2": (3.0, 10.0, 3.0, 11.0)}
    assert d["unchanged"] == 0
    md = _render.diff_markdown(d)
    assert "3/10 → 3/11" in md and "4/10 → 5/11" in md and "c2: points 1 → 2" in md
    assert "Checks whose definition, points or tolerance changed" in _render.render_html(d)


def test_the_checks_that_changed_verdict_are_listed_per_student():
    points = {"c1": 3.0, "c2": 1.0, "c3": 6.0}
    old = _checks_rows({"/nowhere/a": {"c1"}, "/nowhere/b": {"c1", "c3"}}, points, _parts(points))
    new = {r["submission"]: r for r in _checks_rows({"/nowhere/a": {"c1", "c2", "c3"}, "/nowhere/b": {"c1", "c3"}},
                                                    points, _parts(points, definition={"c2": "x"},
                                                                   tolerance={"c3": "y"}))}
    plan = _regrade.plan(old, None, CPU, fingerprint=_fp(suite="new"),
                         checks=lambda ex: _parts(points, definition={"c2": "x"}, tolerance={"c3": "y"}))
    d = _regrade.diff(plan, new)
    assert d["checks_changed"][EXS[1]] == [{"name": "c2", "what": "definition changed"},
                                           {"name": "c3", "what": "tolerance changed"}]
    assert [m["submission"] for m in d["moved"]] == ["/nowhere/a"] and d["unchanged"] == 1
    assert [(c["name"], c["old"], c["new"]) for c in d["moved"][0]["checks"]] == [("c2", "failed", "passed"),
                                                                                  ("c3", "failed", "passed")]


def test_changed_checks_in_words():
    a = _parts({"c1": 1.0, "gone": 2.0})
    b = _parts({"c1": 1.0, "new": 2.0}, definition={"c1": "other"})
    assert _regrade.changed_checks(a, b) == [{"name": "c1", "what": "definition changed"},
                                             {"name": "new", "what": "added (2 points)"},
                                             {"name": "gone", "what": "removed"}]
    assert _regrade.changed_checks(None, b) == [] and _regrade.changed_checks(a, a) == []


def test_check_parts_follow_a_checks_definition_and_points(monkeypatch):
    suite = load_suite("ex09_autograd_tape")
    before = _regrade.check_parts("ex09_autograd_tape")
    assert list(before) == [c.name for c in suite.checks]
    monkeypatch.setattr(suite, "checks", [dataclasses.replace(c, fn=lambda ctx: None, points=c.points + 1)
                                          if c.name == CHANGED else c for c in suite.checks])
    now = _regrade.check_parts("ex09_autograd_tape")
    words = {c["what"] for c in _regrade.changed_checks(before, now) if c["name"] == CHANGED}
    assert words == {f"points {before[CHANGED]['points']:g} → {before[CHANGED]['points'] + 1:g}", "definition changed"}
    assert not [c for c in _regrade.changed_checks(before, now) if c["name"] != CHANGED]


def test_diff_outputs_keep_student_text_inert_and_numbers_numeric():
    points = {"c1": 3.0, "c2": 1.0, "c3": 6.0}
    names = ["=HYPERLINK(\"http://x\")", "<img src=x onerror=alert(1)> | [x](javascript:1)"]
    old = _checks_rows({n: {"c1", "c3"} for n in names}, points, _parts(points))
    new = {r["submission"]: r for r in _checks_rows({n: {"c1"} for n in names}, points, _parts(points))}
    d = _regrade.diff(_regrade.plan(old, None, CPU, fingerprint=_fp(suite="new"), checks=lambda ex: _parts(points)),
                      new)
    rows = list(csv.DictReader(io.StringIO(_render.diff_csv(d))))
    assert {r["submission"] for r in rows} == {"'" + names[0], names[1]}
    for r in rows:  # numbers a spreadsheet reads: no apostrophe on a negative delta
        assert r["delta"] == "-6" and r["old_score"] == "9" and r["new_score"] == "3" and r["max_score"] == "10"
    md = _render.diff_markdown(d)
    table = [ln for ln in md.splitlines() if ln.startswith("| ") and "img" in ln]
    cell = table[0][2:].split(" | ")[0]
    assert not re.search(r"(?<!\\)[<>\[\]|(]", cell) and "\\<img src=x onerror=alert\\(1\\)\\> \\| \\[x\\]\\(javascript\\:1\\)" in md
    assert table and table[0].count(" | ") == 4  # the name's bar does not add a column
    assert "<img" not in _render.render_html(d)


def test_the_engine_part_leaves_out_what_never_moves_a_verdict():
    """A change in the reports (similarity, the diff's Markdown) or a command said "engine changed" for every row."""
    from autograder.core.paths import ROOT

    files = {p.relative_to(ROOT / "autograder").as_posix() for p in _verdict_fp.engine_files(ROOT / "autograder")}
    assert {"engine/run.py", "engine/exercise.py", "core/compare.py", "workers/intake.py"} <= files
    assert not {f for f in files if f.split("/")[0] in ("reports", "cli", "builders")}
    assert "engine/regrade.py" not in files and "core/verdict_fp.py" not in files


# ------------------------------------------------------------------ regrade grades as grade does (issue 65, 67 defect 3)
EX1 = EXS[0]
KEPT = {"score": 1.0, "max_score": 5.0}  # each student's earlier ex09 row: kept (its fingerprint is this install's)


def _earlier(tmp) -> tuple[str, list[str]]:
    """Two solved ex01 submissions and their earlier rows: ex01 without a fingerprint (graded again), ex09 with
    this install's (kept as it was, 1/5). No grading: the rows are written here."""
    subs = [str(make_submission(tmp / name, only=[EX1])) for name in ("ann", "ben")]
    rows = []
    for sub in subs:
        exs = {EX1: {"score": 0.0, "max_score": 10.0, "status": "graded", "message": "", "seconds": 0.0, "tests": []},
               EXS[1]: {**KEPT, "status": "graded", "message": "", "seconds": 0.0, "tests": [],
                        "fingerprint": _verdict_fp.make(EXS[1], CPU, SEED)}}
        rows.append({"submission": sub, "device": CPU, "seed": SEED, "total": 1.0, "max_total": 15.0,
                     "exercises": exs})
    old = tmp / "old.json"
    old.write_text(json.dumps(rows))
    return str(old), subs


def test_regrade_shows_grades_progress_and_the_rows_merged_by_the_assembly(tmp_path, capsys):
    """Issue 67 defect 3 (``regrade`` printed nothing while it graded): the first line at once, then a line per
    submission, as ``grade`` prints; each line shows the row merged with the earlier one (RowAssembly's
    ``resumed``), the kept ex09 included."""
    from autograder.core.text import terminal
    from autograder.reports import progress as _progress
    from autograder.reports.report import _fmt

    old, subs = _earlier(tmp_path)
    new = tmp_path / "new.json"
    assert cli.main(["regrade", old, "--json", str(new), "--device", "cpu", "--jobs", "2"]) == 0
    err = capsys.readouterr().err
    rows = json.loads(new.read_text())
    for r in rows:
        ex = r["exercises"][EX1]
        assert ex["status"] == "graded" and ex["score"] == ex["max_score"] > 0, ex
        assert {k: r["exercises"][EXS[1]][k] for k in KEPT} == KEPT
        assert r["total"] == ex["score"] + KEPT["score"] and r["max_total"] == ex["max_score"] + KEPT["max_score"]
    assert _progress.STARTING.format(n=2, k=1) in err
    assert "tapetrace: workers ready after" in err
    lines = [ln for ln in err.splitlines() if ln.startswith("graded ")]
    assert len(lines) == 2 and lines[0].startswith("graded 1/2: ") and lines[1].startswith("graded 2/2: "), err
    for r in rows:
        assert any(f"{terminal(r['submission'])} {_fmt(r['total'])}/{_fmt(r['max_total'])}" in ln for ln in lines)
    assert err.index(_progress.STARTING.format(n=2, k=1)) < err.index("graded 1/2") < err.index("; diff in ")


def test_ctrl_c_stops_a_regrade_cleanly_and_writes_nothing(tmp_path, monkeypatch, capsys):
    """Ctrl-C (or SIGTERM) while regrading: the run is cancelled and closed, exit 130, one line; NEW.json and its
    diff are not written (half a regrade would read as a whole one). Before: a traceback."""
    old, _subs = _earlier(tmp_path)
    closed: list[bool] = []
    real_close = GradingRun.close

    def close(self):
        closed.append(self.cancelled)
        real_close(self)

    def interrupted(self, *a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(GradingRun, "measure_isolation", lambda self: {"level": "full"})
    monkeypatch.setattr(GradingRun, "grade", interrupted)
    monkeypatch.setattr(GradingRun, "close", close)
    new = tmp_path / "new.json"
    assert cli.main(["regrade", old, "--json", str(new), "--device", "cpu"]) == 130
    err = capsys.readouterr().err
    assert closed == [True] and "interrupted" in err and "Traceback" not in err
    assert not new.exists() and not (tmp_path / "new.diff.json").exists()


def test_regrade_refuses_below_the_required_isolation_before_grading(tmp_path, monkeypatch, capsys):
    """The session's isolation check (``--require-isolation``, as ``grade``'s): below it nothing is graded, exit 2."""
    old, _subs = _earlier(tmp_path)
    monkeypatch.setattr(GradingRun, "measure_isolation", lambda self: {"level": "minimal"})
    monkeypatch.setattr(GradingRun, "grade", lambda *a, **k: pytest.fail("a refused regrade graded"))
    new = tmp_path / "new.json"
    try:
        code = cli.main(["regrade", old, "--json", str(new), "--device", "cpu", "--require-isolation", "container"])
    except SystemExit as err:  # (before: no such option)
        code = -1 if err.code == 2 else int(err.code or 0)
    assert code == 2
    err = capsys.readouterr().err
    assert "--require-isolation container" in err and not new.exists()
