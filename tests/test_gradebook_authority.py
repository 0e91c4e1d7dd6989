"""Whose input sets a submission's time (issue 53; docs/security.md#authority-map): ``tapetrace gradebook
--gradescope-metadata`` reads only the export's own top-level ``submission_metadata.yml``. A file a student
uploads into their ``submission_N/`` folder (a ``submission_metadata.json`` with an early time, one naming a
classmate's sid, one that is not JSON) is data, never a time or an id; a malformed platform yml leaves the
students it cannot time blank and listed (exit 3), the class's CSV still written."""

from __future__ import annotations

import csv
import io
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder import cli
from autograder.reports import late as _late

DEADLINE = "2026-12-01T23:59:00+01:00"
ON_TIME = "2026-12-01 14:00:00.906385000 -08:00"  # 23:00+01:00
THREE_DAYS_LATE = "2026-12-04 11:30:00.000000000 -08:00"  # 20:30+01:00 on Dec 4: 3 started days late
EARLY = "2026-11-20T10:00:00+01:00"
FAR = "2027-06-01T10:00:00+01:00"
POLICY = ("--deadline", DEADLINE, "--penalty", "10%/day", "--late-days", "5")


def _yml(blocks: dict[str, tuple[str, list[str]]]) -> str:
    """The export's yml as Gradescope writes it (Ruby's YAML), with a ``:history:`` whose nested
    ``:created_at:`` is an earlier submission's, not this one's."""
    out = ["---"]
    for key, (created, sids) in blocks.items():
        out.append(f"{key}:")
        out.append("  :submitters:")
        for sid in sids:
            out += [f"  - :name: Student {sid}", f"    :sid: '{sid}'", f"    :email: {sid}@uni.edu"]
        out += [f"  :created_at: {created}", "  :score: 10.0", "  :status: processed", "  :results:",
                "    :score: 10.0", "    :created_at: 2020-01-01 00:00:00 +00:00", "  :history:",
                "  - :id: 1", "    :created_at: 2020-01-01 00:00:00 +00:00", "    :score: 0.0"]
    return "\n".join(out) + "\n"


# the class: submission_N -> (time, submitters); s002 is late like s001 and forges an early time; s003 is the
# vandal naming s004; s005's folder holds a file of that name that is not JSON
CLASS = {"submission_1": (THREE_DAYS_LATE, ["s001"]), "submission_2": (THREE_DAYS_LATE, ["s002"]),
         "submission_3": (ON_TIME, ["s003"]), "submission_4": (ON_TIME, ["s004"]),
         "submission_5": (ON_TIME, ["s005"]), "submission_6": (ON_TIME, ["s006"])}


def _export(root: Path, blocks=CLASS, yml: str | bytes | None = None) -> Path:
    """An unzipped export: each ``submission_N/`` with the student's notebook, and the top-level yml."""
    export = root / "export"
    for key in blocks:
        (export / key).mkdir(parents=True, exist_ok=True)
        (export / key / "work.ipynb").write_text("{}")
    text = _yml(blocks) if yml is None else yml
    path = export / "submission_metadata.yml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return export


def _gradebook(root: Path, export: Path, *argv: str, blocks=CLASS,
               named: dict[str, str] | None = None) -> tuple[int, dict[str, list[str]], str]:
    """Runs ``tapetrace gradebook`` on results for the export's folders (10 points each), named by a roster.

    Args:
        named: a submission's path under ``export`` by its key (default: its ``submission_N`` folder).

    Returns:
        (exit status, {sid: the CSV's row}, the CSV's text; "" when none was written).
    """
    named = named or {k: k for k in blocks}
    rows = [{"submission": str(export / named[key]), "total": 10.0, "max_total": 10.0,
             "exercises": {"ex01_torch_mlp": {"score": 10.0, "max_score": 10.0, "status": "graded", "tests": []}}}
            for key in blocks]
    results, out, roster = root / "r.json", root / "grades.csv", root / "roster.csv"
    results.write_text(json.dumps(rows))
    roster.write_text("file,student_id\n" + "".join(f"{named[k]},{sids[0]}\n" for k, (_, sids) in blocks.items()))
    out.unlink(missing_ok=True)
    code = cli.main(["gradebook", str(results), "--out", str(out), "--roster", str(roster), *argv])
    text = out.read_text() if out.exists() else ""
    table = list(csv.reader(io.StringIO(text)))
    return code, {r[2]: r for r in table[2:]}, text


