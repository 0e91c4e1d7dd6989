"""The report for the instructor first (issue 56): the class summary and score distribution, every submission,
the tests by how many failed (those every attempt passed folded away and counted), and the receipt with the
suites' fingerprints last; every HTML page (report, feedback, similarity) has a viewport. Read from the HTML,
without a browser (tests/test_pages_browser.py reads the same pages in one, at 1280 and 390 px).

The builders here (:func:`class_results`, :func:`report_pages`, :func:`similarity_pages`) are the pages both
modules read: a class with long names, a hostile feedback message and a regrade.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from test_report import fake_results

from autograder.core.paths import SOLUTIONS
from autograder.reports import plots as _plots
from autograder.reports import summary as _summary
from autograder.reports.summary import build_report

VIEWPORT = re.compile(r'<meta name="viewport" content="width=device-width, initial-scale=1">')
LONG_CHECK = "dp_step_optimizers_needing_params_on_the_largest_mesh_here_with_every_optimizer"
LONG_NAME = "subs/a_student_whose_folder_name_is_very_long_indeed_and_has_no_spaces_at_all_2026"
# a message a phone cut off: long words, code, a percentage, and a token longer than any screen is wide
HOSTILE = ("`MLP.forward` returned values 100% off the reference: a_rather_long_identifier_inside_the_message "
           "differs by 1.5e-3 (tolerance atol=1e-05, rtol=0.001) at " + "x" * 300 + " — return raw logits")
DIFF = {"tapetrace_regrade": 1, "seed": 1, "regraded": 3, "unchanged": 2, "moved": [
    {"submission": LONG_NAME, "exercise": "ex01_exercise_1", "old_score": 2.0, "new_score": 3.0, "max_score": 6.0,
     "old_status": "graded", "new_status": "graded", "reasons": ["suite changed"],
     "checks": [{"name": "check_1_of_1", "old": "failed", "new": "passed", "old_code": "EX01_LOGITS",
                 "new_code": "", "message": ""}]}]}


def _resum(results: list[dict]) -> list[dict]:
    for r in results:
        for e in r["exercises"].values():
            e["score"] = sum(t["score"] for t in e["tests"])
        r["total"] = sum(e["score"] for e in r["exercises"].values())
    return results


def class_results() -> list[dict]:
    """Thirteen exercises of six checks for 30 submissions: the first check of each exercise passed by every
    attempt (it folds), a check with a long name, a submission with a long name and a hostile message."""
    checks = {f"ex{k:02d}_exercise_{k}": [(f"check_{j}_of_{k}", 1, j % 2 == 0) for j in range(6)] for k in range(1, 14)}
    results = fake_results(30, seed=5, exercises=checks)
    for r in results:
        for e in r["exercises"].values():
            first = e["tests"][0]
            if e["status"] == "graded" and any(t["code"] != "NOT_ATTEMPTED" for t in e["tests"]):
                first.update(passed=True, score=first["max_score"], code="", message="")
        r["exercises"]["ex03_exercise_3"]["tests"][1]["name"] = LONG_CHECK
    results[0]["submission"] = LONG_NAME
    first, *rest = results[0]["exercises"]["ex02_exercise_2"]["tests"]
    first.update(passed=True, score=first["max_score"], code="", message="")
    for t in rest:
        t.update(passed=False, score=0.0, code="EX02_LOGITS", message=HOSTILE)
    results[0]["exercises"]["ex02_exercise_2"].update(status="graded", message=HOSTILE)
    results[-1]["source"] = "otter"  # a second source: the submissions table gets its column
    return _resum(results)


def report_pages(tmp: Path) -> dict[str, Path]:
    """The report's index (with a regrade) and the hostile submission's feedback page."""
    out = tmp / "report"
    page = build_report(class_results(), out, feedback=str(out / "feedback"), feedback_format="html",
                        regrade=copy.deepcopy(DIFF))
    (feedback,) = [p for p in (out / "feedback").glob("*.html") if "xxxxxxxx" in p.read_text(encoding="utf-8")]
    return {"report": page, "feedback": feedback}


def similarity_pages(tmp: Path) -> dict[str, Path]:
    """``tapetrace similarity``'s index and an exercise's page (three copies, one under a long folder name)."""
    from autograder.reports import similarity as _similarity

    code = (SOLUTIONS / "ex02_torch_training.py").read_text(encoding="utf-8")
    subs = []
    for name in ("a_student_whose_folder_name_is_very_long_indeed_and_has_no_spaces_at_all", "bob", "carol"):
        (tmp / "class" / name).mkdir(parents=True)
        (tmp / "class" / name / "ex02_torch_training.py").write_text(code, encoding="utf-8")
        subs.append(str(tmp / "class" / name))
    _similarity.run(subs, tmp / "similarity", jobs=1)
    return {"similarity": tmp / "similarity" / "index.html",
            "similarity_exercise": tmp / "similarity" / "ex02_torch_training.html"}


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    return report_pages(tmp_path_factory.mktemp("layout"))


def _ids(text: str) -> list[str]:
    return re.findall(r'<section id="([a-z]+)"', text)


def test_the_report_reads_class_first_and_receipt_last(pages):
    text = pages["report"].read_text(encoding="utf-8")
    ids = _ids(text)
    assert ids == ["summary", "students", "regrade", "tests", "mistakes", "plots", "receipt"], ids
    summary = text[text.index('id="summary"'):text.index('id="students"')]
    assert 'class="cards"' in summary and 'src="score_histogram.png"' in summary  # the score distribution
    assert text.count("<img") == len(_plots.PLOTS)  # the other plots: after the tests
    receipt = text[text.index('id="receipt"'):]
    assert "suite fingerprint" in receipt


def test_tests_are_ordered_by_failures_and_those_all_passed_are_folded_and_counted(pages):
    text = pages["report"].read_text(encoding="utf-8")
    tests = text[text.index('id="tests"'):text.index('id="mistakes"')]
    shown_part, folded_part = tests.split('<details id="passed">')
    stats = _plots.check_stats(class_results())
    all_passed = [s for s in stats if s["attempted"] and s["attempted"] == s["passed"]]
    assert len(all_passed) == 13  # each exercise's first check
    m = re.search(r"<summary>(\d+) test\(s\) every attempt passed</summary>", folded_part)
    assert m and int(m.group(1)) == len(all_passed)
    assert f"{len(all_passed)} test(s) every attempt passed are folded below" in shown_part
    for s in all_passed:
        code = f"<code>{s['check']}</code>"
        assert code in folded_part.replace("<wbr>", "") and code not in shown_part.replace("<wbr>", "")
    failed = [int(n) for n in re.findall(r"<td class=tag>(?:hidden|public)</td><td class=n>(\d+)</td>", shown_part)]
    assert failed and failed == sorted(failed, reverse=True), failed  # most failed first
    assert len(failed) == sum(s["attempted"] > s["passed"] for s in stats)


def test_a_class_where_every_attempt_passed_says_so():
    results = _resum(fake_results(3, exercises={"ex01_a": [("easy", 1, True)]}))
    for r in results:
        r["exercises"]["ex01_a"].update(status="graded")
        r["exercises"]["ex01_a"]["tests"][0].update(passed=True, score=1.0, code="", message="")
    text = _summary.render_html(_resum(results), [], "t", [])
    assert "No test failed an attempt." in text and "1 test(s) every attempt passed</summary>" in text


def test_a_section_another_module_adds_goes_where_its_key_says():
    """The order is data: an audit section lands after the submissions, an unknown one before the receipt."""
    results = fake_results(3)
    text = _summary.render_html(results, [], "t", [], sections={
        "receipt": '<section id="receipt"></section>', "audit": '<section id="audit"></section>',
        "later": '<section id="later"></section>', "css": ".x{}"})
    assert _ids(text) == ["summary", "students", "audit", "tests", "later", "receipt"]
    assert _summary.SECTION_ORDER[:2] == ("summary", "students") and _summary.SECTION_ORDER[-1] == "receipt"


def test_every_page_has_a_viewport(pages, tmp_path):
    found = {**pages, **{p.name: p for p in pages["report"].parent.joinpath("feedback").glob("*.html")}}
    pytest.importorskip("copydetect", reason="pip install 'tapetrace[similarity]' (the similarity pages)")
    found |= similarity_pages(tmp_path)
    assert len(found) > 4
    for name, page in found.items():
        assert len(VIEWPORT.findall(page.read_text(encoding="utf-8"))) == 1, name


def test_short_tokens_never_break_and_messages_never_clip_by_css():
    """The CSS that broke "100%" and "hidden" mid-word (``overflow-wrap:anywhere`` on every cell) and any rule
    that would cut a message (``overflow:hidden``, an ellipsis) is gone from every page's style."""
    from autograder.reports import feedback as _feedback
    from autograder.reports import similarity as _similarity

    for css in (_summary._CSS, _feedback._FEEDBACK_CSS, _similarity._CSS):
        flat = re.sub(r"\s+", "", css)
        cells = flat.replace("td.msg", "")  # a message's cell may break a token longer than a line: only it
        assert not re.search(r"(^|})[^{}]*\b(td|th)\b[^{}]*\{[^}]*overflow-wrap:anywhere", cells), css
        assert "text-overflow" not in flat and "overflow:hidden" not in flat
    assert re.search(r"td\.n,th\.n\{[^}]*white-space:nowrap", _summary._CSS)
