"""Building the otter-grader 7 autograder zip (``tapetrace build``): ``otter generate``'s output, then adjusted.

What the zip holds:

- ``tests/<ex>.py``: one exception-format test file per exercise (``OK_FORMAT = False``), one
  ``test_case`` per check with that check's points (hidden unless it is one of the public checks).
  They hold no test code and no expected values, only a call to
  :func:`autograder.builders.otter.otter_check`, so nothing of the hidden tests can show in what
  students see.
- ``files/autograder/``: the engine, hidden suites, probes, messages and data, ``otter_plugin.py``
  and ``_otter_settings.json`` (timeout, device, jobs, exercises, seed salt, required isolation).
  A package directory: a top-level ``.py`` in ``files/`` would make otter refuse ``.py``
  submissions ("more than one Python file").
- ``files/solutions/``: the reference solutions (never shipped to students).
- ``otter_config.json`` (naming the plugin), ``environment.yml`` (the requirements),
  ``run_autograder``, ``run_otter.py`` (puts ``files/`` on ``sys.path`` so the plugin imports on
  Gradescope and in ``otter grade``'s image), ``setup.sh`` (lets an unprivileged user read the
  image's Python under ``/root``, so student workers can drop to one).

How the zip grades: :mod:`autograder.builders.otter`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

from autograder.builders.otter import PLUGIN, SETTINGS

ZIP_NAME = "tapetrace-autograder.zip"
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
TEST_FILE = "otter_test.py"  # autograder/builders/templates/: the file part, then a case part per check


def test_file_source(exercise: str, checks: list[tuple[str, float, bool]]) -> str:
    """One exercise's otter test file: a case per ``(check name, points, hidden)``.

    Public checks (the ones students run in their notebook) are public cases, so otter's "Public
    Tests" summary reports them truthfully right away; with only hidden cases it would say "All test
    cases passed!" for every exercise, whatever the scores.
    """
    from autograder.builders import templates

    text = templates.render(TEST_FILE, "file", exercise=templates.string(exercise))
    for name, points, hidden in checks:
        text += "\n\n" + templates.render(TEST_FILE, "case", exercise=templates.string(exercise),
                                          check=templates.string(name), points=repr(float(points)),
                                          hidden=repr(bool(hidden)), func=f"check_{name}")
    return text


def requirements(gpu_torch: bool = False) -> str:
    """requirements.txt for the grading image: the versions this build was made and tested with.

    Args:
        gpu_torch: PyPI's default Linux torch (with its CUDA libraries, ~3 GB of wheels) instead of the
            CPU-only ``+cpu`` build from PyTorch's CPU wheel index. Neither ``otter grade`` nor
            Gradescope gives a container a GPU: only a grader that passes one in needs it.
    """
    from importlib.metadata import PackageNotFoundError, version

    def ver(pkg: str) -> str | None:
        try:
            return version(pkg).split("+")[0]
        except PackageNotFoundError:
            return None

    lines = ["# Installed into the grading image (Gradescope / otter grade) by `tapetrace build`."]
    torch = ver("torch") or "2.13.0"
    if gpu_torch:
        lines += ["# --gpu-torch: PyPI's torch, with its CUDA libraries.", f"torch=={torch}"]
    else:
        lines += ["# a CPU-only torch from PyTorch's CPU wheel index (no CUDA libraries; --gpu-torch for those).",
                  f"--extra-index-url {CPU_TORCH_INDEX}", f"torch=={torch}+cpu"]
    # the engine's own needs, then what Colab preinstalls and graded notebooks may import (docs/grading-contract.md)
    for pkg in ("numpy", "jax", "jaxlib", "flax", "optax", "ipython", "tqdm", "pandas", "matplotlib",
                "scikit-learn", "seaborn"):
        v = ver(pkg)
        lines.append(f"{pkg}=={v}" if v else pkg)
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def _chdir(path: Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def _copy_engine(target: Path, exercises: list[str]) -> None:
    """The engine package without caches, with only the given exercises' packages and hidden suites."""
    src = Path(__file__).resolve().parents[1]  # autograder/ (this module is autograder/builders/otter_zip.py)
    from autograder.core.registry import EXERCISES

    known = set(EXERCISES)

    def wanted(rel: Path) -> bool:
        if rel.parts[0] == "exercises" and len(rel.parts) > 2:  # exercises/<exercise>/...
            return rel.parts[1] in exercises
        if rel.parts[0] == "hidden":  # hidden/<exercise>.py
            return rel.stem not in known or rel.stem in exercises
        if rel.parts[:3] == ("builders", "templates", "new"):  # the skeleton `tapetrace new` writes: nothing here runs it
            return False
        return True

    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if "__pycache__" in rel.parts or not path.is_file():
            continue
        if path.suffix not in (".py", ".npz", ".json") or not wanted(rel):
            continue
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest)


