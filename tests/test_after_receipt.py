"""A run's receipt (autograder/reports/receipt.py) and the mutant kill rates shipped with the suite.

No grading here: rows are synthetic (the engine's shape). The receipt of a real run is checked in
tests/test_after_regrade.py (``tapetrace grade --json`` writes ``OUT.receipt.json``).
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys

from test_report import fake_results

from autograder.cli.report import build_report
from autograder.core.paths import ROOT
from autograder.core.status import STATUSES
from autograder.reports import mutants as _mutants
from autograder.reports import receipt as _receipt


def test_shipped_kill_rates_have_not_drifted_from_the_mutants():
    """The data file is what scripts/mutant_kill_rates.py writes from tests/mutants' headers today."""
    want = _mutants.dumps(_mutants.kill_rates(_mutants.catalogue()))
    assert _receipt.KILL_RATES.read_text(encoding="utf-8") == want, \
        "autograder/hidden/mutant_kill_rates.json is stale: run python scripts/mutant_kill_rates.py"


def test_kill_rates_cover_every_exercise_with_mutants_and_count_them():
    rates = _receipt.kill_rates()
    cat = _mutants.catalogue()
    assert set(rates) == set(cat) and len(rates) >= 10
    for ex, metas in cat.items():
        assert rates[ex]["mutants"] == len(metas)
        assert rates[ex]["killed"] == sum(bool(m["fails"]) for m in metas)
        assert 0 <= rates[ex]["rate"] <= 1
    relu = next(m for m in cat["ex01_torch_mlp"] if m["name"] == "relu_after_last")
    assert relu["codes"]["output_is_logits"] == "EX01_LOGITS" and "forward_matches_reference" in relu["fails"]


def test_a_mutant_that_loses_no_points_lowers_the_rate(tmp_path):
    for name, fails in (("a", "x, y"), ("b", ""), ("c", "z")):
        (tmp_path / "ex01_torch_mlp").mkdir(exist_ok=True)
        head = f"# MUTANT: mistake {name}\n" + (f"# FAILS: {fails}\n" if fails else "")
        (tmp_path / "ex01_torch_mlp" / f"{name}.py").write_text(head + "x = 1\n")
    (tmp_path / "ex01_torch_mlp" / "v.py").write_text("# VALID: fine\n")
    data = _mutants.kill_rates(_mutants.catalogue(tmp_path))["exercises"]["ex01_torch_mlp"]
    assert (data["mutants"], data["killed"], data["rate"], data["survivors"]) == (3, 2, 0.6667, ["b"])


def test_the_script_checks_for_drift(tmp_path):
    script = ROOT / "scripts" / "mutant_kill_rates.py"
    ok = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    stale = tmp_path / "rates.json"
    stale.write_text(_receipt.KILL_RATES.read_text().replace('"killed": 9', '"killed": 8'))
    bad = subprocess.run([sys.executable, str(script), "--check", "--out", str(stale)], capture_output=True, text=True)
    assert bad.returncode == 1 and "drifted" in bad.stderr


def _rows():
    rows = fake_results(12, seed=5)
    rows[0]["exercises"]["ex01_torch_mlp"].update(status="grader_error", score=0.0)
    for t in rows[0]["exercises"]["ex01_torch_mlp"]["tests"]:
        t.update(passed=False, score=0.0, code="GRADER_TROUBLE")
    rows[1]["exercises"]["ex04_jax_mlp"].update(status="unreadable", score=0.0)
    for t in rows[1]["exercises"]["ex04_jax_mlp"]["tests"]:
        t.update(passed=False, score=0.0, code="REFUSED_FILE")
    for k, r in enumerate(rows):
        r["isolation"] = {"level": "full" if k % 3 else "container"}
        r["launcher"] = "zygote"
        r["envelope"] = {"memory_bytes": 8 * 2**30, "cpu_quota": 2.0, "usable_memory": 8 * 2**30,
                         "usable_cpus": 2.0, "plan": {"jobs": 2}}
        for ex, e in r["exercises"].items():
            e["fingerprint"] = {"digest": "d", "parts": {"suite": f"suite-{ex[:4]}"}}
    return rows


def test_receipt_counts_statuses_isolation_devices_seeds_and_suites():
    rows = _rows()
    rec = _receipt.receipt(rows, rates={"ex01_torch_mlp": {"mutants": 9, "killed": 9, "rate": 1.0}})
    n = sum(len(r["exercises"]) for r in rows)
    assert rec["rows"] == n and sum(rec["statuses"].values()) == n
    assert set(rec["statuses"]) == set(STATUSES)
    want = {s: sum(e["status"] == s for r in rows for e in r["exercises"].values()) for s in STATUSES}
    assert rec["statuses"] == want and rec["statuses"]["grader_error"] >= 1
    assert rec["refused"] == 1
    assert rec["isolation"] == {"container": 4, "full": 8}
    assert rec["devices"] == {"torch cpu, jax cpu": 12} and rec["seeds"] == [7]
    assert list(rec["envelopes"].values()) == [12] and "2.0 CPU(s)" in next(iter(rec["envelopes"]))
    assert rec["suites"]["ex01_torch_mlp"] == {"suite-ex01": 12}
    assert rec["mutant_kill_rates"] == {"ex01_torch_mlp": {"mutants": 9, "killed": 9, "rate": 1.0}}
    assert rec["anomalies"] == []


