"""The class's common mistakes (autograder/reports/mistakes.py): failed checks grouped by catalogue key, and the
catalogued mutants whose headers match, with counts and one example each, in the report and as CSV.

Rows are synthetic but shaped as grading shapes them from the mutants: each student's failures are a
mutant's ``# FAILS:`` set with its ``# CODE`` keys (what tests/test_outcomes.py proves grading gives).
"""

from __future__ import annotations

import csv
import io
import re

from autograder.cli.report import build_report
from autograder.reports import mistakes as _mistakes
from autograder.reports import mutants as _mutants

EX = "ex01_torch_mlp"
CHECKS = ["parameter_shapes_in_order", "forward_matches_reference", "output_is_logits", "empty_hidden_dims",
          "works_on_any_device", "gradients_flow", "hidden_dims_any_sequence"]


def _row(name, mutant=None, not_attempted=False, status="graded"):
    meta = next(m for m in _mutants.catalogue()[EX] if m["name"] == mutant) if mutant else {"fails": [], "codes": {}}
    tests = []
    for c in CHECKS:
        ok = c not in meta["fails"] and not not_attempted
        code = "" if ok else ("NOT_ATTEMPTED" if not_attempted else meta["codes"].get(c, "MISMATCH"))
        tests.append({"name": c, "score": 1.0 if ok else 0.0, "max_score": 1.0, "passed": ok, "hidden": True,
                      "code": code, "message": "" if ok else f"{c} failed: {code}"})
    score = sum(t["score"] for t in tests)
    return {"submission": f"class/{name}", "total": score, "max_total": 7.0, "device": {"torch": "cpu", "jax": "cpu"},
            "seed": 1, "exercises": {EX: {"score": score, "max_score": 7.0, "status": status, "tests": tests,
                                          "message": ""}}}


def _class():
    rows = [_row(f"relu{k:02d}", "relu_after_last") for k in range(5)]
    rows += [_row(f"hid{k}", "no_hidden_relu") for k in range(2)]
    rows += [_row("ok"), _row("stub", not_attempted=True), _row("broken", "relu_after_last", status="error")]
    return rows


def test_grouped_by_key_and_matched_to_named_mistakes():
    m = _mistakes.common_mistakes(_class())[EX]
    mistakes = {i["mutant"]: i for i in m["by_mistake"]}
    # a ReLU and a sigmoid after the last layer fail alike: both are named, neither is guessed
    alike = "relu_after_last | sigmoid_output"
    assert mistakes[alike]["count"] == 5 and mistakes["no_hidden_relu"]["count"] == 2
    assert m["by_mistake"][0]["mutant"] == alike  # commonest first
    assert mistakes[alike]["why"].startswith("ReLU after every layer, the last one too — or — applies a sigmoid")
    assert mistakes[alike]["example"] == "class/relu00"  # one example student, stable
    by = {(i["check"], i["code"]): i for i in m["by_message"]}
    logits = by[("output_is_logits", "EX01_LOGITS")]
    assert logits["count"] == 5 and {"relu_after_last", "sigmoid_output"} <= set(logits["mutants"])
    hidden = by[("forward_matches_reference", "EX01_NO_HIDDEN_RELU")]
    assert hidden["count"] == 2 and hidden["mutants"] == ["no_hidden_relu"]  # the key tells them apart
    assert "NOT_ATTEMPTED" not in {i["code"] for i in m["by_message"]}  # the stub is not a mistake
    assert all(i["example"] != "class/broken" for i in m["by_message"])  # rows not graded left out


def test_a_failure_set_no_mutant_has_is_grouped_but_named_by_none():
    row = _row("odd")
    row["exercises"][EX]["tests"][0].update(passed=False, score=0.0, code="SHAPES")
    m = _mistakes.common_mistakes([row])[EX]
    assert m["by_mistake"] == [] and m["by_message"][0]["check"] == "parameter_shapes_in_order"


def test_csv_lists_both_kinds():
    text = _mistakes.to_csv(_mistakes.common_mistakes(_class()))
    rows = list(csv.DictReader(io.StringIO(text)))
    kinds = {(r["kind"], r["mutant"] if r["kind"] == "mistake" else r["check"]) for r in rows}
    assert ("mistake", "no_hidden_relu") in kinds and ("message", "output_is_logits") in kinds
    relu = next(r for r in rows if r["kind"] == "mistake" and r["mutant"] == "relu_after_last | sigmoid_output")
    assert relu["count"] == "5" and relu["example_submission"] == "class/relu00"


def test_report_has_the_section_and_the_csv(tmp_path):
    page = build_report(_class(), tmp_path / "rep")
    text = page.read_text(encoding="utf-8")
    assert "<h2>Common mistakes</h2>" in text
    section = text[text.index("id=\"mistakes\""):]
    assert re.search(r"ReLU after every layer, the last one too — or — .*? <code>relu_after_last \| sigmoid_output</code>"
                     r"</td><td class=n>5</td>", section)
    with open(tmp_path / "rep" / "mistakes.csv", newline="", encoding="utf-8") as fh:
        assert fh.read() == _mistakes.to_csv(_mistakes.common_mistakes(_class()))


def test_student_text_in_the_mistakes_is_inert_in_csv_and_html():
    rows = [_row("=1+cmd|' /C calc'!A0", "relu_after_last")]
    rows[0]["submission"] = "=1+cmd|' /C calc'!A0"
    rows[0]["exercises"][EX]["tests"][2]["message"] = "<script>alert(1)</script>\x1b[2J"
    m = _mistakes.common_mistakes(rows)
    got = list(csv.DictReader(io.StringIO(_mistakes.to_csv(m))))
    assert {r["example_submission"] for r in got} == {"'=1+cmd|' /C calc'!A0"}
    assert all(r["count"] == "1" for r in got)  # a count stays a number
    page = _mistakes.render_html(m)
    assert "<script>" not in page and "&lt;script&gt;" in page and "\x1b" not in page
