"""Round 6, class 2 (issue 64): a platform's file parsed by hand.

The gradebook read Gradescope's ``submission_metadata.yml`` with a line reader of its own, which split lines at
U+2028 (``str.splitlines``) and took ``- :sid:`` at any indentation. A display name as Gradescope's YAML writer
(Ruby's Psych, on libyaml) emits it -- a U+2028 inside a single-quoted scalar, left unescaped -- forged a block: a
classmate on time became "time unknown", the attacker's own late penalty a blank. The yml is now read by a YAML
parser (PyYAML's safe loader: no aliases expanded past a bound, no tag ever run, a size cap) and its structure
checked. Each attack beside a harmless twin, through ``tapetrace gradebook``; names serialised the way the platform
serialises them (libyaml's emitter, as PyYAML has it, is the stand-in for Psych's).
"""

from __future__ import annotations

import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from fuzzing import budget
from hypothesis import given
from hypothesis import strategies as st
from test_gradebook_authority import CLASS, ON_TIME, POLICY, THREE_DAYS_LATE, _export, _gradebook

from autograder.reports import late as _late

FORGED = "Mallory\u2028- :sid: s004\u2028x"  # the attacker's display name: a U+2028 before a forged "- :sid:"
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's emitter, Psych's, where PyYAML has it


class _Time(str):
    """A time as Psych writes a Ruby ``Time``: a plain YAML timestamp (``2026-12-01 14:00:00.906385000 -08:00``)."""


class _Quoted(str):
    """A string written single-quoted where the emitter allows it (else double-quoted, as libyaml does)."""


class _Psych(DUMPER):  # type: ignore[misc, valid-type]
    """The stand-in for Gradescope's writer: libyaml's emitter, Unicode left unescaped, keys in their order."""


