"""``tapetrace review`` (autograder/reports/review.py, autograder/cli/review.py) through Flask's test client: the
token on every route, writes only from this page's form and origin, an override appended to the overrides file
with the same validation as every command that reads it (and the report applying it), a hostile student name,
code and message shown as text, no URL naming a file. No grading run: the results are written by hand.
"""

from __future__ import annotations

import csv
import html.parser
import io
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("flask", reason="flask is not installed: pip install -c constraints.txt -e '.[review]'")

from autograder.cli import review as _cli_review  # noqa: E402
from autograder.reports import overrides as _overrides  # noqa: E402
from autograder.reports import review as _review  # noqa: E402
from autograder.submissions import loader as _loader  # noqa: E402

TOKEN = "t0ken-for-the-tests_0123456789abcdef"
ORIGIN = "http://localhost"
EX, TEST = "ex01_torch_mlp", "forward_matches_reference"
TESTS = [("parameter_shapes_in_order", 2.0), (TEST, 3.0), ("output_is_logits", 1.0)]
HOSTILE_NAME = "<script>alert('name')</script>\"'\u202e</textarea>x"
HOSTILE_CODE = ("def f(x):\n    s = \"</textarea><script>window.__pwned = 1</script>\"\n"
                "    t = '\u202eevil\u2066' + \"\\\"'\" + '<img src=x onerror=alert(1)>'\n    return s + t\n")
HOSTILE_MESSAGE = "<img src=x onerror=\"window.__pwned=2\"> at line 3 of your code: `</textarea>`"
PLAIN_CODE = "import torch\n\n\ndef forward(x):\n    return torch.relu(x)\n"


def _exercise(fail: bool, message: str = "`MLP.forward` differs from the reference at line 5 of your code") -> dict:
    tests = [{"name": n, "score": 0.0 if fail and n == TEST else pts, "max_score": pts, "passed": not (fail and n == TEST),
              "hidden": False, "message": message if fail and n == TEST else "",
              "code": "MISMATCH" if fail and n == TEST else ""} for n, pts in TESTS]
    return {"score": sum(t["score"] for t in tests), "max_score": 6.0, "status": "graded", "message": "",
            "tests": tests, "seconds": 1.0}


def make_class(tmp_path: Path, hostile: bool = False) -> Path:
    """``tmp_path/results.json`` for alice (fails one check, code in subs/alice/) and bob (passes), and with
    ``hostile`` a third student whose folder name, code and message are hostile; submissions as relative paths."""
    subs = tmp_path / "subs"
    students = {"alice": (PLAIN_CODE, True, None), "bob": ("def forward(x):\n    return x\n", False, None)}
    if hostile:
        students[HOSTILE_NAME] = (HOSTILE_CODE, True, HOSTILE_MESSAGE)
    rows = []
    for name, (code, fail, message) in students.items():
        (subs / name).mkdir(parents=True)
        (subs / name / f"{EX}.py").write_text(code, encoding="utf-8")
        ex = _exercise(fail, message) if message else _exercise(fail)
        ex4 = {**_exercise(False), "status": "error", "score": 0.0, "message": "could not load (error) <b>",
               "tests": [{**t, "score": 0.0, "passed": False} for t in _exercise(False)["tests"]]}
        rows.append({"submission": f"subs/{name}", "device": {"torch": "cpu", "jax": "cpu"}, "seed": 7,
                     "total": ex["score"], "max_total": 12.0, "exercises": {EX: ex, "ex04_jax_mlp": ex4}})
    res = tmp_path / "results.json"
    res.write_text(json.dumps(rows), encoding="utf-8")
    return res


