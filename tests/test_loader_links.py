"""The loader reads only the submission: links, special files and paths leading outside it are refused.

An instructor who extracts student zips with `unzip` gets the links they hold; a submission folder whose
``exNN_*.py`` points at the solutions (or at a classmate's folder) must not be graded as the student's code.
Each refused file costs its exercise only, with a message; the grader never blocks on a FIFO.
"""

from __future__ import annotations

import json
import os
import stat
import zipfile
from pathlib import Path

import pytest

from autograder.builders import notebook as _notebook
from autograder.core.paths import EXERCISES, ROOT, SOLUTIONS
from autograder.submissions import loader as _loader

EX1, EX9 = "ex01_torch_mlp", "ex09_autograd_tape"


def _solution(ex: str) -> str:
    return (SOLUTIONS / f"{ex}.py").read_text()


def test_a_linked_exercise_file_is_refused_and_the_others_are_read(tmp_path):
    (tmp_path / f"{EX1}.py").symlink_to(SOLUTIONS / f"{EX1}.py")
    (tmp_path / f"{EX9}.py").write_text(_solution(EX9))
    sub = _loader.load(str(tmp_path))
    assert sub.sources[EX1] is None and sub.refused[EX1] == (f"{EX1}.py", "KIND_LINK")
    assert sub.sources[EX9] == _solution(EX9) and EX9 not in sub.refused


def test_a_link_to_a_file_inside_the_submission_is_refused_too(tmp_path):
    (tmp_path / "mine.py").write_text(_solution(EX1))
    (tmp_path / f"{EX1}.py").symlink_to(tmp_path / "mine.py")
    assert _loader.load(str(tmp_path)).refused[EX1][1] == "KIND_LINK"


def test_a_dangling_link_and_a_link_to_a_folder(tmp_path):
    (tmp_path / f"{EX1}.py").symlink_to(tmp_path / "nowhere.py")
    (tmp_path / f"{EX9}.py").symlink_to(ROOT / "solutions", target_is_directory=True)
    sub = _loader.load(str(tmp_path))
    assert sub.refused[EX1][1] == "KIND_LINK" and sub.refused[EX9][1] == "KIND_LINK"


def test_special_files_are_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / f"{EX1}.py")  # reading it would wait forever
    (tmp_path / f"{EX9}.py").mkdir()
    sub = _loader.load(str(tmp_path))
    assert sub.refused[EX1] == (f"{EX1}.py", "KIND_FIFO")
    assert sub.refused[EX9] == (f"{EX9}.py", "KIND_FOLDER")


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_device_file_is_refused(tmp_path):
    os.mknod(tmp_path / f"{EX1}.py", stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero: endless
    assert _loader.load(str(tmp_path)).refused[EX1] == (f"{EX1}.py", "KIND_DEVICE")


def test_a_linked_notebook_or_folder_refuses_every_exercise(tmp_path):
    nb = ROOT / "student_template" / _notebook.NOTEBOOK
    one = tmp_path / "one"
    one.mkdir()
    (one / "mine.ipynb").symlink_to(nb)
    sub = _loader.load(str(one))
    assert set(sub.refused) == set(EXERCISES) and all(k == "KIND_LINK" for _n, k in sub.refused.values())
    two = tmp_path / "two"
    two.mkdir()
    (two / "classmate").symlink_to(ROOT / "solutions", target_is_directory=True)
    sub = _loader.load(str(two))
    assert set(sub.refused) == set(EXERCISES) and all(v is None for v in sub.sources.values())


def test_the_path_the_instructor_gives_may_be_a_link(tmp_path):
    real = tmp_path / "real.py"
    real.write_text(_solution(EX1))
    (tmp_path / f"{EX1}.py").symlink_to(real)
    sub = _loader.load(str(tmp_path / f"{EX1}.py"))
    assert sub.sources[EX1] == _solution(EX1) and not sub.refused


def test_a_fifo_given_as_the_submission_is_an_error_not_a_hang(tmp_path):
    os.mkfifo(tmp_path / "sub.py")
    with pytest.raises(_loader.SubmissionError, match="not a regular file"):
        _loader.load(str(tmp_path / "sub.py"))


def _zip_with_link(path: Path, name: str, target: str, extra: dict[str, str]) -> None:
    with zipfile.ZipFile(path, "w") as zf:
        info = zipfile.ZipInfo(name)
        info.external_attr = (stat.S_IFLNK | 0o777) << 16  # how `zip --symlinks` stores a link
        zf.writestr(info, target)
        for arc, text in extra.items():
            zf.writestr(arc, text)


def test_links_inside_a_zip_are_refused(tmp_path):
    z = tmp_path / "sub.zip"
    _zip_with_link(z, f"{EX1}.py", str(SOLUTIONS / f"{EX1}.py"), {f"{EX9}.py": _solution(EX9)})
    sub = _loader.load(str(z))
    assert sub.refused[EX1] == (f"{EX1}.py", "KIND_LINK") and sub.sources[EX1] is None
    assert sub.sources[EX9] == _solution(EX9)


def test_a_linked_notebook_inside_a_zip_refuses_every_exercise(tmp_path):
    z = tmp_path / "nb.zip"
    _zip_with_link(z, "work/mine.ipynb", "../../student_template/tapetrace.ipynb", {})
    sub = _loader.load(str(z))
    assert set(sub.refused) == set(EXERCISES)


def test_a_fifo_stored_in_a_zip_is_refused(tmp_path):
    z = tmp_path / "fifo.zip"
    with zipfile.ZipFile(z, "w") as zf:
        info = zipfile.ZipInfo(f"{EX1}.py")
        info.external_attr = (stat.S_IFIFO | 0o644) << 16
        zf.writestr(info, "")
    assert _loader.load(str(z)).refused[EX1][1] == "KIND_FIFO"


def test_grading_scores_a_refused_exercise_zero_with_its_message_and_grades_the_rest(run, tmp_path):
    (tmp_path / f"{EX1}.py").symlink_to(SOLUTIONS / f"{EX1}.py")
    (tmp_path / f"{EX9}.py").write_text(_solution(EX9))
    res = run.grade([str(tmp_path)], only=[EX1, EX9])[0]["exercises"]
    assert res[EX1]["score"] == 0 and res[EX1]["status"] == "error"
    assert f"`{EX1}.py` is a symbolic link" in res[EX1]["message"]
    assert all(t["code"] == "REFUSED_FILE" for t in res[EX1]["tests"])
    assert res[EX9]["score"] == res[EX9]["max_score"] > 0


def test_a_regular_notebook_in_a_folder_is_still_read(tmp_path):
    nb = json.loads((ROOT / "student_template" / _notebook.NOTEBOOK).read_text())
    (tmp_path / "mine.ipynb").write_text(json.dumps(nb))
    sub = _loader.load(str(tmp_path))
    assert not sub.refused and sub.form == "notebook"
