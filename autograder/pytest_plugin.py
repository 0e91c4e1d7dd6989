"""Hidden suites as pytest: ``pytest --tapetrace-submission=PATH [autograder/hidden] -k ex05`` (with ``=``).

Every check of every exercise's hidden suite (the public checks included) is a
pytest item with node id ``exNN_name::check_name``. Items run through the
grading engine, as ``tapetrace grade`` runs them: one
:class:`~autograder.engine.run.GradingRun` per pytest session (its workers, sandbox,
reference bank, seed and device) and one
:class:`~autograder.engine.exercise.ExerciseGrading` per exercise, opened on the
exercise's first item and closed after its last one (or when the session ends).
The verdict (``check.fn(ctx)``) runs in pytest's own process, so ``--pdb`` stops
in the check that failed and ``-x``, ``--lf`` and ``-k`` work as usual.

A failed item shows the check's catalogued message, its code and its points
(the whole traceback with ``--tb=long``). A check that cannot run (the exercise
is missing, refused or does not load, the timeout budget is spent, the device
lacks what it needs) fails with its message: it never skips. At the end a
points summary per exercise and the total.

Loaded as the ``tapetrace`` pytest11 entry point or with
``-p autograder.pytest_plugin``; without ``--tapetrace-submission`` it does
nothing at all (no engine import, no collection), so other pytest runs are
untouched. Options mirror ``tapetrace grade``: ``--tapetrace-seed``,
``--tapetrace-device``, ``--tapetrace-timeout``, ``--tapetrace-lang``,
``--tapetrace-public-only``, ``--tapetrace-sandbox-skip``.
"""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from autograder.core.text import terminal  # imports nothing else (the plugin loads before any refusal)

if TYPE_CHECKING:
    from autograder.core.records import ExerciseRow, ResultRow, TestRow
    from autograder.core.suite import Check
    from autograder.engine.assembly import RowAssembly
    from autograder.engine.exercise import ExerciseGrading
    from autograder.engine.run import GradingRun

OPTION = "tapetrace_submission"
_HIDDEN = Path(__file__).resolve().parent / "hidden"  # what _paths.HIDDEN names, without importing it early


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tapetrace", "tapetrace: hidden suites as pytest (see autograder/pytest_plugin.py)")
    group.addoption("--tapetrace-submission", dest=OPTION, metavar="PATH", default=None,
                    help="grade this submission (folder, .py, .ipynb or .zip): one test per hidden check; "
                         "without it this plugin does nothing")
    group.addoption("--tapetrace-seed", dest="tapetrace_seed", type=int, default=None, metavar="N",
                    help="seed of the checks' inputs (default: random, shown in the header)")
    group.addoption("--tapetrace-device", dest="tapetrace_device", default="auto",
                    choices=["auto", "cpu", "cuda", "tpu"], help="as `tapetrace grade --device` (default auto)")
    group.addoption("--tapetrace-timeout", dest="tapetrace_timeout", type=float, default=30.0, metavar="SECONDS",
                    help="limit for loading an exercise and for each check's call (default 30)")
    group.addoption("--tapetrace-lang", dest="tapetrace_lang", default="en", choices=["en", "es"],
                    help="language of the messages (default en)")
    group.addoption("--tapetrace-public-only", dest="tapetrace_public_only", action="store_true",
                    help="collect only the public checks")
    group.addoption("--tapetrace-sandbox-skip", dest="tapetrace_sandbox_skip", default="", metavar="LAYER,...",
                    help="sandbox layers not to try, as `tapetrace grade --sandbox-skip`")


def _active(config: pytest.Config) -> bool:
    return bool(config.getoption(OPTION, default=None))


SPACE_FORM = ("--tapetrace-submission PATH: write --tapetrace-submission=PATH (with `=`). pytest takes a separate "
              "PATH for a test path, so it reads the configuration inside the submission (pytest.ini, conftest.py, "
              "pythonpath) before any plugin runs; a submission's configuration must never reach pytest's process")


def _space_form(args: list[str]) -> bool:
    """Whether ``--tapetrace-submission`` was given as its own argument, its value the next one."""
    return any(a == "--tapetrace-submission" for a in args)


def _zone(path: str) -> str:
    """What pytest must read nothing from: the submission (its folder, or the file itself)."""
    return os.path.realpath(path)


def _inside(path: Any, zone: str) -> bool:
    try:
        full = os.path.realpath(str(path))
    except (OSError, ValueError):
        return False
    return full == zone or full.startswith(zone.rstrip(os.sep) + os.sep)