def make_review(tmp_path: Path, hostile: bool = False, overrides: bool = True, roster: str | None = None,
                direct: bool = True) -> _review.Review:
    """The :class:`Review` ``tapetrace review`` would serve, read in ``tmp_path`` (``direct``: the loader in this
    process, as the bounded reader's child runs it; False: the reading child)."""
    res = make_class(tmp_path, hostile)
    args = type("Args", (), {"results": str(res), "overrides": str(tmp_path / "overrides.csv") if overrides else None,
                             "roster": roster})()
    review = _cli_review.prepare(args)
    if direct:
        review.read_code = _loader.load
    return review


@pytest.fixture
def chdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def served(chdir):
    review = make_review(chdir)
    client = _review.create_app(review, TOKEN).test_client()
    yield review, client
    review.close()


def login(client) -> None:
    r = client.get(f"/?token={TOKEN}")
    assert r.status_code == 303


def post(client, path: str = "/item/0/0", origin: str | None = ORIGIN, key: str | None = None, **fields: str):
    data = {"form_key": _review.form_key(TOKEN) if key is None else key, "test": TEST, "action": "set", "points": "2",
            "comment": "right idea, off by a transpose", "by": "ana", **fields}
    headers = {"Origin": origin} if origin else {}
    return client.post(path, data=data, headers=headers)


