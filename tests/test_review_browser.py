"""``tapetrace review`` in a real headless Chromium (Debian's ``chromium``, as tests/test_report_browser.py finds it),
driven as a TA would over the DevTools protocol (tests/cdp.py: trusted key presses, mouse clicks, typed text):
open the printed URL, move through the class by keyboard, submit an override through the form and find it in the
overrides file; a hostile student name and code shown as text, running nothing; a request without the token and
a form posted from another local origin refused; the list and a student's page read at 390 and 1280 px without
scrolling sideways (screenshots kept in ``TAPETRACE_SCREENSHOTS`` when set).

Skipped, saying why, where no chromium is installed (``apt-get install -y chromium``; or set
``TAPETRACE_CHROMIUM``); ``.ci/run`` installs it where it can.
"""

from __future__ import annotations

import csv
import http.server
import io
import json
import os
import shutil
import threading
from pathlib import Path

import pytest
from test_report_browser import CHROMIUM

pytestmark = pytest.mark.skipif(CHROMIUM is None,
                                reason="no chromium: apt-get install -y chromium (or set TAPETRACE_CHROMIUM)")
pytest.importorskip("flask", reason="flask is not installed: pip install -c constraints.txt -e '.[review]'")

from cdp import Chromium  # noqa: E402
from test_review import EX, HOSTILE_NAME, TEST, TOKEN, make_review  # noqa: E402

from autograder.cli.review import serve  # noqa: E402
from autograder.reports import overrides as _overrides  # noqa: E402
from autograder.reports import review as _review  # noqa: E402