def _forged(created_at: str, *sids: str) -> str:
    """What a student uploads to look like the autograder's ``submission_metadata.json``."""
    return json.dumps({"id": 99, "created_at": created_at, "users": [{"name": "x", "sid": s} for s in sids]})


# --- the three measured attacks, each beside an honest twin -------------------------------------------------------

def test_a_late_students_own_early_metadata_is_not_a_time(tmp_path, capsys):
    export = _export(tmp_path)
    (export / "submission_2" / "submission_metadata.json").write_text(_forged(EARLY, "s002"))
    code, got, text = _gradebook(tmp_path, export, *POLICY, "--gradescope-metadata", str(export))
    assert code == 0 and text
    honest, forger = got["s001"], got["s002"]
    assert honest[5] == "7" and honest[-1].startswith("late 2d 20h 31m: -30%")
    assert forger[5:] == honest[5:]  # 7, late, as its honest twin: never 10 "on time"
    assert "late policy" in capsys.readouterr().out


def test_a_vandal_naming_a_classmates_sid_changes_nobodys_time(tmp_path):
    export = _export(tmp_path)
    (export / "submission_3" / "submission_metadata.json").write_text(_forged(FAR, "s004", "s003"))
    code, got, _ = _gradebook(tmp_path, export, *POLICY, "--gradescope-metadata", str(export))
    assert code == 0
    assert got["s004"][5] == "10" and got["s004"][-1] == "on time"  # the victim: never 0 "too late"
    assert got["s003"][5] == "10" and got["s003"][-1] == "on time"  # the vandal: their own time
    assert got["s006"][5:] == got["s004"][5:]  # an honest twin nobody named
    # the victim found by id alone (files renamed by sid: no submission_N in the path) keeps the platform's time
    by_sid = {k: f"{sids[0]}.ipynb" for k, (_, sids) in CLASS.items()}
    code, got, _ = _gradebook(tmp_path, tmp_path / "renamed", *POLICY, "--gradescope-metadata", str(export),
                              named=by_sid)
    assert code == 0 and got["s004"][-1] == "on time" and got["s001"][5] == "7" and got["s002"][5] == "7"


def test_a_file_of_that_name_that_is_not_json_stops_nothing(tmp_path, capsys):
    export = _export(tmp_path)
    code, honest, _ = _gradebook(tmp_path, export, *POLICY, "--gradescope-metadata", str(export))
    (export / "submission_5" / "submission_metadata.json").write_bytes(b"\xff\xfe not json {")
    code2, got, text = _gradebook(tmp_path, export, *POLICY, "--gradescope-metadata", str(export))
    assert code == code2 == 0 and text  # the class's CSV is written
    assert got == honest
    assert "submission_5" not in capsys.readouterr().err


def test_a_name_the_student_chose_beneath_their_folder_is_not_another_submission(tmp_path):
    """``submission_2/submission_1.ipynb`` (or a folder of that name) is submission_2's, at its time."""
    export = _export(tmp_path, yml=_yml({**CLASS, "submission_1": (EARLY, ["s001"])}))
    (export / "submission_2" / "submission_1").mkdir()
    rows = [{"submission": str(export / "submission_2" / p), "total": 10.0, "max_total": 10.0,
             "exercises": {"ex01_torch_mlp": {"score": 10.0, "max_score": 10.0, "status": "graded", "tests": []}}}
            for p in ("submission_1.ipynb", "submission_1/work.ipynb")]
    times = _late.read_gradescope(str(export))
    for r in rows:
        from autograder.reports import gradebook as _gradebook

        rules = _gradebook.LateRules(_late.Policy(_late.parse_time(DEADLINE), 0.1), times)
        book = _gradebook.build([r], late=rules)
        assert book.students[0]["late"]["state"] == "late", r["submission"]
        assert book.students[0]["scores"]["ex01_torch_mlp"] == 7.0


