"""Outputs of a batch: the report page and its plots, otter merging, feedback files, CSV, progress.

No grading here: results are synthetic (built like the engine's JSON), so these
tests are fast and cover any number of exercises.
"""

from __future__ import annotations

import csv
import html.parser
import io
import json
import re
import time
from pathlib import Path

import numpy as np
import pytest

from autograder.cli.report import main
from autograder.core.paths import EXERCISES
from autograder.reports import feedback as _feedback
from autograder.reports import progress as _progress
from autograder.reports import report as _report
from autograder.reports.summary import _exercise_of, from_otter, read_inputs

CHECKS = {
    "ex01_torch_mlp": [("parameter_shapes_in_order", 2, False), ("forward_matches_reference", 3, False),
                       ("output_is_logits", 1, True), ("empty_hidden_dims", 1, True),
                       ("works_on_any_device", 1, True), ("gradients_flow", 1.5, True),
                       ("hidden_dims_any_sequence", 0.5, True)],
    "ex04_jax_mlp": [("forward_public", 4, False), ("bce_stable", 3, True), ("init_keys", 3, True)],
    "ex07_flax_cnn": [("channels_last", 5, False), ("train_step", 5, True)],
}

# What `otter run` wrote for a notebook whose ex01 fails one check (the benchmarks' otter bridge:
# one otter test file per exercise, one case per check).
OTTER_RESULTS = {
    "tests": [
        {"name": "Public Tests", "visibility": "visible", "status": "passed",
         "output": "ex01_torch_mlp results: All test cases passed!"},
        {"name": "ex01_torch_mlp", "score": 9.0, "max_score": 10.0, "visibility": "hidden",
         "output": "ex01_torch_mlp results:\n    parameter_shapes_in_order result:\n        \u2705 Test case passed\n\n"
                   "    forward_matches_reference result:\n        \u2705 Test case passed\n\n"
                   "    output_is_logits result:\n        \u2705 Test case passed\n\n"
                   "    empty_hidden_dims result:\n        \u274c Test case failed\n"
                   "        Error at line 45 in test ex01_torch_mlp:\n              _check('empty_hidden_dims')\n"
                   "        AssertionError: `MLP(d, [], k).forward` raised IndexError: list index out of range\n\n"
                   "    works_on_any_device result:\n        \u2705 Test case passed\n\n"
                   "    gradients_flow result:\n        \u2705 Test case passed\n\n"
                   "    hidden_dims_any_sequence result:\n        \u2705 Test case passed"},
    ]
}


def fake_results(n: int, seed: int = 0, exercises: dict | None = None) -> list[dict]:
    """n result objects shaped like the engine's, with varied statuses and scores."""
    rng = np.random.default_rng(seed)
    exercises = exercises or CHECKS
    out = []
    for s in range(n):
        skill = rng.beta(3, 2)
        exs = {}
        for ex, checks in exercises.items():
            status = "graded"
            roll = rng.random()
            if roll < 0.05:
                status = "missing"
            elif roll < 0.08:
                status = str(rng.choice(["error", "timeout", "crashed"]))
            not_attempted = status == "graded" and rng.random() < 0.1
            tests = []
            for name, pts, hidden in checks:
                ok = status == "graded" and not not_attempted and rng.random() < skill
                code = "" if ok else ("NOT_ATTEMPTED" if not_attempted else "MISMATCH")
                tests.append({"name": name, "score": float(pts) if ok else 0.0, "max_score": float(pts),
                              "passed": ok, "hidden": hidden, "code": code,
                              "message": "" if ok else "`MLP.forward` differs from the reference: max abs err 0.3"})
            exs[ex] = {"score": sum(t["score"] for t in tests), "max_score": float(sum(p for _, p, _ in checks)),
                       "status": status, "message": "" if status == "graded" else f"could not load ({status})",
                       "tests": tests, "seconds": 1.0}
        out.append({"submission": f"subs/student{s:03d}", "device": {"torch": "cpu", "jax": "cpu"}, "seed": 7,
                    "total": sum(e["score"] for e in exs.values()),
                    "max_total": sum(e["max_score"] for e in exs.values()), "exercises": exs})
    return out


