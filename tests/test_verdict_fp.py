"""The verdict fingerprint's parts name what moved: a tolerance change is ``tolerances changed``, a report's or a
command's change moves nothing, an engine module's change moves the engine (by path, not by file name)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder.core import verdict_fp
from autograder.core.paths import ROOT

EX = "ex01_torch_mlp"


@pytest.fixture()
def pkg(tmp_path: Path) -> Path:
    dst = tmp_path / "autograder"
    shutil.copytree(ROOT / "autograder", dst, ignore=shutil.ignore_patterns("__pycache__", "*.npz"))
    return dst


def _append(path: Path, text: str = "\n# moved\n") -> None:
    path.write_text(path.read_text() + text)


def test_the_tolerance_table_is_a_part_of_its_own() -> None:
    parts = verdict_fp.file_parts(EX)
    assert parts["tolerances"] != "absent", "the tolerance table's file is not where the fingerprint reads it"


def test_reports_commands_and_builders_move_no_verdict(pkg: Path) -> None:
    before = verdict_fp.file_parts(EX, root=pkg)
    for rel in ("reports/gradebook.py", "cli/gradebook.py", "cli/grade.py", "builders/notebook.py"):
        _append(pkg / rel)
    verdict_fp.engine_part.cache_clear()
    assert verdict_fp.file_parts(EX, root=pkg) == before


def test_engine_and_tolerances_move_their_own_parts(pkg: Path) -> None:
    before = verdict_fp.file_parts(EX, root=pkg)
    _append(pkg / "core" / "tolerances.py")
    verdict_fp.engine_part.cache_clear()
    after = verdict_fp.file_parts(EX, root=pkg)
    assert verdict_fp.changed({"parts": before}, {"parts": after}) == ["tolerances changed"]
    _append(pkg / "engine" / "run.py")
    verdict_fp.engine_part.cache_clear()
    assert verdict_fp.file_parts(EX, root=pkg)["engine"] != after["engine"]


def test_engine_files_are_told_apart_by_path(pkg: Path) -> None:
    """Two engine modules with one name: moving bytes from one to the other moves the engine."""
    a, b = pkg / "engine" / "twin.py", pkg / "workers" / "twin.py"
    a.write_text("x = 1\n")
    b.write_text("")
    verdict_fp.engine_part.cache_clear()
    first = verdict_fp.engine_part(pkg)
    a.write_text("")
    b.write_text("x = 1\n")
    verdict_fp.engine_part.cache_clear()
    assert verdict_fp.engine_part(pkg) != first
