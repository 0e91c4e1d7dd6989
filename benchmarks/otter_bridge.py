"""A minimal otter autograder that hands the notebook to the tapetrace engine (benchmarks only).

``tapetrace build`` makes the project's real otter zip; when it is not there this
module builds a stand-in with the same shape, so ``otter run`` can be timed and its
``results.json`` merged into reports: one exception-format test file per exercise
(``name = "<exercise>"``), one test case per check named after it, all of them
reading one ``tapetrace grade`` of the submitted notebook (run once, cached next
to it). It also writes filled notebooks from ``solutions/`` (one heading + one
code cell per exercise), which both graders accept.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.hidden import load_suite  # noqa: E402

TEST_FILE = '''\
OK_FORMAT = False

import glob
import json
import os
import subprocess
import sys

from otter.test_files import test_case

name = {exercise!r}


def _results():
    cache = os.path.abspath(".tapetrace-otter.json")
    if not os.path.exists(cache):
        nb = sorted(glob.glob("*.ipynb"))[0]
        cmd = [sys.executable, "-m", "autograder.cli", "grade", nb, "--device", {device!r}, "--json", cache,
               "--quiet", "--only", {only!r}] + ({seed_args!r})
        subprocess.run(cmd, check=False, stdin=subprocess.DEVNULL)
    with open(cache) as fh:
        return json.load(fh)


def _check(check):
    ex = _results()["exercises"][name]
    test = next(t for t in ex["tests"] if t["name"] == check)
    assert test["passed"], test["message"]

'''

CASE = '''
@test_case(name={check!r}, points={points!r}, hidden={hidden!r})
def {func}(env):
    _check({check!r})
'''


def make_autograder(out_dir: Path, exercises: list[str], device: str = "cpu", seed: int | None = 1) -> Path:
    """Writes ``tests/<exercise>.py`` and an otter autograder zip into ``out_dir``; returns the zip."""
    tests = out_dir / "tests"
    tests.mkdir(parents=True, exist_ok=True)
    seed_args = ["--seed", str(seed)] if seed is not None else []
    for ex in exercises:
        text = TEST_FILE.format(exercise=ex, device=device, only=",".join(exercises), seed_args=seed_args)
        for c in load_suite(ex).checks:
            text += CASE.format(check=c.name, points=c.points, hidden=c.hidden, func=f"test_{c.name}")
        (tests / f"{ex}.py").write_text(text)
    (out_dir / "otter_config.json").write_text(json.dumps({"show_stdout": False}))
    zpath = out_dir / "autograder.zip"
    subprocess.run([str(Path(sys.executable).parent / "otter"), "generate", "-t", str(tests), "-o", str(zpath),
                    "--no-requirements", "--no-environment", "-c", str(out_dir / "otter_config.json")],
                   check=True, cwd=out_dir, capture_output=True)
    with zipfile.ZipFile(zpath) as zf:
        assert any(n.startswith("tests/") for n in zf.namelist())
    return zpath


def make_notebook(path: Path, sources: dict[str, str]) -> Path:
    """A filled notebook: per exercise a Markdown heading naming it and one code cell."""
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# tapetrace exercises (filled)"]}]
    for ex, src in sources.items():
        cells.append({"cell_type": "markdown", "metadata": {}, "source": [f"## {ex}"]})
        cells.append({"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                      "source": src.splitlines(keepends=True)})
    nb = {"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                      "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb, indent=1))
    return path


def otter_run(zpath: Path, notebook: Path, out_dir: Path, timeout: float = 600) -> dict:
    """Runs ``otter run`` on one notebook; returns its results.json."""
    out_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(Path(sys.executable).parent / "otter"), "run", "--no-logo", "-a", str(zpath),
                    "-o", str(out_dir), str(notebook)], check=True, capture_output=True, timeout=timeout)
    return json.loads((out_dir / "results.json").read_text())


if __name__ == "__main__":  # pragma: no cover - manual use
    import tempfile

    from autograder.core.paths import SOLUTIONS

    exs = sys.argv[1:] or ["ex01_torch_mlp"]
    with tempfile.TemporaryDirectory() as tmp:
        z = make_autograder(Path(tmp) / "ag", exs)
        nb = make_notebook(Path(tmp) / "filled.ipynb", {e: (SOLUTIONS / f"{e}.py").read_text() for e in exs})
        print(textwrap.indent(json.dumps(otter_run(z, nb, Path(tmp) / "out"), indent=1)[:3000], "  "))
