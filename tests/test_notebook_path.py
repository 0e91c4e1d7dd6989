"""check() under nbconvert/nbclient/papermill (issue 56): no ``JPY_SESSION_NAME``, so the notebook is found by
papermill's injected paths or in the kernel's working folder (the notebook's), never guessed between several."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder.builders import public_graded

PROBE = ("from autograder.builders.public_graded import notebook_json\n"
         "nb, where = notebook_json(globals())\n"
         "print('FOUND', where, len(nb['cells']) if nb else None, (nb or {}).get('metadata', {}).get('tag'))")


def _nb(tag: str, *sources: str) -> dict:
    cells = [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "execution_count": None, "outputs": [],
              "source": s} for i, s in enumerate(sources)]
    return {"cells": cells, "metadata": {"tag": tag, "kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                     "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def _execute(folder: Path, name: str) -> str:
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.reads(json.dumps(json.loads((folder / name).read_text())), as_version=4)
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}}).execute()
    return "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))


@pytest.fixture
def no_session(monkeypatch):
    for k in ("JPY_SESSION_NAME", "PAPERMILL_INPUT_PATH", "PAPERMILL_OUTPUT_PATH"):
        monkeypatch.delenv(k, raising=False)


def test_nbclient_reads_the_only_notebook_of_its_folder(tmp_path: Path, no_session) -> None:
    (tmp_path / "work.ipynb").write_text(json.dumps(_nb("work", "x = 1", PROBE)))
    assert "FOUND file 2 work" in _execute(tmp_path, "work.ipynb")


def test_nbclient_picks_the_notebook_holding_what_the_session_defined(tmp_path: Path, no_session) -> None:
    mine = "def forward(x):\n    return x * 2"
    (tmp_path / "mine.ipynb").write_text(json.dumps(_nb("mine", mine, PROBE)))
    (tmp_path / "other.ipynb").write_text(json.dumps(_nb("other", "def forward(x):\n    return x", PROBE)))
    assert "FOUND file 2 mine" in _execute(tmp_path, "mine.ipynb")


def test_several_notebooks_nothing_tells_apart_is_not_guessed(tmp_path: Path, no_session, monkeypatch) -> None:
    for tag in ("a", "b"):
        (tmp_path / f"{tag}.ipynb").write_text(json.dumps(_nb(tag, "x = 1")))
    monkeypatch.chdir(tmp_path)
    assert public_graded.notebook_json({"x": 1}) == (None, "")


def test_papermills_injected_paths_name_the_notebook(tmp_path: Path, no_session, monkeypatch) -> None:
    (tmp_path / "in.ipynb").write_text(json.dumps(_nb("input", "x = 1")))
    (tmp_path / "a.ipynb").write_text(json.dumps(_nb("a", "x = 1")))
    (tmp_path / "b.ipynb").write_text(json.dumps(_nb("b", "x = 1")))
    monkeypatch.chdir(tmp_path)
    nb, where = public_graded.notebook_json({"PAPERMILL_INPUT_PATH": str(tmp_path / "in.ipynb"),
                                             "PAPERMILL_OUTPUT_PATH": str(tmp_path / "a.ipynb")})
    assert where == "file" and nb["metadata"]["tag"] == "input"