class _Imgs(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.imgs: list[str] = []
        self.links: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.imgs.append(a.get("src", ""))
        if tag == "a":
            self.links.append(a.get("href", ""))

    def handle_data(self, data):
        self.text.append(data)


def assert_nontrivial_png(path: Path) -> None:
    """A real plot: a PNG of some size, not one flat colour."""
    import matplotlib.image

    assert path.is_file(), path
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", path
    assert path.stat().st_size > 8_000, (path, path.stat().st_size)
    img = matplotlib.image.imread(str(path))
    assert img.shape[0] >= 200 and img.shape[1] >= 300, img.shape
    rgb = img[..., :3]
    assert float(rgb.std()) > 0.05, f"{path.name} looks blank (pixel std {rgb.std():.3f})"
    # more than a couple of colours: bars, text, a colour map
    assert len(np.unique((rgb.reshape(-1, 3) * 255).astype(np.uint8), axis=0)) > 20


def render(tmp_path: Path, results: list[dict], *extra: str) -> tuple[Path, _Imgs]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    src = tmp_path / "results.json"
    src.write_text(json.dumps(results))
    out = tmp_path / "report"
    assert main([str(src), "--out", str(out), *extra]) == 0
    page = out / "index.html"
    parser = _Imgs()
    parser.feed(page.read_text())
    return out, parser


def test_report_page_embeds_nontrivial_plots(tmp_path):
    out, page = render(tmp_path, fake_results(60))
    assert len(page.imgs) >= 4
    names = {Path(s).name for s in page.imgs}
    assert {"score_histogram.png", "exercise_means.png", "pass_rate_heatmap.png"} <= names
    for src in page.imgs:
        assert not src.startswith(("/", "http")), src  # relative: the folder can be moved or zipped
        assert_nontrivial_png(out / src)
    text = " ".join(page.text)
    assert "60" in text and "ex01_torch_mlp" in text and "empty_hidden_dims" in text
    rows = list(csv.DictReader((out / "summary.csv").open()))
    assert {r["test"] for r in rows} >= {"gradients_flow", "bce_stable", "train_step"}
    assert all(0.0 <= float(r["pass_rate"]) <= 1.0 for r in rows)


def test_heatmap_rates_match_the_data(tmp_path):
    from autograder.reports.plots import check_stats

    results = fake_results(40, seed=3)
    stats = {(s["exercise"], s["check"]): s for s in check_stats(results)}
    for ex, checks in CHECKS.items():
        for name, _pts, _hid in checks:
            n = sum(1 for r in results for t in r["exercises"][ex]["tests"] if t["name"] == name)
            k = sum(1 for r in results for t in r["exercises"][ex]["tests"] if t["name"] == name and t["passed"])
            assert stats[(ex, name)]["n"] == n == 40
            assert stats[(ex, name)]["passed"] == k


@pytest.mark.parametrize("n", [1, 2])
def test_report_survives_tiny_batches(tmp_path, n):
    out, page = render(tmp_path, fake_results(n, seed=5))
    for src in page.imgs:
        assert (out / src).stat().st_size > 2_000


def test_report_of_one_exercise_and_all_ten(tmp_path):
    one = fake_results(10, exercises={"ex01_torch_mlp": CHECKS["ex01_torch_mlp"]})
    out, page = render(tmp_path / "one", one)
    assert all((out / s).exists() for s in page.imgs)
    ten = {ex: [(f"check_{k}", 2, k > 0) for k in range(5)] for ex in EXERCISES}
    out, page = render(tmp_path / "ten", fake_results(25, exercises=ten))
    for src in page.imgs:
        assert_nontrivial_png(out / src)


def test_report_escapes_submission_text(tmp_path):
    results = fake_results(3)
    results[0]["submission"] = "subs/<script>alert(1)</script>.ipynb"
    results[1]["exercises"]["ex01_torch_mlp"]["tests"][0].update(
        passed=False, score=0.0, code="CALL_EXCEPTION", message="raised <img src=x onerror=alert(1)>")
    out, _page = render(tmp_path, results, "--feedback", str(tmp_path / "report" / "fb"), "--feedback-format", "both")
    page = (out / "index.html").read_text()
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    for f in (out / "fb").iterdir():
        text = f.read_text()
        assert "<script>" not in text and "<img src=x" not in text, f.name


def test_markdown_feedback_quotes_a_students_code_line_as_text():
    """The line of the student's code a message quotes is a code span (backticks, issue 67: never a ``<code>`` tag,
    whose text Markdown still parses): a ``[click](https://...)`` there is no link, ``*b*`` no emphasis, ``|`` no
    cell break; a bare URL beside it is no link."""
    markdown_it = pytest.importorskip("markdown_it")
    res = fake_results(1, seed=3)[0]
    test = res["exercises"]["ex01_torch_mlp"]["tests"][0]
    code = 'raise X("[click](https://evil.example) *b* | c")'
    test.update(passed=False, score=0.0, code="CALL_EXCEPTION",
                message=f"`MLP.forward` raised RuntimeError: see https://evil.example/x at line 3 of your code: `{code}`")
    md = _feedback.feedback_markdown(res)
    line = next(ln for ln in md.splitlines() if ln.startswith("|") and "raised RuntimeError" in ln)
    assert "https\\://evil.example/x" in line and "<code>" not in line, line
    assert f"`{code.replace('|', chr(92) + '|')}`" in line, line
    page = markdown_it.MarkdownIt("commonmark").enable("table").render(md)
    cell = next(c for c in re.findall(r"<td>(.*?)</td>", page) if "raised RuntimeError" in c)
    assert "<a " not in cell and "<em>" not in cell and "<img" not in cell, cell
    assert html.unescape(re.findall(r"<code>(.*?)</code>", cell)[-1]) == code, cell


def test_markdown_feedback_is_readable_as_text():
    """Issue 56: the raw .md escaped every bracket, dot, colon and dash ("shape \\(4, 10\\)"); only what would
    be markup is escaped now."""
    res = fake_results(1, seed=3)[0]
    test = res["exercises"]["ex01_torch_mlp"]["tests"][0]
    plain = "MLP.forward returned shape (4, 3); expected (4, 10) - see my_hidden_size: 1.5e-3 < tol"
    test.update(passed=False, score=0.0, code="SHAPE", message=plain)
    md = _feedback.feedback_markdown(res)
    assert plain in md


_MD_NASTY = ["[click](https://evil.example)", "![i](x.png)", "<img src=x onerror=alert(1)>", "<https://evil.example>",
             "*em* _em_ __init__ **b**", "a | b", "~~del~~ ~x~", "&amp; &#60;", "# h", "> q", "- l",
             "+ l", "1. l", "2) l", "[x]: https://evil.example", "\\*not\\*", "C:\\dir\\", "$x$", "<!-- c -->",
             "snake_case a*b*c 2 * 3", "x ]( y", "[a][b]", "===", "---", "trailing \\"]


@pytest.mark.parametrize("text", _MD_NASTY)
def test_markdown_feedback_shows_student_text_as_written_and_never_as_markup(text):
    """Rendered by a CommonMark parser with tables and strikethrough, a message in a table cell and in the
    quote line is exactly its text: no link, image, emphasis, code, tag, entity or block (a message's `code`
    spans are the catalogue's own and stay code: tested above)."""
    markdown_it = pytest.importorskip("markdown_it")
    import html as _html

    res = fake_results(1, seed=3)[0]
    e = res["exercises"]["ex01_torch_mlp"]
    e["message"] = text
    e["tests"][0].update(passed=False, score=0.0, code="X", message=text)
    md = _feedback.feedback_markdown(res)
    page = markdown_it.MarkdownIt("commonmark").enable("table").enable("strikethrough").render(md)
    quote = re.search(r"<blockquote>\s*<p>(.*?)</p>\s*</blockquote>", page, re.S)
    cell = re.findall(r"<td>(.*?)</td>", page)[3]
    assert quote, page
    for shown in (quote.group(1), cell):
        assert "<" not in shown, (shown, md)  # no element at all: only text (and its entities)
        assert _html.unescape(shown) == text, (shown, md)


def test_feedback_lists_every_test_with_points(tmp_path):
    res = fake_results(1, seed=11)[0]
    paths = _feedback.write_feedback([res], str(tmp_path), fmt="both")
    assert sorted(p.suffix for p in paths) == [".html", ".md"]
    md = (tmp_path / "student000.md").read_text()
    page = (tmp_path / "student000.html").read_text()
    for ex, e in res["exercises"].items():
        assert ex in md and ex in page
        for t in e["tests"]:
            assert f"`{t['name']}`" in md
            assert f"{t['score']:g} / {t['max_score']:g}" in md
    parser = _Imgs()
    parser.feed(page)
    assert "Feedback" in " ".join(parser.text)
    es = _feedback.feedback_markdown(res, lang="es")
    assert es.startswith("# Retroalimentación")


def test_feedback_names_are_unique_and_safe(tmp_path):
    results = fake_results(3)
    results[0]["submission"] = "a/alice.ipynb"
    results[1]["submission"] = "b/alice.ipynb"
    results[2]["submission"] = "../../etc/pass wd.zip"
    paths = _feedback.write_feedback(results, str(tmp_path / "fb"))
    assert [p.name for p in paths[:2]] == ["a-alice.md", "b-alice.md"]
    assert re.fullmatch(r"pass_wd-[0-9a-f]{8}\.md", paths[2].name), paths[2].name
    assert all(p.parent == tmp_path / "fb" for p in paths)


@pytest.mark.parametrize("names", [["alice.ipynb", " alice.ipynb"], [" alice.ipynb", "alice.ipynb"],
                                   ["-alice.ipynb", "alice.ipynb"], ["al\udcffice.ipynb", "al_ice.ipynb"]])
def test_names_that_differ_never_share_a_feedback_file(tmp_path, names):
    """Whatever the order (a later run, --resume), each name gets its own file, always the same one."""
    results = fake_results(2)
    for r, name in zip(results, names, strict=True):
        r["submission"] = name
    paths = _feedback.write_feedback(results, str(tmp_path / "fb"))
    assert len({p.name for p in paths}) == 2
    stems = {name: _feedback.safe_stem(name) for name in names}
    assert len(set(stems.values())) == 2 and stems.get("alice.ipynb", "alice") == "alice"
    for r, p in zip(results, paths, strict=True):
        assert p.name == f"{stems[r['submission']]}.md"


def test_csv_rows_and_formula_cells(tmp_path):
    results = fake_results(4)
    results[0]["submission"] = "=HYPERLINK(\"http://x\")"
    path = tmp_path / "out.csv"
    _report.write_csv(results, str(path))
    rows = list(csv.reader(path.open()))
    assert rows[0] == ["submission", *EXERCISES, "total", "max_total"]
    assert len(rows) == 5
    assert rows[1][0].startswith("'=")
    assert float(rows[2][-2]) == results[1]["total"]


def test_json_one_object_or_a_list(tmp_path):
    res = fake_results(2)
    p = tmp_path / "r.json"
    _report.write_json(res[:1], str(p))
    assert isinstance(json.loads(p.read_text()), dict)
    _report.write_json(res, str(p))
    assert isinstance(json.loads(p.read_text()), list)
    assert _report.read_json(str(p)) == res


# ------------------------------------------------------------------ otter
def test_otter_results_map_to_exercise_and_checks():
    r = from_otter(OTTER_RESULTS, "alice")
    assert r["source"] == "otter" and r["total"] == 9.0 and r["max_total"] == 10.0
    ex = r["exercises"]["ex01_torch_mlp"]
    names = [t["name"] for t in ex["tests"]]
    assert names == [c for c, _p, _h in CHECKS["ex01_torch_mlp"]]
    failed = [t for t in ex["tests"] if not t["passed"]]
    assert [t["name"] for t in failed] == ["empty_hidden_dims"]
    assert "IndexError" in failed[0]["message"] and not failed[0]["message"].startswith("AssertionError")
    assert sum(t["max_score"] for t in ex["tests"]) == 10.0


def test_otter_variants():
    all_passed = {"tests": [{"name": "ex01_torch_mlp", "score": 10, "max_score": 10, "visibility": "hidden",
                             "output": "ex01_torch_mlp results: All test cases passed!"}]}
    r = from_otter(all_passed, "bob")
    assert all(t["passed"] for t in r["exercises"]["ex01_torch_mlp"]["tests"])
    assert len(r["exercises"]["ex01_torch_mlp"]["tests"]) == len(CHECKS["ex01_torch_mlp"])
    # one otter test per check, named after the exercise and the check
    per_check = {"tests": [{"name": "ex01_torch_mlp: gradients_flow", "score": 0, "max_score": 2,
                            "output": "AssertionError: gradients differ"},
                           {"name": "ex01 - forward_matches_reference", "score": 3, "max_score": 3, "output": ""}]}
    r = from_otter(per_check, "carol")
    tests = {t["name"]: t for t in r["exercises"]["ex01_torch_mlp"]["tests"]}
    assert set(tests) == {"gradients_flow", "forward_matches_reference"}
    assert not tests["gradients_flow"]["passed"] and tests["forward_matches_reference"]["passed"]
    # an otter assignment that is not tapetrace's: questions become the exercises
    foreign = {"tests": [{"name": "q1", "score": 1, "max_score": 2, "output": "q1 results:\n    q1 - 1 result:\n"
                          "        \u2705 Test case passed\n\n    q1 - 2 result:\n        \u274c Test case failed\n"
                          "        AssertionError: wrong"}], "score": 1}
    r = from_otter(foreign, "dave")
    assert [t["passed"] for t in r["exercises"]["q1"]["tests"]] == [True, False]
    failed = {"tests": [{"name": "Autograder Failed", "visibility": "visible", "output": "kernel died",
                         "status": "failed"}], "score": 0}
    assert from_otter(failed, "erin")["error"]
    assert _exercise_of("EX04 jax mlp") == "ex04_jax_mlp" and _exercise_of("q3") is None


def test_report_merges_otter_and_tapetrace(tmp_path):
    tt = fake_results(5, exercises={"ex01_torch_mlp": CHECKS["ex01_torch_mlp"]})
    tt[0]["submission"] = "subs/alice.ipynb"
    (tmp_path / "tt.json").write_text(json.dumps(tt))
    for name in ("alice", "zed"):
        d = tmp_path / "otter" / name
        d.mkdir(parents=True)
        (d / "results.json").write_text(json.dumps(OTTER_RESULTS))
    results, _notes = read_inputs([str(tmp_path / "tt.json"), str(tmp_path / "otter")])
    assert sorted(r.get("source") for r in results) == ["otter"] * 2 + ["tapetrace"] * 5
    out = tmp_path / "rep"
    assert main([str(tmp_path / "tt.json"), str(tmp_path / "otter"), "--out", str(out)]) == 0
    page = (out / "index.html").read_text()
    assert "tapetrace vs otter" in page and "alice" in page
    parser = _Imgs()
    parser.feed(page)
    for src in parser.imgs:
        assert_nontrivial_png(out / src)


def test_report_cli_errors(tmp_path, capsys):
    assert main([str(tmp_path / "nope.json"), "--out", str(tmp_path / "r")]) == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main([str(bad)]) == 2
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hello": 1}))
    assert main([str(other), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("tapetrace report: ") for line in err)


def test_a_damaged_row_is_left_out_and_the_report_finishes(tmp_path):
    """One row that is not the row schema's shape (docs/grading-contract.md) (an exercise that is a string, a score that is text, a test that
    is null) once stopped ``tapetrace report`` with a traceback; now it is left out and the page says why."""
    rows = fake_results(4)
    rows[1]["exercises"][next(iter(rows[1]["exercises"]))] = "oops"
    rows[2]["total"] = "ten"
    rows[3]["exercises"][next(iter(rows[3]["exercises"]))]["tests"] = [None]
    out, _imgs = render(tmp_path, rows)
    page = (out / "index.html").read_text()
    assert all(f"result {k} (subs/student00{k - 1}) left out" in page for k in (2, 3, 4)), page[-2000:]
    assert "All 1 submissions" in page


def test_tapetrace_report_dispatch(tmp_path):
    from autograder.cli import main as cli_main

    (tmp_path / "r.json").write_text(json.dumps(fake_results(3)))
    assert cli_main(["report", str(tmp_path / "r.json"), "--out", str(tmp_path / "rep")]) == 0
    assert (tmp_path / "rep" / "index.html").exists()


# ---------------------------------------------------------------- progress
class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_plain_lines_with_eta():
    buf = io.StringIO()
    p = _progress.Progress(3, stream=buf, tasks_per_item=2)
    for r in fake_results(3):
        p.task_done()
        p.task_done()
        p.update(r)
    p.close()
    lines = buf.getvalue().splitlines()[1:]  # after the line said at once (test_progress_says_at_once_...)
    assert len(lines) == 3 and lines[0].startswith("graded 1/3: subs/student000")
    assert "ETA" in lines[0] and "\r" not in buf.getvalue()
    assert len(p.finished) == 3


def test_progress_bar_on_a_terminal():
    buf = _Tty()
    p = _progress.Progress(4, stream=buf, tasks_per_item=1)
    p.task_done()
    p.update(fake_results(1)[0])
    p.close()
    out = buf.getvalue()
    assert "\r[" in out and "1/4" in out and "ETA" in out and out.endswith("\n")


@pytest.mark.parametrize("stream", [io.StringIO, _Tty])
def test_progress_says_at_once_what_it_does_before_the_first_result(stream):
    """Issue 56: `tapetrace grade` was silent ~100 s (workers' start-up, the reference) before its first line."""
    buf = stream()
    p = _progress.Progress(3, stream=buf, tasks_per_item=2)
    first = buf.getvalue()  # before any worker started or any result came
    p.begin()
    p.close()
    assert first.startswith("tapetrace: grading 3 submission(s), 2 exercise(s) each:"), first
    assert "starting the workers" in first and "reference" in first
    if isinstance(buf, _Tty):
        assert "(starting workers)" in first  # the bar is drawn at once, not after the ticker's first second
    else:
        assert "workers ready after" in buf.getvalue().splitlines()[1]
    quiet = stream()
    _progress.Progress(3, stream=quiet, enabled=False).close()
    assert quiet.getvalue() == ""


def test_checkpoint_keeps_order_and_earlier_results(tmp_path):
    res = fake_results(4)
    path = tmp_path / "out.json"
    cp = _report.Checkpoint(str(path), before=res[:1], order=[r["submission"] for r in res[1:]], every=0.0)
    cp.add(res[3])
    assert [r["submission"] for r in json.loads(path.read_text())] == [res[0]["submission"], res[3]["submission"]]
    cp.add(res[1])
    cp.add(res[2])
    assert [r["submission"] for r in cp.results()] == [r["submission"] for r in res]


def _rows_on_disk(path) -> int:
    data = json.loads(path.read_text())
    return len(data) if isinstance(data, list) else 1


def test_a_checkpoint_row_held_back_by_the_interval_is_written_when_it_ends(tmp_path):
    """A row that arrives within ``every`` of the last write reaches the file once the interval is over, without
    waiting for another row (a batch of slow submissions can hold that back for minutes); after ``close`` (the
    final outputs come next) nothing more is written."""
    res = fake_results(3)
    path = tmp_path / "out.json"
    cp = _report.Checkpoint(str(path), before=[], order=[r["submission"] for r in res], every=0.3)
    cp.add(res[0])
    assert _rows_on_disk(path) == 1
    cp.add(res[1])  # within the interval: held back, then written by the timer, with no further row
    deadline = time.monotonic() + 60
    while _rows_on_disk(path) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _rows_on_disk(path) == 2
    cp.add(res[2])
    cp.close()
    held = _rows_on_disk(path)  # 2 unless this machine took longer than the interval between the two writes
    time.sleep(0.7)  # over twice the interval: a deferred write would have happened
    assert _rows_on_disk(path) == held
    assert [r["submission"] for r in cp.results()] == [r["submission"] for r in res]


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_same_file_names_in_a_folder_per_student_export_are_named_by_their_folder(tmp_path, fmt):
    """alice/work.ipynb and bob/work.ipynb: alice-work / bob-work, each titled with its own path (issue 37)."""
    results = fake_results(3)
    for r, name in zip(results, ["export/bob/work.ipynb", "export/alice/work.ipynb", "export/carol/other.ipynb"],
                       strict=True):
        r["submission"] = name
    paths = _feedback.write_feedback(results, str(tmp_path / "fb"), fmt=fmt)
    assert [p.name for p in paths] == [f"bob-work.{fmt}", f"alice-work.{fmt}", f"other.{fmt}"]
    texts = [p.read_text(encoding="utf-8") for p in paths]
    assert "bob/work.ipynb" in texts[0] and "alice/work.ipynb" in texts[1] and "alice" not in texts[0]
    assert "other.ipynb" in texts[2] and "carol" not in texts[2]
    reordered = _feedback.feedback_names([r["submission"] for r in reversed(results)])
    assert reordered[::-1] == _feedback.feedback_names([r["submission"] for r in results])


def test_table_shortens_long_messages_at_a_word_and_says_where_the_whole_text_is():
    """The demo table cut messages mid-word at 110 characters and never said where the rest was (issue 37)."""
    results = fake_results(1)
    ex = next(iter(results[0]["exercises"]))
    words = " ".join(f"word{i:03d}" for i in range(40))  # 319 characters of 7-letter words
    results[0]["exercises"][ex]["message"] = words
    text = _report.table(results, full_text_in="grades.json")
    row = next(line for line in text.splitlines() if "word000" in line)
    shown = row[row.index("word000"):]
    assert shown.endswith(" …") and len(shown) <= _report.MESSAGE_WIDTH
    assert words.startswith(shown[:-2]) and words[len(shown) - 2] == " "  # whole words only
    assert text.splitlines()[-1] == "(messages ending in … are shortened: the whole text is in grades.json)"
    assert "--json FILE" in _report.table(results).splitlines()[-1]
    results[0]["exercises"][ex]["message"] = "short"
    assert "shortened" not in _report.table(results)
