"""A Dask worker's admission learns what grading can import from its run's own zygotes (issue 38).

Each admission used to import everything grading needs twice: once in a fresh process of its own
(``fingerprint.ImportCheck``) and once in the run's zygotes, which import the very same libraries in
fresh processes set up as workers are. The zygotes now say which of their modules failed ("ready"
events, ``ZygoteLauncher.imports``), and the admission reads that: a worker that cannot import one is
refused in the import check's own words, a zygote that dies or hangs while importing refuses the worker
(never admits it), and the separate check runs only where there is no zygote (spawned workers).

These run :meth:`GradingPlugin.examine` in this process with real runs (no Dask cluster): a library is
broken for the processes a run starts by a ``sitecustomize`` on their path (``sys.executable`` is a
wrapper that puts it there), never for this process.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from autograder.scaleout import cluster_worker as _cluster_worker
from autograder.workers import fingerprint as _fingerprint

REFUSED = "it cannot import what grading needs: "


def _breaking(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, module: str, how: str) -> Path:
    """Processes started from now on (``sys.executable``) cannot import ``module``: importing it raises
    (``how="raise"``), kills the importer (``"die"``) or hangs it (``"hang"``, its pid in ``hang.pid``)."""
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(f'''
import os, sys, time

class _Broken:
    def find_spec(self, name, path=None, target=None):
        if name != {module!r}:
            return None
        if {how!r} == "die":
            os._exit(9)
        if {how!r} == "hang":
            with open({str(shim / "hang.pid")!r}, "w") as fh:
                fh.write(str(os.getpid()))
            time.sleep(3600)
        raise ImportError("{module} is broken here")

sys.meta_path.insert(0, _Broken())
''')
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{shim}:$PYTHONPATH" exec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(wrapper))
    return shim


def _running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0] != b"Z"
    except OSError:
        return False


def _plugin(**run_kwargs: object) -> _cluster_worker.GradingPlugin:
    return _cluster_worker.GradingPlugin({"device": "cpu", **run_kwargs}, "tapetrace-run-x", _fingerprint.fingerprint())


class _Checks:
    """Stands in for :class:`ImportCheck`: counts the checks started (each a process), then runs the real one."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.started = 0
        real = _fingerprint.ImportCheck

        def start(*args: object, **kwargs: object) -> _fingerprint.ImportCheck:
            self.started += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(_fingerprint, "ImportCheck", start)


def test_an_admitted_worker_starts_no_import_check(monkeypatch):
    checks = _Checks(monkeypatch)
    plugin = _plugin()
    try:
        info = plugin.examine()
        assert plugin.verdict == "", plugin.verdict
        assert info["launcher"] == "zygote" and info["isolation"]["level"]
        assert checks.started == 0  # its zygotes said everything imported
    finally:
        plugin.teardown(None)


def test_a_library_that_does_not_import_refuses_the_worker_in_the_import_checks_words(monkeypatch, tmp_path):
    _breaking(monkeypatch, tmp_path, "optax", "raise")
    words = REFUSED + "; ".join(_fingerprint.ImportCheck(("optax",)).result())  # what the separate check says
    assert words == REFUSED + "optax: ImportError: optax is broken here"
    checks = _Checks(monkeypatch)
    plugin = _plugin()
    assert plugin.examine() == {}
    # the separate check's words, then where the grader's own libraries come from when workers cannot see them
    assert plugin.verdict.startswith(words) and plugin.run is None
    assert plugin.verdict == words or "would not import" in plugin.verdict or "will not import" in plugin.verdict
    assert checks.started == 0


def test_without_zygotes_the_separate_import_check_still_decides(monkeypatch, tmp_path):
    _breaking(monkeypatch, tmp_path, "optax", "raise")
    checks = _Checks(monkeypatch)
    plugin = _plugin(launcher="spawn")
    assert plugin.examine() == {}
    assert plugin.verdict.startswith(REFUSED + "optax: ImportError: optax is broken here")
    assert checks.started == 1


def test_a_zygote_that_dies_while_importing_refuses_the_worker(monkeypatch, tmp_path):
    # torch: only the full zygote imports it (the JAX one, which the run waits for, is ready and well)
    _breaking(monkeypatch, tmp_path, "torch", "die")
    checks = _Checks(monkeypatch)
    plugin = _plugin(launcher="zygote")
    assert plugin.examine() == {}
    assert plugin.verdict == REFUSED + "the zygote died while importing" and plugin.run is None
    assert checks.started == 0


def test_a_zygote_that_hangs_while_importing_refuses_the_worker_and_is_stopped(monkeypatch, tmp_path):
    shim = _breaking(monkeypatch, tmp_path, "torch", "hang")
    monkeypatch.setattr(_fingerprint, "IMPORT_CHECK_TIMEOUT", 2.0)  # the hang guard; the hang never ends
    checks = _Checks(monkeypatch)
    plugin = _plugin(launcher="zygote")
    assert plugin.examine() == {}
    assert plugin.verdict == REFUSED + "the zygote did not finish importing within 2 s"
    assert checks.started == 0
    pid = int((shim / "hang.pid").read_text())
    deadline = time.monotonic() + 60
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _running(pid):
        os.kill(pid, signal.SIGKILL)
        pytest.fail("the hung zygote outlived its run")