def _read_from_submission(config: pytest.Config, path: str) -> str | None:
    """What pytest took from inside the submission so far (its ini file, its folder as the working one,
    a ``pythonpath`` entry, a module or plugin imported from there), or None."""
    zone = _zone(path)
    for arg in getattr(config.known_args_namespace, "file_or_dir", None) or []:
        if _inside(arg.split("::")[0], zone):
            return f"a path to collect ({arg})"
    if config.inipath is not None and _inside(config.inipath, zone):
        return f"its configuration file {config.inipath.name}"
    if _inside(config.invocation_params.dir, zone):
        return "the working folder (pytest would read its conftest.py): run pytest from outside the submission"
    for entry in sys.path:
        if entry and _inside(entry, zone):
            return f"an import path ({entry})"
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        if origin and _inside(origin, zone):
            return f"the module {name}"
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """The first hook a plugin gets, before any conftest.py is imported: refuses what would let pytest read
    the submission (the space form of the option, an ini file, working folder or import path inside it).

    pytest has already parsed its ini file by then (it does before loading plugins); what it imports
    next (conftest.py files, and whatever collection would import) is refused here.
    """
    path = early_config.known_args_namespace.__dict__.get(OPTION)
    if not path:
        return
    if _space_form([*early_config.invocation_params.args, *args]):
        raise pytest.UsageError(SPACE_FORM)
    found = _read_from_submission(early_config, str(path))
    if found:
        raise pytest.UsageError(f"--tapetrace-submission {terminal(path)}: pytest would read the submission's files ({found}); "
                                "nothing of a submission may run in pytest's process")


@pytest.hookimpl(tryfirst=True)  # before the cache plugin settles where its folder is
def pytest_configure(config: pytest.Config) -> None:
    if not _active(config):
        return
    path = config.getoption(OPTION)
    if not Path(path).exists():
        raise pytest.UsageError(f"--tapetrace-submission {terminal(path)}: no such file or directory")
    if _space_form(list(config.invocation_params.args)):
        raise pytest.UsageError(SPACE_FORM)
    found = _read_from_submission(config, str(path))
    if found:
        raise pytest.UsageError(f"--tapetrace-submission {terminal(path)}: pytest read the submission's files ({found}); "
                                "nothing of a submission may run in pytest's process")
    if config.getoption("tapetrace_timeout") <= 0:
        raise pytest.UsageError("--tapetrace-timeout must be positive")
    if config.args_source != pytest.Config.ArgsSource.ARGS:  # no path given: the hidden suites
        config.args = [str(_HIDDEN)]
    seed = config.getoption("tapetrace_seed")
    config.pluginmanager.register(TapetraceSession(config, str(path), secrets.randbelow(2**31) if seed is None
                                                   else seed), "tapetrace-session")


def _session(config: pytest.Config) -> TapetraceSession:
    return config.pluginmanager.get_plugin("tapetrace-session")