WIDTHS = {"phone": (390, 844), "laptop": (1280, 900)}
LONG = "differences_from_the_reference_" * 12 + " at line 2 of your code: " + "x" * 200


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The review of a class with a hostile student, served on 127.0.0.1 as the command serves it; a browser."""
    tmp = tmp_path_factory.mktemp("review")
    review = make_review(tmp, hostile=True, direct=False)  # its relative paths are read beside results.json
    review.results[1]["exercises"][EX]["tests"][0].update(passed=False, score=0.0, message=LONG, code="MISMATCH")
    server = serve(None, 0)
    server.app = _review.create_app(review, TOKEN, server.port)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    browser = Chromium(CHROMIUM, tmp / "profile")
    try:
        yield {"base": f"http://127.0.0.1:{server.port}", "review": review, "browser": browser, "tmp": tmp}
    finally:
        browser.close()
        server.shutdown()
        server.server_close()
        review.close()


def _logged_in(site):
    page = site["browser"].page()
    assert page.goto(f"{site['base']}/?token={TOKEN}") == 200
    assert page.url() == f"{site['base']}/"  # the token left the address bar: a cookie holds it
    return page


def test_keyboard_and_the_form_record_an_override_the_commands_apply(site):
    page = _logged_in(site)
    first = page.eval("document.querySelector('a.open').getAttribute('href')")
    page.press("j")
    assert page.eval("document.activeElement.getAttribute('href')") == first
    assert page.press("Enter", navigates=True) == 200
    here = page.url()
    assert here.startswith(f"{site['base']}/item/")
    assert page.press("j", navigates=True) == 200 and page.url() != here
    assert page.press("k", navigates=True) == 200 and page.url() == here
    assert page.press("ArrowRight", navigates=True) == 200 and page.url() != here
    assert page.press("ArrowLeft", navigates=True) == 200 and page.url() == here
    page.goto(f"{site['base']}/item/0/0")  # alice's ex01
    page.eval("(() => { const s = document.querySelector('#ov-test'); "  # the check as the TA picks it: by its label
              f"s.value = [...s.options].find(o => o.text.startsWith({json.dumps(TEST + ' ')})).value; }})()")
    page.type_into("#ov-points", "2.5")
    page.type_into("#ov-comment", "right idea </textarea><b>\"quoted\", off by a transpose")
    page.type_into("#ov-by", "an")
    page.press("j")  # a j typed in the form is a letter, never a move
    assert page.url() == f"{site['base']}/item/0/0" and page.eval("document.querySelector('#ov-by').value") == "anj"
    page.type_into("#ov-by", "ana")
    assert page.click("#ov-save", navigates=True) == 200
    assert page.url() == f"{site['base']}/item/0/0?saved=2"
    ov = Path(site["review"].overrides_path)
    assert page.eval("document.querySelector('.ok').textContent") == f"recorded as row 2 of {ov}"
    head, row = list(csv.reader(io.StringIO(ov.read_text(encoding="utf-8"))))
    cells = dict(zip(head, row, strict=True))
    assert (cells["student"], cells["test"], cells["action"], cells["points"], cells["by"], cells["comment"]) == \
        ("subs/alice", TEST, "set", "2.5", "ana", "right idea </textarea><b>\"quoted\", off by a transpose")
    rows, audit = _overrides.apply(site["review"].results, _overrides.read(str(ov)))
    assert audit[0]["applied"] and rows[0]["exercises"][EX]["score"] == 5.5
    shown = page.eval("document.body.innerText")
    assert "autograder 0/3 → 2.5/3 by ana" in shown and "right idea </textarea><b>\"quoted\"" in shown
    page.type_into("#ov-points", "99")
    page.type_into("#ov-by", "ana")
    assert page.click("#ov-save", navigates=True) == 422
    assert "row 3: points 99 with action set is beyond the maximum" in page.eval(
        "document.querySelector('[role=alert]').textContent")
    assert len(_overrides.read(str(ov)).rows) == 1


def test_a_hostile_name_and_code_are_text_that_runs_nothing(site):
    page = _logged_in(site)
    assert page.goto(f"{site['base']}/item/2/0") == 200
    got = page.eval("""({pwned: window.__pwned === undefined ? null : window.__pwned,
        scripts: [...document.scripts].map(s => s.getAttribute('src')), imgs: document.images.length,
        h1: document.querySelector('h1').textContent, code: document.querySelector('.code').textContent,
        textareas: document.querySelectorAll('textarea').length, alerts: document.querySelectorAll('[role=alert]').length,
        msg: document.querySelector('.checks .msg, .checks li .msg').textContent})""")
    assert got["pwned"] is None and got["scripts"] == ["/static/review.js"] and got["imgs"] == 0
    assert got["textareas"] == 1 and got["alerts"] == 0
    assert "<script>alert('name')</script>\"'\\u202e</textarea>x" in got["h1"]
    assert "s = \"</textarea><script>window.__pwned = 1</script>\"" in got["code"]
    assert "'\\u202eevil\\u2066'" in got["code"] and "\u202e" not in got["code"]
    assert got["msg"] == "<img src=x onerror=\"window.__pwned=2\"> at line 3 of your code: `</textarea>`"
    assert page.eval("document.querySelector('.line.hit').id") == "L3"
    page.goto(f"{site['base']}/")
    assert page.eval("window.__pwned === undefined") and HOSTILE_NAME.replace("\u202e", "\\u202e") in page.eval(
        "document.body.innerText")


def test_without_the_token_nothing_and_a_form_from_another_local_origin_writes_nothing(site):
    stranger = site["browser"].page(fresh_context=True)  # no cookie
    for path in ("/", "/item/0/0", "/static/review.js"):
        assert stranger.goto(site["base"] + path) == 403
        assert stranger.eval("document.body.innerText.trim()") == _review.NO_TOKEN
    ov = Path(site["review"].overrides_path)
    before = ov.read_text(encoding="utf-8") if ov.exists() else ""
    # another server on this machine (another port: same site, so the Strict cookie goes along) posts the form
    attack = site["tmp"] / "attack"
    attack.mkdir(exist_ok=True)
    (attack / "index.html").write_text(
        f"<form id=f method=post action=\"{site['base']}/item/0/0\"><input name=form_key value=guess>"
        f"<input name=test value={TEST}><input name=action value=set><input name=points value=3>"
        "<input name=by value=mallory><button id=go>go</button></form>", encoding="utf-8")
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(attack), **k)  # noqa: E731
    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        page = _logged_in(site)
        assert page.goto(f"http://127.0.0.1:{other.server_address[1]}/index.html") == 200
        assert page.click("#go", navigates=True) == 403
        assert page.eval("document.body.innerText.trim()") == _review.OTHER_ORIGIN
    finally:
        other.shutdown()
        other.server_close()
    assert (ov.read_text(encoding="utf-8") if ov.exists() else "") == before


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_the_pages_read_at_the_width_without_scrolling_sideways(site, width):
    w, h = WIDTHS[width]
    page = _logged_in(site)
    page.size(w, h)
    keep = os.environ.get("TAPETRACE_SCREENSHOTS")
    for name, path in (("list", "/"), ("item", "/item/1/0"), ("hostile", "/item/2/0")):
        assert page.goto(site["base"] + path) == 200
        shot = site["tmp"] / f"review-{name}-{w}.png"
        assert page.screenshot(shot) == (w, h)
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(shot, Path(keep) / shot.name)
        got = page.eval("""({inner: window.innerWidth, doc: document.documentElement.scrollWidth,
            msgs: [...document.querySelectorAll('.msg, td.checks')].map(m => Math.round(m.getBoundingClientRect().right)),
            code: [...document.querySelectorAll('.code')].map(c => c.scrollWidth - c.clientWidth)})""")
        assert got["inner"] == w and got["doc"] <= w, (name, got)
        assert page.content_width() <= w, name
        assert got["msgs"] and max(got["msgs"]) <= w, (name, got["msgs"])
        assert all(d <= 0 for d in got["code"]), (name, got["code"])