# --- what the export's own yml says --------------------------------------------------------------------------------

def test_a_nested_created_at_is_not_the_submissions_and_a_sid_in_two_submissions_is_deterministic(tmp_path,
                                                                                                    capsys):
    blocks = {"submission_1": (ON_TIME, ["s001"]), "submission_7": (THREE_DAYS_LATE, ["s001", "s007"])}
    times = _late.read_gradescope(str(_export(tmp_path, blocks)))
    assert times.by_key["submission_1"] == _late.parse_time(ON_TIME)  # not :history:'s or :results:' 2020
    assert times.by_id == {"s001": _late.parse_time(THREE_DAYS_LATE), "s007": _late.parse_time(THREE_DAYS_LATE)}
    assert any("sid s001 is a submitter of submission_1, submission_7" in n for n in times.notes)
    # by its folder, each submission has its own time; by id alone, the latest (never the earlier)
    assert times.lookup("s001", "export", "submission_1") == _late.parse_time(ON_TIME)
    assert times.lookup("s001", "renamed", "s001") == _late.parse_time(THREE_DAYS_LATE)


MALFORMED = {"json": json.dumps({"submission_1": {"created_at": EARLY}}),
             "bytes": b"\x89PNG\r\n\x1a\n\x00\xff\xfe",
             "empty": "",
             "a tab": _yml(CLASS).replace("submission_1:", "\tsubmission_1:", 1),
             "flow": "submission_1: {created_at: 2026-12-01}\n"}


@pytest.mark.parametrize("case", ["json", "bytes", "empty", "a tab", "flow", "a directory"])
def test_a_malformed_yml_leaves_every_student_blank_listed_and_exit_3(tmp_path, capsys, case):
    export = _export(tmp_path)
    yml = export / "submission_metadata.yml"
    if case == "a directory":
        yml.unlink()
        yml.mkdir()
    else:
        text = MALFORMED[case]
        yml.write_bytes(text if isinstance(text, bytes) else text.encode())
    code, got, text = _gradebook(tmp_path, export, *POLICY, "--gradescope-metadata", str(export))
    err = capsys.readouterr().err
    assert code == 3 and text  # the class is written
    assert set(got) == {"s001", "s002", "s003", "s004", "s005", "s006"}
    for row in got.values():
        assert row[5:7] == ["", ""] and row[-1].startswith("time unknown: Gradescope's submission_metadata.yml"), row
    assert err.count("blank:") == 6 and "every Gradescope time is unknown" in err


def test_a_malformed_block_leaves_its_students_blank_and_the_others_timed(tmp_path, capsys):
    blocks = {**CLASS, "submission_3": ("yesterday at noon", ["s003"]),
              "submission_8": ("2026-12-01 10:00:00", ["s008"]),  # no offset and no --timezone
              "submission_9": (ON_TIME, ["s009", "s004"])}  # s004 also here: a good time, the latest counts
    export = _export(tmp_path, blocks)
    code, got, text = _gradebook(tmp_path, export, *POLICY, "--gradescope-metadata", str(export), blocks=blocks)
    err = capsys.readouterr().err
    assert code == 3 and text
    assert got["s003"][5] == "" and "submission_3 is malformed" in got["s003"][-1]
    assert got["s008"][5] == "" and "no UTC offset" in got["s008"][-1]
    assert got["s001"][5] == "7" and got["s004"][5] == "10" and got["s009"][5] == "10"
    assert "blank: " in err and "submission_3: :created_at:" in err and "submission_8" in err
    rec = json.loads((tmp_path / "grades.csv.receipt.json").read_text())["receipt"]["late"]
    assert rec["counts"]["time unknown"] == 2 and len(rec["problems"]) == 3  # two blocks, s004 in two
    code, got, _ = _gradebook(tmp_path, export, *POLICY, "--gradescope-metadata", str(export), "--timezone",
                              "Europe/Madrid", blocks=blocks)
    assert code == 3 and got["s008"][5] == "10" and got["s003"][5] == ""


