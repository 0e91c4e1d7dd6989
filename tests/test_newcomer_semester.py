"""A newcomer's semester without a traceback (issue 67's defects): each defect a test that failed before.

1. After `make demo` (the base package, no development extras) `tapetrace build` crashed with
   ``ModuleNotFoundError: No module named 'otter'``; now it says in one line which libraries are missing and
   the command that installs them, before it writes anything. An optional library missing deeper in any
   command's path is the same one line (``cli.app``'s net), never a traceback.
2. ``tapetrace build`` ends saying what to hand out and what to keep private; its notebook check's kernel talks
   over IPC sockets, so no TCP warning lands in the middle of its output.
4. The report's grid marks an overridden cell. 6. ``check.py`` on a file that does not parse says INCORRECT and
   what to do. 7. A feedback page starts with what lost points. 8. The report links to feedback pages without an
   option. 9. Messages whole in the report, one form of code in Markdown feedback (the layout at 390 and 1280 px:
   tests/test_pages_browser.py).
"""

from __future__ import annotations

import copy
import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.cli import app
from autograder.core.paths import EXERCISES

ROOT = Path(__file__).resolve().parents[1]

# the CLI in a process where these modules are "not installed" (sys.modules[name] = None: import fails and
# importlib.util.find_spec says None, as for a library that is not there)
WITHOUT = "import sys\nfor m in {mods!r}: sys.modules[m] = None\nfrom autograder.cli import main\nsys.exit(main({argv!r}))\n"


