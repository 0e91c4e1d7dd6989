"""The report read in a real headless browser (Debian's chromium): every visible text is at least 11 px,
in the page and inside the plots as the page shows them; images and links resolve; no message is cut
mid-word; "hardest first" ranks tests among the submissions that attempted them.

Skipped, saying why, where no chromium is installed (``apt-get install -y chromium``; or set
``TAPETRACE_CHROMIUM`` to a Chrome/Chromium binary).
"""

from __future__ import annotations

import csv
import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from test_report import fake_results

from autograder.reports import plots as _plots
from autograder.reports.summary import build_report

MIN_PX = 11.0
PROBE = """<script>
window.addEventListener('load', () => {
  const out = {texts: [], imgs: [], links: [], cells: []};
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode, el = node.parentElement;
    if (!node.textContent.trim() || el.closest('script')) continue;
    out.texts.push([el.tagName, parseFloat(getComputedStyle(el).fontSize), node.textContent.trim().slice(0, 40)]);
  }
  for (const img of document.images)
    out.imgs.push([img.getAttribute('src'), img.naturalWidth, img.getBoundingClientRect().width, img.complete]);
  for (const a of document.querySelectorAll('a[href]')) out.links.push(a.getAttribute('href'));
  for (const td of document.querySelectorAll('td.msg')) out.cells.push(td.textContent);
  const content = document.body.getBoundingClientRect().right;  // the page's column, inside the 1280 px window
  out.viewport = [document.documentElement.clientWidth, document.documentElement.scrollWidth];
  out.tables = [...document.querySelectorAll('table')].map(t => [t.rows[0].textContent.slice(0, 30),
    Math.round(t.getBoundingClientRect().right - content), t.parentElement.scrollWidth - t.parentElement.clientWidth,
    [...t.querySelectorAll('td,th')].filter(c => c.getBoundingClientRect().right > out.viewport[0]).length]);
  const pre = document.createElement('pre');
  pre.id = 'tapetrace-probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def _chromium() -> str | None:
    for name in (os.environ.get("TAPETRACE_CHROMIUM", ""), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


CHROMIUM = _chromium()


def _browse(page: Path, tmp: Path) -> dict:
    """What chromium shows of ``page`` (a copy with PROBE appended): texts, images, links, message cells."""
    probe = page.with_name("probe.html")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    profile = tmp / "profile"
    profile.mkdir(exist_ok=True)
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={profile}", "--window-size=1280,1000", "--hide-scrollbars",
           "--virtual-time-budget=15000", "--allow-file-access-from-files", "--dump-dom", probe.as_uri()]
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=180).stdout
    m = re.search(r'<pre id="tapetrace-probe">(.*?)</pre>', dom, re.S)
    assert m, f"chromium printed no probe result: {dom[-500:]!r}"
    return json.loads(html.unescape(m.group(1)))


def _batch() -> list[dict]:
    """Thirteen-exercise-like results where most submissions did not attempt one exercise, with long
    messages: what made "hardest first" all NOT_ATTEMPTED rows and cut words."""
    checks = {f"ex{k:02d}_exercise_{k}": [(f"a_rather_long_check_name_number_{j}_of_{k}", 1, j > 1)
                                           for j in range(9 if k % 3 else 11)] for k in range(1, 14)}
    results = fake_results(40, seed=3, exercises=checks)
    long_msg = ("differences from the reference in `MLP.forward`: output: 41 of 80 values off (shape (16, 5), "
                "max abs error 2.31, max rel error 0.97, worst at index (3, 2); tolerance atol=1e-05, rtol=0.001) "
                "— a ReLU after the last layer clips the logits at zero: return raw logits from forward")
    for i, r in enumerate(results):
        ex = r["exercises"]["ex05_exercise_5"]
        for t in ex["tests"]:  # nearly nobody attempts ex05
            if i % 8:
                t.update(passed=False, score=0.0, code="NOT_ATTEMPTED", message="not attempted: still raises")
        for t in r["exercises"]["ex02_exercise_2"]["tests"]:
            if not t["passed"]:
                t["message"] = long_msg
        for t in r["exercises"]["ex03_exercise_3"]["tests"][:1]:  # a name with no break in it
            t["name"] = "dp_step_optimizers_needing_params_on_the_largest_mesh_here_with_every_optimizer"
    return results


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The report of the batch, and the smallest text (points) of each plot, read from the figures."""
    tmp = tmp_path_factory.mktemp("report")
    smallest: dict[str, float] = {}
    fits: list[bool] = []
    real_save = _plots._save

    def save(fig, path):
        if Path(path).name == "pass_rate_heatmap.png":
            fig.canvas.draw()
            fits.append(_plots._cells_fit(fig, fig.axes[0]))
        texts = [t for t in fig.findobj(_plots.matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]
        out = real_save(fig, path)
        smallest[Path(path).name] = min(t.get_fontsize() for t in texts)
        return out

    _plots._save = save
    try:
        results = _batch()
        page = build_report(results, tmp / "out", feedback=str(tmp / "out" / "feedback"), feedback_format="html")
    finally:
        _plots._save = real_save
    return {"page": page, "tmp": tmp, "smallest": smallest, "results": results, "heatmap_fits": fits == [True]}


def test_the_heatmap_labels_fit_their_cells(report):
    """The heatmap's check names (long, many per row) are wrapped to the cell as drawn: none is clipped."""
    assert report["heatmap_fits"]


def _graded(results: list[dict]) -> list[dict]:
    for r in results:
        for e in r["exercises"].values():
            e.update(status="graded", message="")
            for t in e["tests"]:
                t.update(passed=True, score=t["max_score"], code="", message="")
    return results


def test_a_check_every_attempt_passed_has_no_commonest_failure():
    """Attempts all passed, the rest did not attempt: the commonest failure is none, not NOT_ATTEMPTED."""
    results = _graded(fake_results(6, exercises={"ex01_a": [("easy", 1, True)]}))
    for r in results[:2]:
        r["exercises"]["ex01_a"]["tests"][0].update(passed=False, score=0.0, code="NOT_ATTEMPTED",
                                                     message="not attempted: still raises")
    (s,) = _plots.check_stats(results)
    assert (s["attempted"], s["passed"], s["common_failure"], s["example_message"]) == (4, 4, "", "")
    for r in results:
        r["exercises"]["ex01_a"]["tests"][0].update(passed=False, score=0.0, code="NOT_ATTEMPTED")
    (s,) = _plots.check_stats(results)
    assert s["attempted"] == 0 and s["common_failure"] == "NOT_ATTEMPTED"  # nobody tried: that is why


def test_an_import_timeout_is_no_attempt_of_the_exercises_checks():
    """One submission's ex05 timed out at import: its checks are not the hardest (they were never tried)."""
    checks = {"ex01_a": [(f"a{j}", 1, True) for j in range(3)], "ex05_b": [(f"b{j}", 1, True) for j in range(9)]}
    results = _graded(fake_results(5, exercises=checks))
    for t in results[0]["exercises"]["ex01_a"]["tests"][:2]:
        t.update(passed=False, score=0.0, code="MISMATCH", message="differs")
    for i, r in enumerate(results):
        e = r["exercises"]["ex05_b"]
        e.update(status="timeout" if i == 0 else "missing", message="importing your code did not finish")
        for t in e["tests"]:
            t.update(passed=False, score=0.0, code="LOAD_TIMEOUT" if i == 0 else "MISSING_FILE")
    head = _plots.hardest_first(_plots.check_stats(results))[:3]
    assert [s["check"] for s in head] == ["a0", "a1", "a2"], [(s["check"], s["attempted"]) for s in head]


def test_the_median_card_gives_the_maximum():
    from autograder.reports.summary import _stats_cards

    results = fake_results(5)
    cards = dict(_stats_cards(results))
    assert cards["median"].endswith(f" / {max(float(r['max_total']) for r in results):g}")


def test_hardest_is_ranked_among_attempts(report):
    stats = _plots.hardest_first(_plots.check_stats(report["results"]))
    head = stats[:10]
    assert all(s["attempted"] for s in head)
    assert not any(s["common_failure"] == "NOT_ATTEMPTED" for s in head), [s["common_failure"] for s in head]
    rates = [s["attempted_rate"] for s in stats if s["attempted"]]
    assert rates == sorted(rates)


def test_no_message_is_cut_mid_word(report):
    out = report["page"].parent
    with open(out / "summary.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    full = {" ".join(t["message"].split()) for r in report["results"] for e in r["exercises"].values()
            for t in e["tests"]}
    assert all(r["commonest_message"] in full | {""} for r in rows)  # whole, as graded
    assert all(r["pass_rate_attempted"] == "" or 0 <= float(r["pass_rate_attempted"]) <= 1 for r in rows)
    for cell in re.findall(r'<td class="msg">(.*?)</td>', report["page"].read_text(encoding="utf-8")):
        text = html.unescape(cell)
        if text.endswith(" …"):
            assert any(m.startswith(text[:-2]) and m[len(text) - 2] == " " for m in full), text
        else:
            assert text in full | {""}, text


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium: apt-get install -y chromium (or set TAPETRACE_CHROMIUM)")
def test_the_report_reads_at_a_glance_in_a_browser(report):
    seen = _browse(report["page"], report["tmp"])
    small = [t for t in seen["texts"] if t[1] < MIN_PX]
    assert not small, f"text under {MIN_PX} px: {small[:10]}"
    assert len(seen["imgs"]) == len(_plots.PLOTS)
    for src, natural, shown, complete in seen["imgs"]:
        assert complete and natural > 0, f"{src} did not load"
        px = report["smallest"][src] * _plots.DPI / 72 * shown / natural
        assert px >= MIN_PX, f"{src}: smallest text {px:.1f} px as shown ({shown:.0f} of {natural} px wide)"
    out = report["page"].parent
    assert seen["links"], "no feedback links"
    for href in seen["links"]:
        assert not re.match(r"[a-z]+:", href), href  # relative: the folder can be moved
        assert (out / html.unescape(href)).is_file(), f"broken link {href}"
    for cell in seen["cells"]:
        assert not re.search(r"\w…|…\w", cell), cell
    # at 1280 px every table fits the page: no column cut or scrolled off (the tests and submissions tables were)
    assert seen["viewport"][1] <= seen["viewport"][0], seen["viewport"]
    assert seen["tables"] and all(over <= 1 and scroll <= 0 and cut == 0 for _h, over, scroll, cut in seen["tables"]), \
        seen["tables"]