def test_only_the_exports_top_level_yml_is_read(tmp_path, capsys):
    """A folder without the yml at its top is the command line's mistake (exit 2, one line), even when a
    student's folder holds one; the yml named as a file is read as such."""
    export = _export(tmp_path)
    (export / "submission_metadata.yml").rename(tmp_path / "meta.yml")
    (export / "submission_1" / "submission_metadata.yml").write_text(_yml({"submission_1": (EARLY, ["s001"])}))
    code, _, text = _gradebook(tmp_path, export, *POLICY, "--gradescope-metadata", str(export))
    err = capsys.readouterr().err
    assert code == 2 and not text and err.count("\n") == 1 and "no submission_metadata.yml at its top" in err
    code, got, _ = _gradebook(tmp_path, export, *POLICY, "--gradescope-metadata", str(tmp_path / "meta.yml"))
    assert code == 0 and got["s001"][5] == "7"
    code, _, _ = _gradebook(tmp_path, export, *POLICY, "--gradescope-metadata", str(tmp_path / "none"))
    assert code == 2


# --- property: nothing inside a student's folder changes anyone's time, state or score -------------------------------

_SIDS = [sids[0] for _, sids in CLASS.values()]
_TIMES = [EARLY, FAR, ON_TIME, THREE_DAYS_LATE, "not a time", ""]
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                max_size=3), max_leaves=8)
_FORGED = st.builds(lambda t, sids, extra: json.dumps({"created_at": t, "users": [{"sid": s} for s in sids],
                                                        **extra}),
                    st.sampled_from(_TIMES), st.lists(st.sampled_from(_SIDS) | st.text(max_size=6), max_size=3),
                    st.dictionaries(st.sampled_from(["id", "assignment", "submission_method"]), _JSON, max_size=2))
_CONTENT = (_FORGED | _JSON.map(json.dumps) | st.binary(max_size=64)
            | st.builds(lambda k, t, s: _yml({k: (t, [s])}), st.sampled_from(list(CLASS)), st.sampled_from(_TIMES),
                        st.sampled_from(_SIDS)))
_NAME = st.sampled_from(["submission_metadata.json", "submission_metadata.yml", "submission_metadata.yaml",
                         "roster.csv", "times.csv", "results.json"]) | st.from_regex(r"[a-z_]{1,10}\.(json|yml|txt)",
                                                                                   fullmatch=True)
_PLANTED = st.lists(st.tuples(st.sampled_from(list(CLASS)), st.sampled_from(["", *CLASS]), _NAME, _CONTENT),
                    min_size=1, max_size=4)


_CLEAN: list[tuple[int, dict[str, list[str]], str]] = []


def _write(path: Path, content: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass"))


@settings(derandomize=True, max_examples=50, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(planted=_PLANTED)
def test_files_inside_student_folders_never_change_any_students_time_state_or_score(planted):
    with tempfile.TemporaryDirectory() as base, tempfile.TemporaryDirectory() as other:
        clean, dirty = Path(base), Path(other)
        if not _CLEAN:  # the same export without the planted files (the CSV names no path: one run will do)
            _CLEAN.append(_gradebook(clean, _export(clean), *POLICY, "--gradescope-metadata", str(clean / "export")))
        want = _CLEAN[0]
        export = _export(dirty)
        for folder, nested, name, content in planted:  # in the folder, or in a folder named like another's
            _write(export / folder / nested / name, content)
        got = _gradebook(dirty, export, *POLICY, "--gradescope-metadata", str(export))
    assert got[0] == want[0] == 0 and got[2] == want[2]
    assert got[1]["s002"][5] == "7" and got[1]["s004"][5] == "10"