_Psych.add_representer(_Time, lambda d, t: d.represent_scalar("tag:yaml.org,2002:timestamp", str(t)))
_Psych.add_representer(_Quoted, lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", str(s), style="'"))


def export_yml(blocks: dict[str, tuple[str, list[str]]], names: dict[str, str] | None = None,
               quoted: bool = False) -> str:
    """The export's yml as Gradescope writes it: each block's submitters (``:name:``, ``:sid:``, ``:email:``), its
    ``:created_at:``, a ``:results:`` and a ``:history:`` whose own ``:created_at:`` is an earlier submission's.

    Args:
        blocks: ``submission_N`` -> (time, sids).
        names: a submitter's display name by sid (default ``Student SID``).
        quoted: names single-quoted wherever the emitter allows (else the emitter's own choice).
    """
    names = names or {}
    data: dict[str, Any] = {}
    for key, (created, sids) in blocks.items():
        people = [{":name": (_Quoted if quoted else str)(names.get(sid, f"Student {sid}")), ":sid": sid,
                   ":email": f"{sid}@uni.edu"} for sid in sids]
        data[key] = {":submitters": people, ":created_at": _Time(created), ":score": 10.0, ":status": "processed",
                     ":results": {":score": 10.0, ":created_at": _Time("2020-01-01 00:00:00 +00:00")},
                     ":history": [{":id": 1, ":created_at": _Time("2020-01-01 00:00:00 +00:00"), ":score": 0.0}]}
    return yaml.dump(data, Dumper=_Psych, allow_unicode=True, sort_keys=False, width=4096)


# --- the measured attack, beside its harmless twin --------------------------------------------------------------------

def test_a_line_separator_in_a_display_name_forges_no_block(tmp_path, capsys):
    hostile = export_yml(CLASS, {"s002": FORGED})
    assert f"'{FORGED[:7]}\u2028" in hostile and "\\L" not in hostile  # as libyaml writes it: unescaped, single-quoted
    twin = export_yml(CLASS, {"s002": "Mallory O'Neil: - sid s004"})
    for root, yml in (("hostile", hostile), ("twin", twin)):
        export = _export(tmp_path / root, yml=yml)
        code, got, _ = _gradebook(tmp_path / root, export, *POLICY, "--gradescope-metadata", str(export))
        assert code == 0, capsys.readouterr().err
        assert got["s002"][5] == "7" and got["s002"][-1].startswith("late 2d 20h 31m: -30%")  # never a blank
        assert got["s004"][5] == "10" and got["s004"][-1] == "on time"  # never "time unknown"
        by_sid = {k: f"{sids[0]}.ipynb" for k, (_, sids) in CLASS.items()}  # the victim found by id alone
        code, got, _ = _gradebook(tmp_path / root, tmp_path / root / "renamed", *POLICY, "--gradescope-metadata",
                                  str(export), named=by_sid)
        assert code == 0 and got["s004"][-1] == "on time" and got["s002"][5] == "7"
    times = _late.read_gradescope(str(tmp_path / "hostile" / "export"))
    assert times.by_id["s004"] == _late.parse_time(ON_TIME) and not times.unknown and not times.notes


def test_a_display_name_psych_leaves_plain_that_yaml_resolves_otherwise_stops_nothing(tmp_path):
    """Psych writes ``=`` (YAML 1.1's value key) and ``<<`` plain; a safe loader has no constructor for their tags.
    A name is never a reason to refuse the file: the class keeps its times."""
    text = export_yml(CLASS)
    for plain in ("=", "1:2:3:4"):
        hostile = text.replace(":name: Student s002", f":name: {plain}", 1)
        times = _late.read_gradescope(str(_export(tmp_path / plain.replace(":", "_"), yml=hostile)))
        assert times.by_id["s002"] == _late.parse_time(THREE_DAYS_LATE) and not times.notes, times.notes
        assert times.by_id["s004"] == _late.parse_time(ON_TIME)


# --- what a YAML parser must not do with a platform file ---------------------------------------------------------------

def _read(tmp_path: Path, yml: str) -> _late.Times:
    return _late.read_gradescope(str(_export(tmp_path, yml=yml)))


def _whole(times: _late.Times, why: str) -> None:
    """Every time unknown, the reason said."""
    assert not times.by_key and not times.by_id, times
    assert why in times.missing and any("every Gradescope time is unknown" in n for n in times.notes), times


def test_aliases_that_expand_past_the_bound_are_refused_whole_and_at_once(tmp_path):
    laughs = ["lol0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    laughs += [f"lol{k}: &a{k} [{', '.join([f'*a{k - 1}'] * 10)}]" for k in range(1, 10)]
    bomb = export_yml(CLASS).replace("  :status: processed\n", "  :status: processed\n  :bomb:\n" + "".join(
        f"    {line}\n" for line in laughs), 1)
    start = time.perf_counter()
    _whole(_read(tmp_path / "bomb", bomb), "aliases")
    merge = "    m0: &m0 {x: 1}\n" + "".join(f"    m{k}: &m{k} {{<<: [{', '.join([f'*m{k - 1}'] * 10)}]}}\n"
                                        for k in range(1, 9))
    merge_bomb = export_yml(CLASS).replace("  :status: processed\n", "  :status: processed\n  :merge:\n" + merge, 1)
    _whole(_read(tmp_path / "merge", merge_bomb), "aliases")
    loop = export_yml(CLASS).replace("  :status: processed\n", "  :status: processed\n  :loop: &l [*l]\n", 1)
    _whole(_read(tmp_path / "loop", loop), "alias")
    assert time.perf_counter() - start < 20


def test_a_few_aliases_as_psych_writes_shared_objects_are_read(tmp_path):
    """Psych writes an object met twice as an anchor and an alias (``&1`` ... ``*1``): a harmless file's aliases."""
    text = export_yml(CLASS).replace("  :results:\n    :score: 10.0\n", "  :results: &1\n    :score: 10.0\n", 1)
    text = text.replace("  :results:\n    :score: 10.0\n    :created_at: 2020-01-01 00:00:00 +00:00\n",
                        "  :results: *1\n")
    assert text.count("*1") == len(CLASS) - 1
    times = _read(tmp_path, text)
    assert times.by_id["s002"] == _late.parse_time(THREE_DAYS_LATE) and not times.notes


def test_tags_are_never_run_and_a_ruby_tag_elsewhere_stops_nothing(tmp_path):
    planted = tmp_path / "ran"
    text = export_yml(CLASS).replace(":score: 10.0\n  :status:", ":score: !ruby/object:BigDecimal 18:0.1e2\n  :status:")
    text = text.replace("  :status: processed\n", f"  :status: !!python/object/apply:os.system ['touch {planted}']\n")
    times = _read(tmp_path / "tags", text)
    assert not planted.exists()
    assert times.by_id["s002"] == _late.parse_time(THREE_DAYS_LATE) and not times.notes


def test_a_file_past_the_size_cap_or_nested_too_deep_is_refused_whole(tmp_path, monkeypatch):
    text = export_yml(CLASS)
    monkeypatch.setattr(_late, "GS_MAX_BYTES", len(text.encode()) - 1)
    _whole(_read(tmp_path / "big", text), "MiB")
    monkeypatch.undo()
    deep = text.replace("  :status: processed\n", "  :status: processed\n  :deep: " + "[" * 5000 + "]" * 5000 + "\n")
    _whole(_read(tmp_path / "deep", deep), "nested")


@pytest.mark.parametrize(("case", "why"), [
    ("a list", "not a mapping"), ("a scalar key", "is not a submission_N"), ("two documents", "single document")])
def test_a_yml_of_another_shape_leaves_every_student_blank(tmp_path, case, why):
    text = export_yml(CLASS)
    shaped = {"a list": "- " + text.replace("\n", "\n  "), "a scalar key": "dummy: 1\n" + text,
              "two documents": text + "---\n" + text}[case]
    _whole(_read(tmp_path, shaped), why)


@pytest.mark.parametrize(("bad", "why"), [
    ("  :submitters: Mallory\n", ":submitters: is not a list"), ("  :submitters:\n  - Mallory\n", "not a mapping"),
    ("  :submitters:\n  - :sid: [s004]\n", ":sid:"), ("  :created_at: [2026-12-01]\n", ":created_at:")])
def test_a_block_of_another_shape_leaves_only_its_students_blank(tmp_path, bad, why):
    text = export_yml(CLASS)
    start = text.index("submission_2:\n") + len("submission_2:\n")
    end = text.index("submission_3:\n")
    block = text[start:end]
    if bad.startswith("  :created_at:"):
        block = "".join(line + "\n" for line in block.splitlines() if not line.startswith("  :created_at:")) + bad
    else:
        block = bad + block[block.index("  :created_at:"):]
    times = _read(tmp_path, text[:start] + block + text[end:])
    assert "submission_2" not in times.by_key and why in times.unknown["key:submission_2"], times.unknown
    assert times.by_id["s004"] == _late.parse_time(ON_TIME) and times.by_id["s001"] == _late.parse_time(THREE_DAYS_LATE)


# --- property: every sid gets exactly its own block's time, whatever the names ---------------------------------------

# any code point a display name can hold (no lone surrogate: not UTF-8), with the ones that broke the line reader
NAME_CHARS = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=("Cs",))
PIECES = ["\u2028", "\u2029", "\u0085", "\n", "\r\n", "\r", "\t", "'", "''", '"', ":", ": ", " :", "- :sid: s004",
          "\u2028- :sid: s004", "\u2028  :created_at: 2026-11-20 10:00:00 +01:00", "---", "...", "#", "&a", "*a", "!!",
          "<<", "=", "~", "null", "yes", "0123", "2026-12-01", "{", "[", "|", ">", "%", "@", "`", "\\", "\ufeff",
          "\u202e", "\x00", "\x1b", " ", ""]
NAMES = st.lists(st.one_of(st.sampled_from(PIECES), st.text(NAME_CHARS, max_size=6)), max_size=8).map("".join)
TIMES = [ON_TIME, THREE_DAYS_LATE, "2026-12-01 23:59:00 +01:00", "2026-11-20T10:00:00Z"]


@budget(60)
@given(st.lists(st.tuples(st.sampled_from(TIMES), st.lists(NAMES, min_size=1, max_size=3)), min_size=1, max_size=5),
       st.booleans())
def test_whatever_the_display_names_every_sid_gets_its_own_blocks_time(blocks: list[tuple[str, list[str]]],
                                                                         quoted: bool) -> None:
    plan, names, want = {}, {}, {}
    for n, (created, people) in enumerate(blocks, 1):
        sids = [f"s{n}{k}" for k in range(len(people))]
        plan[f"submission_{n}"] = (created, sids)
        names.update(zip(sids, people, strict=True))
        want.update(dict.fromkeys(sids, _late.parse_time(created)))
    with tempfile.TemporaryDirectory(prefix="tapetrace-fuzz-") as tmp:
        times = _late.read_gradescope(str(_export(Path(tmp), plan, yml=export_yml(plan, names, quoted))))
    assert times.by_id == want and not times.unknown and not times.notes and not times.missing
    assert {k: v for k, v in times.by_key.items()} == {k: _late.parse_time(t) for k, (t, _) in plan.items()}
    assert all(isinstance(t, datetime) and t.tzinfo for t in times.by_id.values())