def test_receipt_flags_rows_scored_as_passes_that_are_not():
    rows = _rows()
    bad = rows[2]["exercises"]["ex07_flax_cnn"]
    bad.update(status="timeout", score=3.0)  # a timeout graded with points: the bug class to catch
    rows[3]["exercises"]["ex01_torch_mlp"]["score"] += 1.0  # score is not its tests' sum
    rec = _receipt.receipt(rows, rates={})
    text = " | ".join(rec["anomalies"])
    assert "status timeout but scores 3" in text and "is not its tests' sum" in text


def test_sidecar_name():
    assert _receipt.sidecar("out/results.json") == "out/results.receipt.json"
    assert _receipt.sidecar("out/results") == "out/results.receipt.json"


def test_report_ends_with_the_receipt_and_writes_it(tmp_path):
    """The receipt and the suites' fingerprints close the report: the instructor reads the class first (issue 56)."""
    rows = _rows()
    page = build_report(copy.deepcopy(rows), tmp_path / "rep")
    text = page.read_text(encoding="utf-8")
    heads = re.findall(r"<h2>(.*?)</h2>", text)
    assert heads[-1] == "Receipt", heads
    assert text.rindex("<img") < text.index("id=\"receipt\"")  # after the plots
    rec = json.loads((tmp_path / "rep" / "receipt.json").read_text())["receipt"]
    assert rec["statuses"]["grader_error"] == 1 and rec["refused"] == 1
    assert "grader_error" in text and "--resume" in text  # what to do about the grader's rows
    assert re.search(r"ex01_torch_mlp</td><td><code>suite-ex01 \(12\)</code></td><td class=n>9/9</td>", text)


def test_a_folder_with_results_and_their_receipt_reports(tmp_path):
    from autograder.cli.report import read_inputs
    from autograder.reports.report import write_json

    rows = _rows()
    write_json(rows, str(tmp_path / "results.json"))
    _receipt.write(_receipt.receipt(rows), _receipt.sidecar(str(tmp_path / "results.json")))
    got, _notes = read_inputs([str(tmp_path)])
    assert len(got) == len(rows)  # the receipt is skipped, not refused
    got, _notes = read_inputs([str(tmp_path / "results.json"), str(tmp_path / "results.receipt.json")])
    assert len(got) == len(rows)


def test_shard_parts_write_no_receipt_and_merge_writes_the_whole_ones(tmp_path):
    from conftest import make_submission

    sub = make_submission(tmp_path / "only", only=["ex09_autograd_tape"])
    part = tmp_path / "part-1.json"
    assert cli_main(["grade", str(sub), "--only", "ex09", "--device", "cpu", "--jobs", "1", "--quiet", "--json",
                     str(part), "--shard", "1/1"]) == 0
    assert not (tmp_path / "part-1.receipt.json").exists()  # `merge part-*.json` stays a list of parts
    assert cli_main(["merge", str(part), "--json", str(tmp_path / "out.json"), "--quiet"]) == 0
    rec = json.loads((tmp_path / "out.receipt.json").read_text())["receipt"]
    assert rec["submissions"] == 1 and rec["statuses"]["graded"] == 1


def cli_main(argv):
    from autograder import cli

    return cli.main(argv)


def test_the_receipts_html_escapes_what_a_student_controls():
    from autograder.core.text import html_text

    assert html_text('<img src=x onerror="alert(1)">') == "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"
    assert html_text("a\x1b[31mb\u202ec") == "a\\x1b[31mb\\u202ec"
    rows = _rows()
    rows[4]["submission"] = "subs/<script>alert(1)</script>\x1b[2J"
    rows[4]["exercises"]["ex01_torch_mlp"].update(status="timeout", score=1.0)  # an anomaly naming the submission
    page = _receipt.render_html(_receipt.receipt(rows, rates={}))
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;\\x1b[2J" in page


def test_the_receipt_carries_a_gradebooks_late_policy():
    late = {"policy": "deadline 2026-12-01T23:59:00+01:00; penalty 10% of the score per started day late",
            "times": "file modification times (--times-from-mtime: not a trustworthy submission time)",
            "trusted": False, "counts": {"on time": 3, "late": 1, "too late": 0, "time unknown": 1,
                                         "no submission": 2},
            "extensions": 1, "students": [{"student": "<i>bob</i>", "state": "late", "words": "late 2h 00m: -10%"}]}
    rec = _receipt.receipt(_rows(), rates={}, late=late)
    assert rec["late"] == late and "late" not in _receipt.receipt(_rows(), rates={})
    page = _receipt.render_html(rec)
    assert "<h3>Late policy</h3>" in page and "not a trustworthy submission time" in page
    assert "<th class=n>no submission</th>" in page and "<td class=n>2</td>" in page
    assert "&lt;i&gt;bob&lt;/i&gt;" in page and "Extensions applied: 1" in page