def rows_of(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


class _Tags(html.parser.HTMLParser):
    """Every element, its attributes, and the page's text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parse(body: str) -> _Tags:
    p = _Tags()
    p.feed(body)
    return p


# ----------------------------------------------------------------------------------------- the token
def _every_url(app) -> list[tuple[str, str]]:
    """(method, URL) of every route the application has (integers as 0), and a URL it has none for."""
    out = []
    for rule in app.url_map.iter_rules():
        url = re.sub(r"<int:\w+>", "0", rule.rule)
        out += [(m, url) for m in sorted(rule.methods - {"HEAD", "OPTIONS"})]
    return [*out, ("GET", "/no/such/page"), ("GET", "/static/../../pyproject.toml")]


def test_every_route_refuses_a_request_without_the_token(served):
    review, client = served
    urls = _every_url(client.application)
    assert {u for _m, u in urls} >= {"/", "/item/0/0", "/static/review.css", "/static/review.js"}
    for method, url in urls:
        for how in ({}, {"query_string": {"token": "wrong"}}, {"query_string": {"token": TOKEN[:-1]}}):
            r = client.open(url, method=method, **how, data={"form_key": _review.form_key(TOKEN)},
                            headers={"Origin": ORIGIN})
            assert r.status_code == 403, (method, url, how)
            assert r.get_data(as_text=True).strip() == _review.NO_TOKEN
            assert "alice" not in r.get_data(as_text=True)
    client.set_cookie("tapetrace_review", "wrong")
    assert client.get("/").status_code == 403
    assert not (review.overrides_path and Path(review.overrides_path).exists())


def test_the_printed_url_sets_a_strict_cookie_and_leaves_the_address_without_the_token(served):
    _review_, client = served
    r = client.get(f"/item/0/0?token={TOKEN}&ex={EX}")
    assert r.status_code == 303 and r.headers["Location"] == f"/item/0/0?ex={EX}"
    cookie = r.headers["Set-Cookie"]
    assert cookie.startswith(f"tapetrace_review={TOKEN};") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert client.get("/").status_code == 200
    assert client.get("/static/review.js").status_code == 200


def test_the_cookie_is_named_by_the_port_so_two_reviews_keep_their_own(chdir):
    review = make_review(chdir)
    client = _review.create_app(review, TOKEN, port=8765).test_client()
    r = client.get(f"/?token={TOKEN}", base_url="http://127.0.0.1:8765")
    assert r.headers["Set-Cookie"].startswith("tapetrace_review_8765=")
    assert client.get("/", base_url="http://127.0.0.1:8765").status_code == 200
    assert client.get("/", base_url="http://127.0.0.1:9999").status_code == 403  # another port's Host


def test_every_response_says_no_script_but_ours_no_sniffing_no_framing(served):
    _r, client = served
    for r in (client.get("/"), client.get("/nope")):
        assert r.headers["Content-Security-Policy"] == _review.CSP
        assert r.headers["X-Content-Type-Options"] == "nosniff" and r.headers["X-Frame-Options"] == "DENY"
        assert r.headers["Referrer-Policy"] == "same-origin" and r.headers["Cache-Control"] == "no-store"
    login(client)
    for url, kind in (("/", "text/html"), ("/item/0/0", "text/html"), ("/static/review.css", "text/css"),
                      ("/static/review.js", "text/javascript")):
        r = client.get(url)
        assert r.status_code == 200 and r.mimetype == kind, url
        assert "script-src 'self'" in r.headers["Content-Security-Policy"]
        assert r.headers["X-Content-Type-Options"] == "nosniff"
    body = client.get("/item/0/0").get_data(as_text=True)
    scripts = [a for t, a in parse(body).tags if t == "script"]
    assert scripts == [{"src": "/static/review.js", "defer": None}]  # no inline script, no inline data
    assert not [a for _t, attrs in parse(body).tags for a in attrs if a.startswith("on") or a == "style"]


# ----------------------------------------------------------------------------------------- writes
def test_a_write_without_the_token_from_another_origin_or_without_the_form_key_is_refused(served):
    review, client = served
    ov = Path(review.overrides_path)
    assert post(client).status_code == 403  # no token, no cookie
    login(client)
    for origin in ("http://evil.example", "null", "http://localhost:9999", "http://127.0.0.1", "https://localhost"):
        r = post(client, origin=origin)
        assert r.status_code == 403 and r.get_data(as_text=True).strip() == _review.OTHER_ORIGIN, origin
    r = post(client, origin=None)  # neither Origin nor Referer
    assert r.status_code == 403 and r.get_data(as_text=True).strip() == _review.OTHER_ORIGIN
    r = client.post("/item/0/0", data={"form_key": _review.form_key(TOKEN), "test": TEST, "action": "set",
                                       "points": "2", "by": "ana"}, headers={"Referer": "http://evil.example/x"})
    assert r.status_code == 403
    for key in ("", "0" * 64, _review.form_key("another token")):
        r = post(client, key=key)
        assert r.status_code == 403 and r.get_data(as_text=True).strip() == _review.BAD_FORM
    r = client.get("/item/0/0", query_string={"test": TEST, "action": "set", "points": "2", "by": "ana"})
    assert r.status_code == 200  # a GET never writes
    r = client.get("/", headers={"Host": "attacker.example"})  # a name rebound to 127.0.0.1
    assert r.status_code == 403 and r.get_data(as_text=True).strip() == _review.BAD_HOST
    assert not ov.exists()
    r = client.post("/item/0/0", data={"form_key": _review.form_key(TOKEN), "test": TEST, "action": "set",
                                       "points": "2", "by": "ana"}, headers={"Referer": f"{ORIGIN}/item/0/0"})
    assert r.status_code == 303 and ov.exists()  # the page's own Referer, where a browser sends no Origin


def test_an_override_round_trip_appends_a_valid_row_that_report_and_gradebook_apply(served, capsys):
    review, client = served
    login(client)
    r = post(client)
    assert r.status_code == 303 and r.headers["Location"] == "/item/0/0?saved=2"
    ov = Path(review.overrides_path)
    head, row = rows_of(ov)
    assert head == list(_overrides.COLUMNS)
    cells = dict(zip(head, row, strict=True))
    assert (cells["student"], cells["exercise"], cells["test"], cells["action"], cells["points"], cells["by"]) == \
        ("subs/alice", EX, TEST, "set", "2", "ana")
    assert cells["basis"] == "0/3" and cells["comment"] == "right idea, off by a transpose"
    ovs = _overrides.read(str(ov))  # the one reader: the row is valid
    assert [(o.row, o.student, o.target, o.points) for o in ovs.rows] == [(2, "subs/alice", f"{EX}/{TEST}", 2.0)]
    page = client.get(r.headers["Location"]).get_data(as_text=True)
    assert _review.SAVED.format(row=2, path=review.overrides_path) in page
    assert "autograder 0/3 → 2/3 by ana" in page and "score <b>5/6</b> (autograder 3)" in page
    r2 = post(client, test="", action="adjust", points="-1", comment="second look")
    assert r2.status_code == 303 and r2.headers["Location"] == "/item/0/0?saved=3"
    assert len(_overrides.read(str(ov)).rows) == 2 and rows_of(ov)[2][2] == "" and rows_of(ov)[2][8] == "3/6"
    listing = client.get("/", query_string={"overridden": "yes"}).get_data(as_text=True)
    assert listing.count("class=\"open\"") == 1 and "4/6" in listing

    from autograder import cli
    from autograder.cli import report as _report_cli

    out = Path("report")
    assert _report_cli.main(["results.json", "--out", str(out), "--overrides", str(ov)]) == 0
    receipt = json.loads((out / "receipt.json").read_text(encoding="utf-8"))["receipt"]
    audit = receipt["overrides"]["rows"]
    assert [(a["row"], a["test"], a["autograder"], a["after"], a["applied"]) for a in audit] == \
        [(2, TEST, 0.0, 2.0, True), (3, "", 3.0, 4.0, True)]
    assert cli.main(["gradebook", "results.json", "--out", "grades.csv", "--overrides", str(ov)]) == 0
    assert "autograder 0/3 → 2/3 by ana" in Path("grades.csv").read_text(encoding="utf-8")


def test_with_a_roster_the_student_cell_is_the_roster_id(chdir):
    Path("roster.csv").write_text("file,student_id,name\nalice,s001,Alice Liddell\nbob,s002,Bob\n", encoding="utf-8")
    review = make_review(chdir, roster="roster.csv")
    client = _review.create_app(review, TOKEN).test_client()
    login(client)
    assert "Alice Liddell (s001)" in client.get("/").get_data(as_text=True)
    assert post(client).status_code == 303
    assert rows_of(Path(review.overrides_path))[1][0] == "s001"
    rows, audit = _overrides.apply(review.results, _overrides.read(review.overrides_path), review.roster)
    assert audit[0]["submission"] == "subs/alice" and rows[0]["exercises"][EX]["score"] == 5.0


def test_a_path_without_a_folder_is_written_dot_slash_as_the_commands_read_it(chdir):
    res = make_class(chdir)
    rows = json.loads(res.read_text())
    rows[0]["submission"] = "alice.py"
    Path("alice.py").write_text(PLAIN_CODE)
    res.write_text(json.dumps(rows))
    args = type("Args", (), {"results": str(res), "overrides": "overrides.csv", "roster": None})()
    review = _cli_review.prepare(args)
    review.read_code = _loader.load
    assert _review.identity_cell(review.results[0], None) == "./alice.py"
    assert _review.record(review, 0, EX, {"test": TEST, "action": "set", "points": "1", "by": "ana"}) == 2
    assert rows_of(Path("overrides.csv"))[1][0] == "./alice.py"


@pytest.mark.parametrize(("fields", "words"), [
    ({"points": "9"}, _overrides.BEYOND_MAX.format(points=9, action="set", maximum=3, target=f"{EX}/{TEST}")),
    ({"points": "lots"}, _overrides.BAD_POINTS.format(value="lots")),
    ({"points": "nan"}, _overrides.BAD_POINTS.format(value="nan")),
    ({"by": ""}, _overrides.EMPTY_CELL.format(col="by")),
    ({"action": "double"}, _overrides.BAD_ACTION.format(value="double")),
    ({"test": "no_such_check"}, _overrides.UNKNOWN_TEST.format(value="no_such_check", exercise=EX,
                                                               student="subs/alice")),
])
def test_an_invalid_override_is_refused_with_the_overrides_own_message_and_nothing_written(served, fields, words):
    review, client = served
    login(client)
    r = post(client, **fields)
    assert r.status_code == 422
    body = r.get_data(as_text=True)
    alert = re.search(r'role="alert">(.*?)</p>', body).group(1)
    assert html.unescape(alert) == f"{review.overrides_path}: row 2: {words}"
    assert not Path(review.overrides_path).exists()
    assert "right idea, off by a transpose" in body  # what the TA typed is kept in the form


def test_the_graders_exercise_is_not_overridden_and_a_broken_file_stops_every_write(served):
    review, client = served
    login(client)
    r = post(client, "/item/0/1", test="")  # ex04: status error is the student's; still overridable
    assert r.status_code == 303
    review.results[1]["exercises"][EX]["status"] = "grader_error"
    r = post(client, "/item/1/0", test="")
    assert r.status_code == 422 and "not applied: the grader could not grade" in r.get_data(as_text=True)
    ov = Path(review.overrides_path)
    before = ov.read_text()
    ov.write_text(before + "subs/alice,ex01_torch_mlp,,set,1,,,2026-12-03\n")  # a hand edit: `by` empty
    page = client.get("/").get_data(as_text=True)
    assert "row 3: by is empty" in page
    r = post(client)
    assert r.status_code == 422 and "row 3: by is empty" in r.get_data(as_text=True)
    assert ov.read_text().count("\n") == before.count("\n") + 1


def test_without_overrides_the_page_is_read_only(chdir):
    review = make_review(chdir, overrides=False)
    client = _review.create_app(review, TOKEN).test_client()
    login(client)
    body = client.get("/item/0/0").get_data(as_text=True)
    assert html.unescape(_review.READ_ONLY) in html.unescape(body) and "<form class=\"override\"" not in body
    r = post(client)
    assert r.status_code == 422 and html.unescape(_review.READ_ONLY) in html.unescape(r.get_data(as_text=True))


# ----------------------------------------------------------------------------------------- the pages
def test_the_item_shows_the_graded_code_numbered_with_the_messages_lines_marked(served):
    _r, client = served
    login(client)
    body = client.get("/item/0/0").get_data(as_text=True)
    lines = re.findall(r'<div class="line( hit)?" id="L(\d+)"><span class="ln">\d+</span><code>(.*?)</code>', body)
    assert [(int(n), html.unescape(c)) for _h, n, c in lines] == \
        [(k, (t or " ")) for k, t in enumerate(PLAIN_CODE.splitlines(), start=1)]
    assert [int(n) for h, n, _c in lines if h] == [5]  # "at line 5 of your code"
    assert '<a href="#L5">line 5</a>' in body


def test_a_notebooks_graded_module_is_its_section_without_the_context_trailer(chdir):
    review = make_review(chdir)
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": "## ex01_torch_mlp"},
        {"cell_type": "code", "metadata": {}, "source": "HIDDEN = 4\n", "outputs": [], "execution_count": None},
        {"cell_type": "markdown", "metadata": {}, "source": "## ex04_jax_mlp"},
        {"cell_type": "code", "metadata": {}, "source": "def init(key):\n    return HIDDEN\n", "outputs": [],
         "execution_count": None}]}
    Path("subs/alice/work.ipynb").write_text(json.dumps(nb))
    for f in Path("subs/alice").glob("*.py"):
        f.unlink()
    lines, why = _review.graded_code(review, 0, "ex04_jax_mlp")
    assert (lines, why) == (["def init(key):", "    return HIDDEN"], "")
    assert _review.graded_code(review, 0, EX)[0] == ["HIDDEN = 4"]
    assert _review.graded_code(review, 0, "ex07_flax_cnn") == (None, _review.NO_CODE.format(exercise="ex07_flax_cnn"))


def test_the_default_reader_is_the_bounded_reading_child(chdir):
    review = make_review(chdir, direct=False)
    try:
        assert _review.graded_code(review, 0, EX) == (PLAIN_CODE.splitlines(), "")
        assert review._reader is not None  # the loadguard child read it, under the reading budget
    finally:
        review.close()


def test_the_list_filters_and_sorts_and_the_item_links_its_neighbours(served):
    review, client = served
    login(client)

    def opened(**q):
        body = client.get("/", query_string=q).get_data(as_text=True)
        return [html.unescape(h) for h in re.findall(r'<a class="open" href="([^"]+)"', body)]

    assert len(opened()) == 4
    assert opened(ex=EX) == [f"/item/0/0?ex={EX}", f"/item/1/0?ex={EX}"]
    assert opened(check=TEST, ex=EX) == [f"/item/0/0?ex={EX}&check={TEST}"]
    assert len(opened(check=TEST)) == 3  # and both ex04 rows, whose load failed every check
    assert opened(status="error") == ["/item/0/1?status=error", "/item/1/1?status=error"]
    assert opened(ex=EX, sort="score") == [f"/item/0/0?ex={EX}&sort=score", f"/item/1/0?ex={EX}&sort=score"]
    assert opened(ex=EX, sort="-score") == [f"/item/1/0?ex={EX}&sort=-score", f"/item/0/0?ex={EX}&sort=-score"]
    assert opened(q="BOB", ex=EX) == [f"/item/1/0?ex={EX}&q=BOB"]
    assert opened(sort="<script>") == opened()  # an unknown order is the default one
    page = client.get(f"/item/0/0?ex={EX}").get_data(as_text=True)
    assert f'href="/item/1/0?ex={EX}" rel="next"' in page and 'rel="prev"' not in page
    page = client.get(f"/item/1/0?ex={EX}").get_data(as_text=True)
    assert f'href="/item/0/0?ex={EX}" rel="prev"' in page and 'rel="next"' not in page
    for q in ("ex", "check", "status"):
        assert 'name="' + q + '"' in client.get("/").get_data(as_text=True)


def test_a_mistake_the_catalogue_names_is_listed_and_filters(served, monkeypatch):
    _r, client = served
    monkeypatch.setattr(_review, "_CATALOGUE", {EX: [{"name": "relu_on_logits", "fails": [TEST],
                                                      "codes": {TEST: "MISMATCH"}, "why": "a ReLU on the logits"}]})
    login(client)
    body = client.get("/", query_string={"mistake": "relu_on_logits"}).get_data(as_text=True)
    assert re.findall(r'<a class="open" href="([^"?]+)', body) == ["/item/0/0"]
    assert "relu_<wbr>on_<wbr>logits" in body


def test_a_hostile_name_code_and_message_are_shown_as_text(chdir):
    review = make_review(chdir, hostile=True)
    client = _review.create_app(review, TOKEN).test_client()
    login(client)
    for url, q in (("/", {}), ("/item/2/0", {}), ("/", {"q": HOSTILE_NAME}), ("/item/2/1", {"check": HOSTILE_NAME})):
        body = client.get(url, query_string=q).get_data(as_text=True)
        tags = parse(body)
        assert [t for t, _a in tags.tags if t in ("script", "img", "iframe", "object", "embed")] == ["script"], url
        assert [a for t, a in tags.tags if t == "script"] == [{"src": "/static/review.js", "defer": None}]
        assert not [k for _t, a in tags.tags for k in a if k.startswith("on")], url
        assert "\u202e" not in body and "\u2066" not in body  # a bidi control is shown as its escape
        assert body.count("<textarea") == body.count("</textarea>") <= 1
        text = "".join(tags.text)
        assert "<script>alert('name')</script>\"'\\u202e</textarea>x" in text, url
    text = "".join(parse(client.get("/item/2/0").get_data(as_text=True)).text)
    assert "s = \"</textarea><script>window.__pwned = 1</script>\"" in text
    assert "'\\u202eevil\\u2066' + \"\\\"'\" + '<img src=x onerror=alert(1)>'" in text
    assert "<img src=x onerror=\"window.__pwned=2\"> at line 3 of your code: `</textarea>`" in text


@pytest.mark.parametrize("url", ["/item/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "//etc/passwd",
                                 "/static/../../pyproject.toml", "/static/..%2f..%2fpyproject.toml",
                                 "/item/0/0/../../../etc/passwd", "/item/99/0", "/item/0/99", "/item/-1/0",
                                 "/item/0/0%2f..%2f..%2fetc%2fpasswd", "/etc/passwd", "/static/results.json",
                                 "/results.json", "/overrides.csv", "/subs/alice/ex01_torch_mlp.py",
                                 "/item/0/0?path=/etc/passwd&file=../../results.json"])
def test_no_url_names_a_file(served, url):
    _r, client = served
    login(client)
    r = client.get(url)
    body = r.get_data(as_text=True)
    assert "root:" not in body and "[project]" not in body and "\"submission\"" not in body
    if "?" in url:  # extra parameters are ignored: the page of row 0, its code from the results' path only
        assert r.status_code == 200 and "torch.relu" in body
    else:
        # nothing found; "//etc/passwd" names a host (etc), which this server is not
        assert (r.status_code, body.strip()) in ((404, _review.NOT_FOUND), (405, _review.NOT_FOUND),
                                                 (403, _review.BAD_HOST)), url


def test_a_submission_that_cannot_be_read_says_why_on_its_page(served):
    review, client = served
    login(client)
    for f in Path("subs/bob").iterdir():
        f.unlink()
    Path("subs/bob").rmdir()
    body = client.get("/item/1/0").get_data(as_text=True)
    assert "the submission cannot be read: subs/bob: no such file or directory" in body


def test_the_command_refuses_a_bad_start_in_one_line_and_serves_127_0_0_1(chdir, capsys):
    from autograder import cli

    assert cli.main(["review", "nope.json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tapetrace review: no such file or directory: nope.json")
    make_class(chdir)
    Path("bad.csv").write_text("student,exercise,action,points,by,at\nsubs/alice,ex01_torch_mlp,set,1,,2026-12-03\n")
    assert cli.main(["review", "results.json", "--overrides", "bad.csv"]) == 2
    assert capsys.readouterr().err == "tapetrace review: bad.csv: row 2: by is empty; every row needs student, " \
                                      "exercise, action, points, by and at\n"
    Path("subs/alice/overrides.csv").write_text("")
    assert cli.main(["review", "results.json", "--overrides", "subs/alice/overrides.csv"]) == 2
    assert "is inside the submission subs/alice" in capsys.readouterr().err

    import http.cookiejar
    import threading
    import urllib.error
    import urllib.request

    server = _cli_review.serve(None, 0)
    assert server.server_address[0] == "127.0.0.1"
    (chdir / "again").mkdir()
    review = make_review(chdir / "again")
    server.app = _review.create_app(review, TOKEN, server.port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.port}"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(base + "/", timeout=10)
        assert refused.value.code == 403
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        with browser.open(f"{base}/static/review.css?token={TOKEN}", timeout=10) as ok:  # 303, the cookie, the CSS
            assert ok.status == 200 and ok.url == f"{base}/static/review.css"
            assert ok.headers["X-Content-Type-Options"] == "nosniff" and ok.headers["Content-Type"].startswith("text/css")
    finally:
        server.shutdown()
        server.server_close()
        review.close()



def test_without_flask_the_command_says_what_to_install_in_one_line(chdir):
    import os
    import subprocess
    import sys

    make_class(chdir)
    root = Path(__file__).resolve().parents[1]
    code = ("import sys\nsys.modules['flask'] = None\nfrom autograder.cli import main\n"
            "sys.exit(main(['review', 'results.json']))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=chdir, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines() == [
        "tapetrace: flask is not installed (needed by `tapetrace review`): run `make setup` in the checkout, or "
        "`pip install -c constraints.txt -e '.[review]'`"]
