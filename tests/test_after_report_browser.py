"""The report's after-grading sections read in a real headless browser: the class comes first (the cards and
the score distribution), then a regrade's moves and the common mistakes, and the receipt last (issue 56); no
text in them is under 11 px. Skipped, saying why, where no chromium is installed (see
tests/test_report_browser.py)."""

from __future__ import annotations

import html
import json
import re
import subprocess

import pytest
from test_after_mistakes import _class
from test_report_browser import CHROMIUM, MIN_PX

from autograder.cli.report import build_report

PROBE = """<script>
window.addEventListener('load', () => {
  const out = {sections: [], small: [], first: null};
  const top = el => el ? el.getBoundingClientRect().top + window.scrollY : null;
  for (const id of ['receipt', 'regrade', 'mistakes']) {
    const el = document.getElementById(id);
    out.sections.push([id, top(el), el ? el.innerText.length : 0]);
    if (!el) continue;
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const node = walker.currentNode, p = node.parentElement;
      const px = parseFloat(getComputedStyle(p).fontSize);
      if (node.textContent.trim() && px < %MIN%) out.small.push([p.tagName, px, node.textContent.trim().slice(0, 30)]);
    }
  }
  out.cards = top(document.querySelector('.cards'));
  out.img = top(document.querySelector('img'));
  out.first = document.querySelector('h2').textContent;
  const pre = document.createElement('pre');
  pre.id = 'tapetrace-probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>""".replace("%MIN%", str(MIN_PX))

DIFF = {"tapetrace_regrade": 1, "seed": 1, "regraded": 3, "unchanged": 2, "moved": [
    {"submission": "class/relu00", "exercise": "ex01_torch_mlp", "old_score": 2.0, "new_score": 3.0, "max_score": 7.0,
     "old_status": "graded", "new_status": "graded", "reasons": ["suite changed"],
     "checks": [{"name": "output_is_logits", "old": "failed", "new": "passed", "old_code": "EX01_LOGITS",
                 "new_code": "", "message": ""}]}]}


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium: apt-get install -y chromium (or set TAPETRACE_CHROMIUM)")
def test_class_first_receipt_last_and_sections_readable_in_a_browser(tmp_path):
    page = build_report(_class(), tmp_path / "rep", regrade=DIFF)
    probe = page.with_name("probe.html")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    profile = tmp_path / "profile"
    profile.mkdir()
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={profile}", "--window-size=1280,1000", "--hide-scrollbars",
           "--virtual-time-budget=15000", "--allow-file-access-from-files", "--dump-dom", probe.as_uri()]
    dom = subprocess.run(cmd, capture_output=True, text=True, timeout=180).stdout
    m = re.search(r'<pre id="tapetrace-probe">(.*?)</pre>', dom, re.S)
    assert m, f"chromium printed no probe result: {dom[-500:]!r}"
    seen = json.loads(html.unescape(m.group(1)))
    assert seen["first"] == "Class summary"
    where = {sid: (y, n) for sid, y, n in seen["sections"]}
    assert all(y is not None and n > 0 for y, n in where.values()), where
    assert seen["cards"] < seen["img"] < where["regrade"][0] < where["mistakes"][0] < where["receipt"][0]
    assert not seen["small"], f"text under {MIN_PX} px: {seen['small'][:10]}"