def _cli_without(mods: list[str], argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", WITHOUT.format(mods=mods, argv=argv)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(("argv", "named"), [
    (["build", "--only", "otter", "--no-verify"], ["otter-grader"]),
    (["build", "--only", "otter"], ["otter-grader", "nbformat", "nbclient", "ipykernel"]),
])
def test_build_without_the_build_extras_says_what_is_missing_in_one_line(argv, named, tmp_path):
    proc = _cli_without(["otter", "nbformat", "nbclient", "ipykernel"], [*argv, "--out", str(tmp_path / "dist")],
                        tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr[-2000:]
    line = proc.stderr.strip()
    assert line.startswith("tapetrace build: ") and "make setup" in line and ".[build]" in line, line
    for name in named:
        assert name in line, (name, line)
    assert not (tmp_path / "dist").exists(), "nothing is written before the check"


def _stubs_raising(monkeypatch, err: ModuleNotFoundError) -> None:
    """`tapetrace stubs` whose body meets ``err`` (a subcommand's ``run`` is bound when the parser is built)."""
    from autograder.cli import stubs

    def run(_args):
        raise err

    monkeypatch.setattr(stubs, "run", run)


def test_a_missing_optional_library_deeper_in_a_command_is_one_line(monkeypatch, capsys):
    _stubs_raising(monkeypatch, ModuleNotFoundError("No module named 'otter.generate'", name="otter.generate"))
    monkeypatch.setitem(sys.modules, "otter", None)
    assert app.main(["stubs"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tapetrace: otter-grader is not installed (needed by `tapetrace stubs`)"), err
    assert "make setup" in err and len(err.splitlines()) == 1, err


def test_a_missing_module_that_is_not_an_optional_library_is_not_hidden(monkeypatch):
    _stubs_raising(monkeypatch, ModuleNotFoundError("No module named 'autograder.nowhere'", name="autograder.nowhere"))
    with pytest.raises(ModuleNotFoundError):
        app.main(["stubs"])  # the grader's own bug: its traceback, never a line blaming the installation


# ------------------------------------------------------------------------------------------------ defect 2
def _build_stubbed(monkeypatch, tmp_path: Path, argv: list[str]) -> None:
    """``tapetrace build ARGV`` with its slow parts stood in for (the zip, the solution notebook, the checks) and
    nothing recorded in the checkout; it succeeds."""
    from contextlib import nullcontext

    from autograder.builders import otter_zip as _otter_zip
    from autograder.builders import private as _private
    from autograder.builders import verify as _verify
    from autograder.cli import build as _build

    def build_zip(path, *_a, **_k):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"zip")
        return path

    def solution_notebook(_template, out, lang):
        path = out / "solutions" / "tapetrace.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
        return path, {}, {}

    monkeypatch.setattr(_otter_zip, "build_zip", build_zip)
    monkeypatch.setattr(_build, "write_solution_notebook", solution_notebook)
    monkeypatch.setattr(_verify, "verify", lambda *_a, **_k: [])
    monkeypatch.setattr(_private, "owner_only", lambda *_a, **_k: nullcontext())
    monkeypatch.setattr(_private, "check_places", lambda *_a, **_k: None)
    assert _build.main([*argv, "--out", str(tmp_path / "dist")]) == 0


@pytest.mark.parametrize("verify", [True, False])
def test_build_ends_saying_what_to_hand_out_and_that_the_zip_is_secret(monkeypatch, tmp_path, capsys, verify):
    """Issue 67, defect 2: the build wrote a dozen files and never said which one students get, nor that the
    autograder zip (hidden suites, reference solutions) is as secret as the solution notebook."""
    from autograder.builders.build import TEMPLATES

    _build_stubbed(monkeypatch, tmp_path, ["--only", "otter", *([] if verify else ["--no-verify"])])
    out = capsys.readouterr().out.strip().splitlines()
    hand, keep = out[-2], out[-1]
    notebook = (TEMPLATES["en"] / "tapetrace.ipynb").relative_to(ROOT)
    assert hand.startswith("hand out: ") and str(notebook) in hand, out[-4:]
    assert keep.startswith("keep private: "), out[-4:]
    assert str(tmp_path / "dist" / "tapetrace-autograder.zip") in keep and "solutions" in keep, keep
    assert "as secret as the solution notebook" in keep, keep


def test_the_builds_notebook_check_prints_no_kernel_warning_and_hides_no_error(tmp_path, capfd):
    """Issue 67, defect 2: ``[IPKernelApp] WARNING | Kernel is running over TCP without encryption`` appeared in the
    middle of the build's output (the verification's kernel, on TCP); on IPC sockets in a private folder it is not
    said, and what the kernel writes to its stderr still shows."""
    from autograder.builders import verify as _verify

    nb = {"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": None, "outputs": [],
                     "source": "import os\nos.write(2, b'a real kernel error\\n')"}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    run = _verify.notebook_self_check(nb, [], tmp_path)
    err = capfd.readouterr().err
    assert "a real kernel error" in err, err
    assert "without encryption" not in err and "IPKernelApp" not in err, err
    assert run.results == {}  # no exercise checked: the notebook has none


# ------------------------------------------------------------------------------------------------ defect 4
def _grid_rows(page: str) -> dict[str, list[str]]:
    """The report's submissions grid: each row's cells (their HTML) by the row's first cell's text."""
    grid = page[page.index('<section id="students">'):]
    grid = grid[:grid.index("</section>")]
    rows = {}
    for tr in re.findall(r"<tr>(.*?)</tr>", grid, re.S)[1:]:
        cells = re.findall(r"<td[^>]*>.*?</td>", tr, re.S)
        rows[re.sub(r"<[^>]+>", "", cells[0])] = cells
    return rows


def test_the_reports_grid_marks_an_overridden_cell(tmp_path):
    """Issue 67, defect 4: an overridden score looked like the autograder's in the grid (only the audit table at the
    bottom said otherwise); the cell is marked and says the autograder's score, the others are not."""
    from test_after_overrides import EX, HEADER, TEST, _results, _write

    rows = _results(tmp_path)
    auto = rows[0]["exercises"][EX]["score"]
    res, ov = _write(tmp_path, rows, HEADER + f"{rows[0]['submission']},{EX},,set,9,regrade request,ana,2026-12-03\n"
                     f"{rows[1]['submission']},{EX},{TEST},set,2,partial credit,ana,2026-12-03\n")
    out = tmp_path / "report"
    assert app.main(["report", res, "--out", str(out), "--overrides", ov]) == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    grid = _grid_rows(page)
    marked = {name: [c for c in cells if "ovr" in c] for name, cells in grid.items()}
    assert {name.rsplit("/", 1)[-1]: len(cells) for name, cells in marked.items()} == {"alice": 1, "bob": 1, "carol": 0}
    (alice,) = next(cells for name, cells in marked.items() if name.endswith("alice"))
    assert re.search(r">9\D", alice) and f"autograder {auto:g}/10" in html.unescape(alice), alice
    assert "overridden" in page[page.index('<section id="students">'):page.index('<section id="tests">')]  # a key


# ------------------------------------------------------------------------------------------------ defect 6
@pytest.mark.parametrize("lang", ["en", "es"])
def test_check_py_on_a_file_with_a_syntax_error_says_incorrect_and_what_to_do(tmp_path, monkeypatch, capsys, lang):
    """Issue 67, defect 6: ``python check.py ex01`` on a file that does not parse printed ``importing
    ex01_torch_mlp.py raised SyntaxError: ...`` and no outcome: no INCORRECT, no next step (docs/students.md
    describes three outcomes). check.py as the build writes it, on this checkout's runtime."""
    from autograder import builders
    from autograder.builders import public
    from autograder.core import i18n

    fake = {"seed": 1, "values": {}, "exercises": {ex: {"public_points": 5, "total_points": 10}
                                                   for ex in builders.present()}}
    monkeypatch.setattr(public, "snapshot", lambda: fake)
    monkeypatch.setitem(i18n._STATE, "lang", lang)  # as the notebook's set-up cell sets it
    (tmp_path / "ex01_torch_mlp.py").write_text("import torch\n\n\ndef broken(:\n    pass\n", encoding="utf-8")
    ns = {"__name__": "tapetrace_check_py", "__file__": str(tmp_path / "check.py")}
    exec(compile(builders.check_py(lang), str(tmp_path / "check.py"), "exec"), ns)  # noqa: S102 - the build's own
    ns["_set_up"] = lambda: None  # this checkout is the runtime (the set-up cell would put the notebook's zip first)
    try:
        assert ns["main"](["ex01"]) == 1
    finally:
        sys.modules.pop("ex01_torch_mlp", None)
    out = capsys.readouterr().out
    label, line = {"en": ("INCORRECT:", "line 4"), "es": ("INCORRECTO:", "línea 4")}[lang]
    assert label in out, out
    assert "ex01_torch_mlp.py" in out and "python check.py ex01" in out, out  # the next step, on the file
    assert "SyntaxError" in out and line in out, out  # what is wrong, and where


# ------------------------------------------------------------------------------------------------ defect 7
def _lost_in_ex05() -> dict:
    """One student of thirteen exercises who lost points in ex05 (4 of 10) and ex09 (1 of 10) only."""
    from test_report import fake_results

    checks = {ex: [(f"{ex[:4]}_check_{j}", 2, j % 2 == 0) for j in range(5)] for ex in EXERCISES}
    res = fake_results(1, seed=1, exercises=checks)[0]
    for e in res["exercises"].values():
        e.update(status="graded", message="")
        for t in e["tests"]:
            t.update(passed=True, score=t["max_score"], code="", message="")
    ex05, ex09 = EXERCISES[4], EXERCISES[8]
    for t in res["exercises"][ex05]["tests"][:2]:
        t.update(passed=False, score=0.0, code="EX05_OPT_STATE",
                 message="`train_step` returned the old `opt_state`: return the new opt_state that optimizer.update "
                         "gives back")
    res["exercises"][ex09]["tests"][0].update(passed=False, score=1.0, code="MISMATCH", message="off by one")
    for e in res["exercises"].values():
        e["score"] = sum(t["score"] for t in e["tests"])
    res["total"] = sum(e["score"] for e in res["exercises"].values())
    return res


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_feedback_page_starts_with_what_lost_points(lang):
    """Issue 67, defect 7: a student's page listed every exercise in order, so ex05's lost points were 3,000 px down
    on a phone; it starts with the exercises that lost points (most first), each linked to its section with the
    first reason, before any exercise's section."""
    from autograder.reports import feedback as _feedback

    res = _lost_in_ex05()
    ex05, ex09 = EXERCISES[4], EXERCISES[8]
    lab = _feedback.LABELS[lang]
    page = _feedback.feedback_html(res, lang)
    first_section = page.index(f'<h2 id="{EXERCISES[0]}"')
    top = page[:first_section]
    assert lab["lost"] in top and f'href="#{ex05}"' in top and f'href="#{ex09}"' in top, top[-1500:]
    assert top.index(f'href="#{ex05}"') < top.index(f'href="#{ex09}"')  # 4 points lost before 1
    assert "return the new opt_state" in top and "off by one" in top
    md = _feedback.feedback_markdown(res, lang)
    head = md[:md.index(f"## {EXERCISES[0]}")]
    assert lab["lost"] in head and head.index(ex05) < head.index(ex09) and "return the new opt_state" in head
    full = copy.deepcopy(res)
    for e in full["exercises"].values():
        for t in e["tests"]:
            t.update(passed=True, score=t["max_score"])
        e["score"] = e["max_score"]
    full["total"] = full["max_total"]
    assert lab["lost_none"] in _feedback.feedback_html(full, lang) and lab["lost_none"] in \
        _feedback.feedback_markdown(full, lang)


# ------------------------------------------------------------------------------------------------ defect 8
def test_the_report_links_each_submission_to_its_feedback_without_an_option(tmp_path):
    """Issue 67, defect 8: only ``--feedback DIR`` linked the grid to feedback pages, and the first example of
    docs/instructors/reports.md has no such option; the report writes them into its own folder by default."""
    from test_report import fake_results

    res = tmp_path / "results.json"
    res.write_text(json.dumps(fake_results(3)), encoding="utf-8")
    out = tmp_path / "report"
    assert app.main(["report", str(res), "--out", str(out)]) == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    links = re.findall(r'<a href="([^"]+)">', page[page.index('<section id="students">'):])
    assert len(links) == 3, links
    assert all(not re.match(r"[a-z]+:|/", h) and (out / html.unescape(h)).is_file() for h in links), links
    assert all((out / html.unescape(h)).parent == out / "feedback" for h in links)
    assert app.main(["report", str(res), "--out", str(tmp_path / "bare"), "--no-feedback"]) == 0
    assert "<a href" not in (tmp_path / "bare" / "index.html").read_text(encoding="utf-8")
    assert not (tmp_path / "bare" / "feedback").exists()


# ------------------------------------------------------------------------------------------------ defect 9
LONG_MESSAGE = ("differences from the reference in `MLP.forward`: output: 41 of 80 values off (shape (16, 5), max abs "
                "error 2.31, max rel error 0.97, worst at index (3, 2); tolerance atol=1e-05, rtol=0.001) — a ReLU "
                "after the last layer clips the logits at zero: return raw logits from forward, and apply the "
                "sigmoid only in the loss")


def test_the_reports_messages_are_whole(tmp_path):
    """Issue 67, defect 9: the tests table and the common mistakes cut a message at 240 characters with "…", though
    docs/instructors/reports.md says they wrap."""
    from test_report import fake_results

    from autograder.reports.summary import build_report

    results = fake_results(6, seed=4)
    for r in results:
        for e in r["exercises"].values():
            for t in e["tests"]:
                if not t["passed"]:
                    t["message"] = LONG_MESSAGE
    page = build_report(results, tmp_path / "report").read_text(encoding="utf-8")
    cells = [html.unescape(c) for c in re.findall(r'<td class="msg">(.*?)</td>', page, re.S)]
    assert cells and all(c in (LONG_MESSAGE, "") for c in cells), [c[-40:] for c in cells if c != LONG_MESSAGE]


def test_markdown_feedback_marks_code_one_way_never_with_html():
    """Issue 67, defect 9: Markdown feedback wrote a test's name in backticks and the code a message quotes in
    ``<code>`` tags: one form now, backticks, and no HTML tag at all (escaped where a tag would be)."""
    from test_report import fake_results

    from autograder.reports import feedback as _feedback

    res = fake_results(1, seed=3)[0]
    e = res["exercises"]["ex01_torch_mlp"]
    e["tests"][0].update(name="odd name|<b>", passed=False, score=0.0, code="X",
                         message="`MLP.forward` returned `x | <b>y</b>` for <i>z</i>")
    md = _feedback.feedback_markdown(res)
    assert "<code>" not in md and "</code>" not in md, md
    line = next(ln for ln in md.splitlines() if ln.startswith("|") and "MLP.forward" in ln and "<i>" not in ln)
    assert "`MLP.forward`" in line and "`x \\| <b>y</b>`" in line and "&lt;i>z&lt;/i>" in line, line
    assert "`odd name\\|<b>`" in line, line
    markdown_it = pytest.importorskip("markdown_it")
    shown = markdown_it.MarkdownIt("commonmark").enable("table").render(md)
    assert set(re.findall(r"<([a-z0-9]+)", shown)) <= {"h1", "h2", "p", "strong", "table", "thead", "tbody", "tr",
                                                       "th", "td", "code", "blockquote", "ul", "li"}, shown  # none of its own
    codes = {html.unescape(c) for c in re.findall(r"<code>(.*?)</code>", shown)}
    assert {"MLP.forward", "x | <b>y</b>", "odd name|<b>"} <= codes, codes