def build_zip(out: Path, exercises: list[str], *, timeout: float = 30.0, device: str = "auto", jobs: int = 1,
              lang: str = "en", seed: int | None = None, gpu_torch: bool = False,
              python_version: str | None = None, show_hidden: bool = True,
              require_isolation: str = "container") -> Path:
    """Writes the otter autograder zip.

    Args:
        out: the zip's path.
        exercises: the exercises it grades (each needs a hidden suite and a solution).
        timeout: the engine's per-call and load timeout (``tapetrace grade --timeout``).
        device: ``auto`` (CUDA / TPU when the grading machine has one), ``cpu``, ``cuda`` or ``tpu``.
        jobs: exercises graded in parallel.
        lang: language of the messages.
        seed: a fixed grading seed; default: derived from each submission's bytes and a per-build salt.
        gpu_torch: see :func:`requirements` (default: a CPU-only torch).
        python_version: Python of the grading image (default: the one running this build).
        show_hidden: let students see each exercise's results on Gradescope once grades are published.
        require_isolation: the weakest isolation of student code the zip grades under (``full``,
            ``container`` — Docker's default privileges — or ``minimal``); below it every case fails
            with "not graded" and the log says why.

    Returns:
        ``out``.
    """
    import secrets

    import otter.generate

    from autograder.core.paths import SOLUTIONS
    from autograder.hidden import load_suite

    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    settings = {
        "exercises": list(exercises), "timeout": float(timeout), "device": device, "jobs": int(jobs),
        "lang": lang, "seed": seed, "salt": secrets.token_hex(16),
        "total_timeout": max(900.0, float(timeout) * (8 * len(exercises) + 10) + 300.0),
        "require_isolation": require_isolation,
    }
    with tempfile.TemporaryDirectory(prefix="tapetrace-build-") as tmp:
        stage = Path(tmp)
        _copy_engine(stage / "autograder", exercises)
        (stage / "autograder" / SETTINGS).write_text(json.dumps(settings, indent=2) + "\n")
        (stage / "solutions").mkdir()
        for ex in exercises:
            shutil.copy2(SOLUTIONS / f"{ex}.py", stage / "solutions" / f"{ex}.py")
        (stage / "tests").mkdir()
        for ex in exercises:
            checks = [(c.name, c.points, c.hidden) for c in load_suite(ex).checks]
            (stage / "tests" / f"{ex}.py").write_text(test_file_source(ex, checks))
        (stage / "requirements.txt").write_text(requirements(gpu_torch))
        config = {"lang": "python", "show_hidden": bool(show_hidden), "show_stdout": False,
                  "print_summary": True, "plugins": [PLUGIN]}
        (stage / "otter_config.json").write_text(json.dumps(config, indent=2) + "\n")
        with _chdir(stage):
            otter.generate.main(tests_dir="tests", output_path=str(out), config="otter_config.json",
                                requirements="requirements.txt", no_environment=True,
                                files=["autograder", "solutions"],
                                python_version=python_version or f"{sys.version_info[0]}.{sys.version_info[1]}")
    _adjust_zip(out)
    return out


# autograder/builders/templates/: the zip's run_otter.py; appended to setup.sh
RUN_OTTER = "run_otter.py"
SETUP_TAIL = "otter_setup.sh"
# otter 7's setup.sh installs LaTeX and pandoc when `cat otter_config.json | jq -e '[.pdf, .token] | any'`
# succeeds, which it does in `otter grade`'s image where the file is added only after setup.sh (jq
# exits 0 on empty input), and a browser for PDFs always: the zip refuses PDFs (run_otter.py), so
# neither is installed.
PDF_TOOLS = re.compile(r"^# install PDF generation dependencies if enabled\nif .*?\n^fi\n", re.M | re.S)
PDF_BROWSER = re.compile(r"^mamba run -n \S+ bash -c \"playwright install-deps && playwright install chromium\"\n",
                         re.M)
NO_PDF_TOOLS = ("# tapetrace: no PDF tools (LaTeX, pandoc, a browser): this autograder refuses PDFs "
                "(see run_otter.py)\n")


def setup_script(otter_setup: str) -> str:
    """The zip's ``setup.sh``: otter's without the PDF tools, then ``otter_setup.sh``.

    Raises:
        RuntimeError: otter's script does not have the shape this build knows (another otter version).
    """
    from autograder.builders import templates

    text, tools = PDF_TOOLS.subn(NO_PDF_TOOLS, otter_setup)
    text, browser = PDF_BROWSER.subn("", text)
    if (tools, browser) != (1, 1):
        raise RuntimeError("otter's setup.sh has no PDF block or browser install where otter-grader 7.0.0 has them: "
                           "update autograder.builders.otter_zip.PDF_TOOLS / PDF_BROWSER for this otter version")
    return text.rstrip("\n") + "\n\n" + templates.path(SETUP_TAIL).read_text(encoding="utf-8")


def _adjust_zip(path: Path) -> None:
    """The zip's ``run_otter.py`` becomes the template's; ``setup.sh`` becomes :func:`setup_script`'s."""
    from autograder.builders import templates

    run_otter = templates.path(RUN_OTTER).read_bytes()
    with zipfile.ZipFile(path) as zf:
        members = [(info, zf.read(info)) for info in zf.infolist()]
    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for info, data in members:
            if info.filename == "run_otter.py":
                data = run_otter
            elif info.filename == "setup.sh":
                data = setup_script(data.decode("utf-8")).encode("utf-8")
            zf.writestr(info, data)
    os.replace(tmp, path)