def _exercise_of(file_path: Path) -> str | None:
    """The exercise a hidden-suite file grades, or None for any other file."""
    from autograder.core.paths import EXERCISES

    if file_path.suffix != ".py" or file_path.parent.resolve() != _HIDDEN:
        return None
    return file_path.stem if file_path.stem in EXERCISES else None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not _active(parent.config):
        return None
    exercise = _exercise_of(file_path)
    if exercise is None:
        return None
    return HiddenSuite.from_parent(parent, path=file_path, nodeid=exercise, exercise=exercise)


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A hidden-suite file named on the command line is no test module (its items come from :class:`HiddenSuite`)."""
    if _active(parent.config) and _exercise_of(module_path) is not None:
        return _NoTests.from_parent(parent, path=module_path)
    return None


# a TPU's chip is leased to one worker at a time by `tapetrace grade`'s check loop (autograder/engine/chip.py)
TPU_REFUSED = ("--tapetrace-device tpu: the pytest entry grades one check per test item, and the TPU's chip is leased "
               "to one worker at a time by `tapetrace grade`'s own loop; grade with `tapetrace grade --device tpu`, "
               "or here with --tapetrace-device auto or cpu (JAX on the CPU)")

class _NoTests(pytest.File):
    def collect(self) -> list[pytest.Item]:
        return []


class HiddenSuite(pytest.File):
    """One exercise's hidden suite (``autograder/hidden/exNN_name.py``): one :class:`CheckItem` per check."""

    def __init__(self, *, exercise: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.exercise = exercise

    def collect(self) -> list[CheckItem]:
        from autograder.hidden import load_suite

        public_only = self.config.getoption("tapetrace_public_only")
        return [CheckItem.from_parent(self, name=c.name, check=c) for c in load_suite(self.exercise).checks
                if not public_only or not c.hidden]


class CheckNotRun(Exception):
    """The check could not run (exercise missing/refused/not loading, budget spent, device): a failure."""


class CheckItem(pytest.Item):
    """One check of a hidden suite, graded through the session's engine; its verdict runs here."""

    def __init__(self, *, check: Check, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check = check
        self.exercise: str = self.parent.exercise
        self.test: TestRow | None = None  # its test row (docs/grading-contract.md, "Row schema") once run

    def runtest(self) -> None:
        self.test = None
        try:
            self._runtest()
        finally:
            if self.test is not None:
                self.user_properties += [("code", self.test["code"]), ("score", self.test["score"]),
                                         ("max_score", self.test["max_score"])]
                _session(self.config).done(self, self.test)

    def _runtest(self) -> None:
        grading, early = _session(self.config).exercise(self.exercise)
        if early is not None:
            self.test = next(t for t in early["tests"] if t["name"] == self.check.name)
            raise CheckNotRun(self.test["message"])
        skip = grading.refusal(self.check)
        if skip is not None:
            self.test = grading.record(self.check, None, skip)
            raise CheckNotRun(self.test["message"])
        ctx = grading.ctx(self.check)
        try:
            self.check.fn(ctx)  # the verdict, in this frame: --pdb lands in the check
        except Exception as err:
            self.test = grading.record(self.check, err)
            raise
        self.test = grading.record(self.check, None)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        test = self.test
        if test is None or self.config.getoption("tbstyle", "auto") == "long":
            return super().repr_failure(excinfo, style)
        return (f"[{test['code']}] {test['message']}\n"
                f"{self.nodeid}: {test['score']:g} of {test['max_score']:g} points")

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.check.fn.__code__.co_firstlineno - 1, f"{self.exercise}::{self.check.name}"


class TapetraceSession:
    """The session's grading: one run, one submission, one exercise session at a time per exercise.

    Its submission's row is assembled as ``tapetrace grade`` assembles one (:class:`RowAssembly`): each
    exercise's row is recorded when its last selected item has run, and the row is finished when the session
    ends (:attr:`row`: the exercises selected and reached). One attempt only: the items are reported as they
    run, so no exercise is graded again alone (docs/grading-contract.md, "Assembling a submission's row").
    """

    def __init__(self, config: pytest.Config, path: str, seed: int) -> None:
        self.config = config
        self.path = path
        self.seed = seed
        self._run: GradingRun | None = None
        self._sub: Any = None
        self._open: dict[str, ExerciseGrading] = {}
        self._early: dict[str, ExerciseRow] = {}
        self._last: dict[str, str] = {}  # exercise -> node id of its last selected item
        self.results: dict[str, list[TestRow]] = {}  # exercise -> results of the items run
        self.statuses: dict[str, str] = {}
        self._rows: RowAssembly | None = None  # the submission's row, assembled (made with the run)
        self._recorded: set[str] = set()
        self.row: ResultRow | None = None  # the submission's finished row, once the session ended

    # ------------------------------------------------------------------ hooks
    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        from autograder.workers.environment import start_notes  # libraries the workers would not import

        return [f"tapetrace: grading {terminal(self.path)} (seed {self.seed}, "
                f"device {config.getoption('tapetrace_device')}, "
                f"lang {config.getoption('tapetrace_lang')})",
                *(f"tapetrace: warning: {line}" for line in start_notes())]

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._last = {item.exercise: item.nodeid for item in session.items if isinstance(item, CheckItem)}

    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        if isinstance(item, CheckItem) and self._last.get(item.exercise) == item.nodeid:
            self._close(item.exercise)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self._run is None:
            return
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            self._run.cancel()
        for exercise in [*self._open, *self._early]:
            self._close(exercise)
        if self._rows is not None:
            self.row = next(iter(self._rows.close(partial=True)), None)
        self._run.close()
        self._run = None

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.results:
            return
        tr = terminalreporter
        tr.section("tapetrace points")
        total = got = 0.0
        width = max(len(ex) for ex in self.results)
        for exercise, tests in self.results.items():
            score = sum(t["score"] for t in tests)
            max_score = sum(t["max_score"] for t in tests)
            failed = sum(1 for t in tests if not t["passed"])
            got, total = got + score, total + max_score
            status = self.statuses.get(exercise, "graded")
            extra = f", {status}" if status != "graded" else ""
            tr.write_line(f"{exercise:<{width}}  {score:g} / {max_score:g} points "
                          f"({len(tests) - failed} of {len(tests)} checks pass{extra})")
        tr.write_line(f"{'total':<{width}}  {round(got, 6):g} / {round(total, 6):g} points")

    # ------------------------------------------------------------------ grading
    def grading_run(self) -> GradingRun:
        """The session's run (made on the first check: collecting imports no framework)."""
        if self._run is None:
            from autograder.core import device as _device
            from autograder.engine import run as _engine
            from autograder.engine.reading import read_one
            from autograder.submissions import loadguard as _loadguard

            opt = self.config.getoption
            skip = [x for x in opt("tapetrace_sandbox_skip").split(",") if x]
            try:
                run = _engine.GradingRun(device=opt("tapetrace_device"), timeout=opt("tapetrace_timeout"),
                                         seed=self.seed, lang=opt("tapetrace_lang"),
                                         public_only=opt("tapetrace_public_only"), sandbox_skip=skip,
                                         exercises=list(self._last) or None)  # the exercises selected
            except _device.DeviceError as err:
                pytest.exit(f"tapetrace: {err}", returncode=pytest.ExitCode.USAGE_ERROR)
            if run.chip is not None:  # the chip's turns are `tapetrace grade`'s check loop's (engine.chip)
                run.close()
                pytest.exit(f"tapetrace: {TPU_REFUSED}", returncode=pytest.ExitCode.USAGE_ERROR)
            with _loadguard.Reader(_loadguard.read_seconds(run.timeout)) as reader:  # as `tapetrace grade` reads
                self._sub = read_one(reader, self.path)
            run.hide(_engine.hide_places([self.path], run.tmp))  # its classmates' folders too
            if run.sandbox and not run.isolation:
                run.measure_isolation()
            from autograder.engine.assembly import RowAssembly

            self._rows = RowAssembly([self.path], list(self._last) or None, seed=self.seed, facts=run.facts)
            self._run = run
        return self._run

    def exercise(self, exercise: str) -> tuple[ExerciseGrading | None, ExerciseRow | None]:
        """The exercise's open session, opening it on first use: ``(session, None)``, or
        ``(None, result)`` when the exercise cannot be graded (that result scores every check 0)."""
        if exercise in self._early:
            return None, self._early[exercise]
        if exercise in self._open:
            return self._open[exercise], None
        from autograder.engine.exercise import ExerciseGrading

        run = self.grading_run()
        if isinstance(self._sub, Exception):  # unreadable, or the reading child did not start: one rule
            from autograder.engine.rows import early_row

            early: ExerciseRow | None = early_row(exercise, self._sub, lang=run.lang, public_only=run.public_only)
        else:
            grading = ExerciseGrading(run.host(exercise), self._sub, exercise)
            try:
                early = grading.open()
            except Exception as err:  # noqa: BLE001 - as `tapetrace grade`: never lost, never a pass
                early = run.graders_row(exercise, "grader_error", f"internal error: {type(err).__name__}: {err}")
            if early is None:
                self._open[exercise] = grading
                return grading, None
        self._early[exercise] = early
        self.statuses[exercise] = early["status"]
        return None, early

    def done(self, item: CheckItem, test: TestRow) -> None:
        """Keeps one item's result for the points summary."""
        self.results.setdefault(item.exercise, []).append(test)

    def _close(self, exercise: str) -> None:
        """Ends an exercise (its last selected item ran, or the session ends): its row is recorded."""
        grading = self._open.pop(exercise, None)
        row = self._early.get(exercise)
        if grading is not None:
            grading.close()
            row = grading.summary()  # the checks run (selected and reached)
            if grading.forged:  # found after some items passed: the points summary counts none of them
                self.results[exercise] = list(row["tests"])
        if row is not None and self._rows is not None and exercise not in self._recorded:
            self._recorded.add(exercise)
            self._rows.record(0, exercise, row)


class _EntryPoint:
    """The ``tapetrace`` pytest11 entry point: registers this module, unless ``-p autograder.pytest_plugin``
    already did (pluggy refuses one module under two names)."""

    @staticmethod
    def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
        import sys

        module = sys.modules[__name__]
        if pluginmanager.is_registered(module) or pluginmanager.is_blocked(__name__):
            return
        pluginmanager.register(module, __name__)


ENTRY_POINT = _EntryPoint()
