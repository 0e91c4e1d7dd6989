"""Attacks on ``tapetrace review`` (autograder/reports/review.py), each a hostile student beside a harmless twin:
a look-alike name never takes the twin's override (nor gives its own to the twin), a folder named after a
classmate's roster id is not that classmate, a linked exercise file shows nothing of what it points to, hostile
text is inert in every context the page puts it (text, attribute, option, textarea, the reflected filters), a
message cannot forge a link, and a write is taken only with the token, this page's form key and origin, within its
size, as one CSV row. Through Flask's test client; no grading run (results written by hand).
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
import re
from pathlib import Path

import pytest

pytest.importorskip("flask", reason="flask is not installed: pip install -c constraints.txt -e '.[review]'")

from test_review import EX, ORIGIN, PLAIN_CODE, TEST, TOKEN, _exercise, login, parse, post  # noqa: E402

from autograder.reports import overrides as _overrides  # noqa: E402
from autograder.reports import review as _review  # noqa: E402
from autograder.reports.gradebook import read_roster  # noqa: E402
from autograder.submissions import loader as _loader  # noqa: E402

SECRET = "TAPETRACE-SECRET-MARKER the reference solution"


def _class(tmp: Path, students: dict[str, tuple[str, str | None]], roster: str | None = None,
           overrides: str | None = "overrides.csv") -> _review.Review:
    """A review of ``students`` (folder name -> code, and a message for its failed check), in ``tmp`` (the cwd)."""
    rows = []
    for name, (code, message) in students.items():
        folder = tmp / "subs" / name
        folder.mkdir(parents=True)
        (folder / f"{EX}.py").write_text(code, encoding="utf-8")
        ex = _exercise(True, message) if message else _exercise(True)
        rows.append({"submission": f"subs/{name}", "device": {"torch": "cpu", "jax": "cpu"}, "seed": 7,
                     "total": ex["score"], "max_total": 6.0, "exercises": {EX: ex}})
    (tmp / "results.json").write_text(json.dumps(rows), encoding="utf-8")
    return _review.Review([dict(r, source="tapetrace") for r in rows], "results.json", overrides,
                          read_roster(roster) if roster else None, read_code=_loader.load)


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _client(review: _review.Review, port: int | None = None):
    client = _review.create_app(review, TOKEN, port).test_client()
    login(client)
    return client


def _rows(path: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(Path(path).read_text(encoding="utf-8"))))


def _scores(review: _review.Review) -> list[float]:
    rows, _audit = _overrides.apply(review.results, _overrides.read(review.overrides_path), review.roster)
    return [r["exercises"][EX]["score"] for r in rows]


def test_a_look_alike_name_takes_nothing_of_its_twins(here):
    review = _class(here, {"alice": (PLAIN_CODE, None), "alice\u200b": (PLAIN_CODE, None)})
    client = _client(review)
    listing = client.get("/").get_data(as_text=True)
    assert "subs/alice\\u200b" in "".join(parse(listing).text) and "\u200b" not in listing  # two names, not one twice
    assert post(client, "/item/1/0", points="3").status_code == 303  # the look-alike's own override
    assert _rows(review.overrides_path)[1][0] == "subs/alice\u200b"
    assert _scores(review) == [3.0, 6.0]  # the twin keeps the autograder's 3


def test_a_name_the_overrides_file_cannot_hold_is_refused_never_the_twins(here):
    review = _class(here, {"alice": (PLAIN_CODE, None), "alice ": (PLAIN_CODE, None)})  # the file strips cells
    client = _client(review)
    r = post(client, "/item/1/0", points="3")
    assert r.status_code == 422
    assert "cannot be named in the overrides file: its student cell names another submission" in \
        html.unescape(r.get_data(as_text=True))
    assert not Path(review.overrides_path).exists()
    assert post(client, "/item/0/0", points="1").status_code == 303
    assert _scores(review) == [4.0, 3.0]


def test_a_folder_named_after_a_classmates_roster_id_is_not_that_classmate(here):
    Path("roster.csv").write_text("file,student_id,name\nalice,s001,Alice\n", encoding="utf-8")
    review = _class(here, {"alice": (PLAIN_CODE, None), "s001": (PLAIN_CODE, None)}, roster="roster.csv")
    client = _client(review)
    assert "subs/s001 (not in the roster)" in "".join(parse(client.get("/").get_data(as_text=True)).text)
    r = post(client, "/item/1/0", points="3")
    assert r.status_code == 422 and "the roster names no student_id for it" in html.unescape(r.get_data(as_text=True))
    assert not Path(review.overrides_path).exists()
    assert post(client, "/item/0/0", points="3").status_code == 303
    assert _rows(review.overrides_path)[1][0] == "s001"
    assert _scores(review) == [6.0, 3.0]  # alice (s001 in the roster), never the folder named s001


def test_a_linked_exercise_file_shows_nothing_of_what_it_points_to(here):
    review = _class(here, {"alice": (PLAIN_CODE, None), "mallory": (PLAIN_CODE, None)})
    Path("secret.py").write_text(f"# {SECRET}\n", encoding="utf-8")
    target = Path("subs/mallory") / f"{EX}.py"
    target.unlink()
    os.symlink(Path("secret.py").resolve(), target)
    client = _client(review)
    body = client.get("/item/1/0").get_data(as_text=True)
    assert SECRET not in body and "the grader refused ex01_torch_mlp.py (KIND_LINK)" in body
    assert "torch.relu" in client.get("/item/0/0").get_data(as_text=True)


HOSTILE = "\"'><script>window.__pwned=1</script><img src=x onerror=alert(1)>\u202e</textarea>{{7*7}}"


def test_hostile_text_is_inert_in_text_attributes_options_and_the_reflected_filters(here):
    Path("roster.csv").write_text(f"file,student_id,name\nalice,s001,Alice\nmallory,s666,\"{HOSTILE.replace(chr(34), chr(34) * 2)}\"\n",
                                  encoding="utf-8")
    review = _class(here, {"alice": (PLAIN_CODE, None), "mallory": (HOSTILE + "\n", HOSTILE + " at line 1")},
                    roster="roster.csv")
    for t in review.results[1]["exercises"][EX]["tests"]:
        if t["name"] == TEST:
            t["name"] = HOSTILE  # a check's name too (results are the instructor's, but shown the same way)
    client = _client(review)
    pages = [client.get(u, query_string=q).get_data(as_text=True) for u, q in (
        ("/", {}), ("/item/1/0", {}), ("/", {"ex": HOSTILE, "check": HOSTILE, "status": HOSTILE, "q": HOSTILE,
                                           "mistake": HOSTILE, "sort": HOSTILE}),
        ("/item/1/0", {"ex": HOSTILE, "saved": HOSTILE}), ("/item/0/0", {"check": HOSTILE}))]
    for body in pages:
        tags = parse(body)
        assert [t for t, _a in tags.tags if t in ("script", "img", "iframe", "object", "embed", "base")] == ["script"]
        assert not [k for _t, a in tags.tags for k in a if k.startswith("on") or k in ("style", "srcdoc")]
        for _t, a in tags.tags:
            for k in ("href", "src", "action"):
                if a.get(k) is not None:  # only our own paths and the code's line anchors
                    assert re.fullmatch(r"(/(?!/)[\w/.?=&%+-]*|#L\d+)", a[k]), a[k]
        assert "\u202e" not in body and body.count("<textarea") == body.count("</textarea>")
    # the hostile check is an option whose value round-trips: overriding it writes exactly that name, one row
    options = {html.unescape(text): value for value, text in re.findall(r'<option value="(t\d+)">(.*?)</option>',
                                                                          pages[1])}
    option = next(v for text, v in options.items() if text.startswith(HOSTILE.replace("\u202e", "\\u202e")))
    r = post(client, "/item/1/0", test=option, points="3", comment=HOSTILE, by=HOSTILE)
    assert r.status_code == 303
    head, row = _rows(review.overrides_path)
    cells = dict(zip(head, row, strict=True))
    assert cells["test"] == HOSTILE and cells["student"] == "s666"
    assert cells["comment"] == cells["by"] == HOSTILE.replace("\u202e", "\\u202e")  # one printable line
    assert _scores(review)[1] == 6.0
    after = client.get("/item/1/0").get_data(as_text=True)
    assert "window.__pwned" in html.unescape("".join(parse(after).text)) and "<script>window" not in after


def test_a_message_cannot_forge_a_link_or_mark_lines_that_are_not_there(here):
    forged = "see line 2\" href=\"//evil.example\" x=\"<a href=//evil.example>here</a> line 99999999 line 3"
    review = _class(here, {"alice": (PLAIN_CODE, forged)})
    body = _client(review).get("/item/0/0").get_data(as_text=True)
    links = [a["href"] for t, a in parse(body).tags if t == "a"]
    assert "//evil.example" not in links and [h for h in links if h.startswith("#")] == ["#L2", "#L3"]
    assert re.findall(r'class="line hit" id="L(\d+)"', body) == ["2", "3"]


def test_a_write_needs_the_token_the_form_key_and_this_servers_origin(here):
    review = _class(here, {"alice": (PLAIN_CODE, None), "bob": (PLAIN_CODE, None)})
    client = _review.create_app(review, TOKEN, port=8765).test_client()
    base = "http://127.0.0.1:8765"
    r = client.get(f"/?token={TOKEN}", base_url=base)
    assert r.status_code == 303
    client.set_cookie("tapetrace_review_9999", TOKEN)  # a cookie of another review (another port) is not this one's
    for headers in ({"Origin": "http://127.0.0.1:9999"}, {"Origin": "http://localhost:8765.evil.example"},
                    {"Origin": "http://127.0.0.1:8765@evil.example"}, {"Referer": "http://127.0.0.1:9999/item/0/0"},
                    {"Referer": "http://127.0.0.1:87650/"}, {}):
        r = client.post("/item/0/0", base_url=base, headers=headers,
                        data={"form_key": _review.form_key(TOKEN), "test": TEST, "action": "set", "points": "3",
                              "by": "mallory"})
        assert r.status_code == 403 and r.get_data(as_text=True).strip() == _review.OTHER_ORIGIN, headers
    stranger = _review.create_app(review, TOKEN, port=8765).test_client()
    stranger.set_cookie("tapetrace_review_9999", TOKEN, domain="127.0.0.1")
    r = stranger.post("/item/0/0", base_url=base, headers={"Origin": base},
                      data={"form_key": _review.form_key(TOKEN), "points": "3", "by": "m", "action": "set"})
    assert r.status_code == 403 and r.get_data(as_text=True).strip() == _review.NO_TOKEN
    r = client.post("/item/0/0", base_url=base, headers={"Origin": base},
                    data={"form_key": _review.form_key(TOKEN), "test": TEST, "action": "set", "points": "3",
                          "by": "ana", "comment": "x" * 70_000})
    assert r.status_code == 413
    assert not Path(review.overrides_path).exists()
    r = client.post("/item/0/0", base_url=base, headers={"Origin": base},
                    data={"form_key": _review.form_key(TOKEN), "test": TEST, "action": "set", "points": "3",
                          "by": "ana"})
    assert r.status_code == 303 and _scores(review) == [6.0, 3.0]


def test_a_comment_cannot_add_a_row_a_column_or_a_formula_the_file_runs(here):
    review = _class(here, {"alice": (PLAIN_CODE, None), "bob": (PLAIN_CODE, None)})
    client = _client(review)
    sneaky = "fine\nsubs/bob,ex01_torch_mlp,,set,6,,mallory,2026-12-03\r\n\",extra,\"cells"
    assert post(client, comment=sneaky, by="ana\nsubs/bob").status_code == 303
    rows = _rows(review.overrides_path)
    assert len(rows) == 2 and len(rows[1]) == len(_overrides.COLUMNS)
    ovs = _overrides.read(review.overrides_path)
    assert [o.student for o in ovs.rows] == ["subs/alice"] and ovs.rows[0].by == "ana subs/bob"
    assert _scores(review) == [5.0, 3.0]  # bob untouched


def test_an_overrides_file_inside_a_submission_is_refused_at_start(here, capsys):
    _class(here, {"alice": (PLAIN_CODE, None)})
    from autograder import cli

    Path("subs/alice/overrides.csv").write_text("student,exercise,action,points,by,at\n", encoding="utf-8")
    assert cli.main(["review", "results.json", "--overrides", "subs/alice/overrides.csv"]) == 2
    assert "is inside the submission subs/alice" in capsys.readouterr().err
    assert Path("subs/alice/overrides.csv").read_text() == "student,exercise,action,points,by,at\n"


def test_no_origin_header_and_a_referer_of_this_page_is_the_only_other_way_in(here):
    review = _class(here, {"alice": (PLAIN_CODE, None)})
    client = _client(review)
    r = client.post("/item/0/0", headers={"Referer": f"{ORIGIN}.evil.example/item/0/0"},
                    data={"form_key": _review.form_key(TOKEN), "test": TEST, "action": "set", "points": "3",
                          "by": "m"})
    assert r.status_code == 403
    assert not Path(review.overrides_path).exists()
