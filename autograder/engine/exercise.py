"""Grading one (submission, exercise): the student's worker, each hidden check's verdict on what the
student's and the reference's probes measured, retries and the rows.
"""

from __future__ import annotations

import os
import time
from typing import Any

from autograder.core import device as _device
from autograder.core import status as _status
from autograder.core.i18n import label, render
from autograder.core.protocol import check_rng, memory_words
from autograder.core.protocol import probe_error as _probe_error
from autograder.core.records import ExerciseRow, TestRow, as_test_row
from autograder.core.suite import (
    INTERNAL_ERROR,
    Check,
    CheckFailure,
    Ctx,
    GraderBug,
    StudentProblem,
    result_of,
    run_check,
)
from autograder.core.text import NAME_CHARS, clean
from autograder.engine import libraries
from autograder.engine import whose as _whose
from autograder.engine.host import ExerciseHost
from autograder.engine.outcomes import FORGED, MAX_TIMEOUTS_PER_EXERCISE, GradersTrouble, GradingCancelled, voided
from autograder.engine.reading import hide_places
from autograder.engine.rows import exercise_checks, graders_row
from autograder.sandbox import quota as _quota
from autograder.submissions import loader as _loader
from autograder.workers import handle as _handle


def _call_words(call: str | dict[str, Any]) -> str:
    """A check's ``call`` for the instructor's log: code in backticks, or its label's English text."""
    if isinstance(call, str):
        return f"`{call}`"
    return render(str(call.get("key")), "en", **{k: v for k, v in call.items() if k != "key"})


# the reason of a check that failed on the grader's side with nothing recorded (a cancelled run); never its message
_GRADER_SIDE = "the check failed on the grader's side"


class ExerciseGrading:
    """One exercise of one submission being graded: its student worker, its checks' contexts and results.

    :meth:`GradingRun.grade_exercise` is :meth:`open`, :meth:`run` for each of :attr:`checks`,
    :meth:`close` and :meth:`summary`; the pytest plugin (``autograder/pytest_plugin.py``) drives the
    same steps one check per test item, running the verdict in its own frame (:meth:`refusal`,
    :meth:`ctx`, then :meth:`record`).

    Args:
        host: what it needs of the grading run (:class:`ExerciseHost`: device, seed, timeout, workers, the reference).
        sub: the loaded submission.
        exercise: the exercise's name, e.g. ``"ex05_jit_train_step"``.
    """

    def __init__(self, host: ExerciseHost, sub: _loader.Submission, exercise: str, final: bool = True) -> None:
        self._t0 = time.monotonic()
        self.final = final
        self.retry: str | None = None  # (not final) why this attempt stopped: graded again, alone
        self.trouble: str | None = None  # the grader's trouble met (its reason, for grader_reason)
        self.log: list[str] = []  # for the instructor: how workers died, their stderr tails
        self.host = host
        self.sub = sub
        self.exercise = exercise
        self.lang = host.lang
        self.checks: list[Check] = exercise_checks(exercise, host.public_only)
        self.max_score = float(sum(c.points for c in self.checks))
        self.tests: list[TestRow] = []
        self.timeouts = 0
        self._worker: _handle.Worker | None = None
        self._src_path = ""
        self._hide: list[str] = []
        self._observed: dict[str, int] | None = None
        self._tallied: dict[str, int] | None = None
        self.forged: str | None = None  # why its worker's frames were not its loop's (``outcomes.voided``)
        self.cut_note = ""  # its load stopped a top-level statement (``LOAD_CUT``): said in the exercise's message

    def _result(self, status: str, tests: list[TestRow], message: str) -> ExerciseRow:
        out: ExerciseRow = {"score": float(sum(t["score"] for t in tests)), "max_score": self.max_score,
               "status": status, "message": message, "tests": tests,
               "seconds": round(time.monotonic() - self._t0, 3)}
        if self.log:
            out["instructor_log"] = list(self.log)
        return out

    # ----------------------------------------------------------- the grader's trouble or the student's
    def death_trouble(self, death: dict[str, Any] | None, what: str) -> str | None:
        """Whether a student's worker that died (``death``: ``_handle.Worker.death``) is the grader's trouble.

        The rules (README, "Whose trouble"; judged from the grader's own reads, ``_envelope.judge_kill``): a
        worker killed at its own memory cgroup's cap (``memory_cap``: everything it started, together) is the
        student's, like a MemoryError. A worker the kernel's OOM killer took while its memory cgroup stayed
        under that cap (``oom``) is the grader's: the container's memory ran out for the grader's sake. Where
        no memory cgroup could be made, an OOM kill is never the grader's (the student's own processes may
        have caused it). Any other death, on a first attempt, may be the machine's (a signal under load, a
        worker that could not start): the exercise is graded again, alone; on that second attempt the same
        death is the student's.

        Returns:
            The reason (for ``grader_reason``), or None when the death is the student's.
        """
        if death is None:
            return None
        self._note_death(death, what)
        env = self.host.envelope
        if death.get("memory_cap"):
            return None
        if death.get("oom"):
            limit = (f"the container's memory limit ({env.memory_bytes / 2**20:.0f} MiB)" if env.memory_bytes
                     else f"the machine's memory ({env.usable_memory / 2**30:.1f} GiB)")
            return (f"{what}: the student's worker was killed by the kernel's OOM killer while under its own memory "
                    f"cap: {limit} ran out; raise it, or grade with fewer --jobs")
        if not self.final:
            return f"{what}: the student's worker died ({death.get('how')})"
        return None

    def _note_death(self, death: dict[str, Any], what: str) -> None:
        """Keeps how a worker died and its stderr tail for the instructor (``instructor_log``, never a student's)."""
        tail = str(death.get("stderr") or "").strip()
        oom = (" (at its own memory cgroup's cap)" if death.get("memory_cap")
               else " (the OOM killer's)" if death.get("oom")
               else " (no memory cgroup: never judged the OOM killer's)" if death.get("memory_accounting") == "process"
               else "")
        self.log.append(_status.clean_reason(f"{what}: worker died, {death.get('how')}{oom}"
                                             + (f"; its stderr:\n{tail}" if tail else ""), limit=8000))

    def graders_trouble(self, reason: str) -> ExerciseRow:
        """The row of an exercise stopped by the grader's trouble: marked ``retry`` on a first attempt
        (graded again, alone), else ``grader_error``."""
        self.trouble = self.trouble or reason
        row = graders_row(self.exercise, "grader_error", reason, lang=self.lang,
                          public_only=self.host.public_only)
        if self.log:
            row["instructor_log"] = list(self.log)
        if not self.final:
            self.retry = reason
            row["retry"] = reason
        return row

    def _zero(self, status: str, message: str, code: str) -> ExerciseRow:
        tests: list[TestRow] = [{"name": c.name, "score": 0.0, "max_score": c.points, "passed": False,
                  "hidden": c.hidden, "message": message, "code": code} for c in self.checks]
        return self._result(status, tests, message)

    def open(self) -> ExerciseRow | None:
        """Writes the student's source to a private scratch and loads it in a sandboxed worker.

        Returns:
            None when the exercise loaded (its checks can run), else the exercise's final result,
            every check at 0 with the reason: refused file, missing file, grader error, or the
            load's failure (syntax, exception, timeout... with its status).
        """
        host, exercise = self.host, self.exercise
        if exercise in self.sub.refused:
            name, kind = self.sub.refused[exercise]
            if kind in ("FILE_TOO_LARGE", "FILE_UNREADABLE"):  # this exercise's file only: the others are graded
                msg = render(kind, self.lang, name=clean(name, NAME_CHARS),
                             limit=f"{_loader.MAX_SOURCE_BYTES // 1024**2} MB")
                return self._zero("unreadable", msg, kind)
            msg = render("REFUSED_FILE", self.lang, name=clean(name, NAME_CHARS), what=render(kind, self.lang))
            return self._zero("error", msg, "REFUSED_FILE")
        source = self.sub.sources.get(exercise)
        if source is None:
            msg = render("MISSING_FILE", self.lang, exercise=exercise)
            return self._zero("missing", msg, "MISSING_FILE")
        scratch_src = os.path.join(host.tmp, f"src-{host.scratch_id()}")
        os.makedirs(scratch_src, mode=0o700)  # other students' workers must not read it
        self._src_path = os.path.join(scratch_src, f"{exercise}.py")
        with open(self._src_path, "w", encoding="utf-8") as fh:
            fh.write(source)
        self._hide = hide_places([self.sub.path], host.tmp)
        # Load once up front: load failures decide the exercise's status.
        try:
            first = host.start_worker(exercise, self._src_path, "student", self._hide)
        except GradingCancelled:
            raise
        except Exception as err:  # noqa: BLE001 - the run goes on; no worker is the grader's trouble
            return self.graders_trouble(clean(f"no worker could start: {type(err).__name__}: {err}"))
        st = first.status
        if st.get("status") == "chip_unavailable":  # the chip still held by another process: never the student's
            return self.graders_trouble(clean(f"the TPU chip could not be opened: {st.get('fields', {}).get('how')}"))
        if first.isolation:  # sent by the sandbox before the student's code ran; the code's own word never counts
            host.note_isolation(first.isolation)
        # a library the reference needs that the grader's environment cannot import: the grader's trouble
        missing = host.library_trouble(exercise) if libraries.may_be_missing_library(st) else None
        trouble = missing or self.death_trouble(st.get("death"), "loading the submission's code")
        if trouble:
            first.close()
            return self.graders_trouble(trouble)
        self.forged = st.get("forged")  # the kernel showed its commands read by its load's code (_handle.Forged)
        cut = st.get("cut")  # a top-level statement stopped at its budget (``_exec.run_section``)
        if cut is not None and st.get("code") == "MISSING_NAMES":  # nothing of the contract defined before the cut
            cut = {**cut, "names": cut.get("names") or st.get("fields", {}).get("names", "")}
        if cut is not None and cut.get("names"):  # a name of the contract only defined past it: the load's timeout
            first.close()
            return self._zero("timeout", render("LOAD_CUT_MISSING", self.lang, **cut), "LOAD_CUT_MISSING")
        if cut is not None:  # graded on what the section defined before it, with a note saying so
            self.cut_note = render("LOAD_CUT", self.lang, **cut)
        if st.get("status") != "loaded":
            status = st.get("status", "crashed")
            msg = render(st.get("code", "LOAD_CRASHED"), self.lang, **st.get("fields", {}))
            first.close()
            return self._zero(status, msg, st.get("code", "LOAD_CRASHED"))
        self._worker = first
        return None

    def _student_call(self, probe: str, call: str | dict[str, Any], scale: float, kwargs: dict[str, Any]) -> Any:
        host = self.host
        worker = self._worker
        if worker is None or not worker.alive:
            worker = host.start_worker(self.exercise, self._src_path, "student", self._hide)
            self._worker = worker
            st = worker.status
            if st.get("status") == "chip_unavailable":  # the grader's trouble (``open``)
                self.trouble = self.trouble or clean(f"the TPU chip could not be opened: {st.get('fields')}")
                raise GradersTrouble(self.trouble)
            self._raise_if_graders(st.get("death"), "loading the submission's code again")
            if st.get("status") != "loaded":
                raise StudentProblem(st.get("code", "LOAD_CRASHED"), **st.get("fields", {}))
        self._observed = None
        self._tallied = None
        try:
            resp = worker.call(probe, kwargs, host.timeout * scale)
            self._observed = self._observation(worker)
            self._tallied = dict(worker.tallied)
        except _handle.WorkerDied as err:
            if err.kind == "timeout":
                self.timeouts += 1
                raise StudentProblem("CALL_TIMEOUT", call=call, timeout=host.timeout * scale) from None
            if err.kind == "forged":  # read in the grader's process: frames the worker's loop never writes
                self.forged = self.forged or err.how
                raise StudentProblem(FORGED, how=label(err.how)) from None
            if err.kind == "broken":
                raise StudentProblem("WORKER_PROTOCOL", how=err.how) from None
            if err.kind == "limit":
                raise StudentProblem(err.how, **_quota.describe()) from None
            self._raise_if_graders(err.death, _call_words(call))
            if (err.death or {}).get("memory_cap"):  # all it started, together, reached its memory cap
                raise StudentProblem("CALL_MEMORY", call=call, cap=memory_words(host.mem_bytes)) from None
            raise StudentProblem("CALL_CRASHED", call=call, how=err.how) from None
        if resp.get("ok"):
            return resp["value"]
        raise _probe_error(resp, call, host.mem_bytes)

    @staticmethod
    def _observation(worker: _handle.Worker) -> dict[str, int] | None:
        """What the grader saw of a worker's last call: ``{"programs": n, "distinct": k}``, the
        compiled programs it asked for (None: a worker that asks for none, e.g. PyTorch's)."""
        if not worker.borrows:  # what the grader asked of it, never what its status says
            return None
        return {"programs": len(worker.asked), "distinct": len(set(worker.asked))}

    def observed(self) -> dict[str, int] | None:
        """:meth:`_observation` of the student's last probe call (None before one answered)."""
        return self._observed

    def counted(self, name: str) -> int | None:
        """How many tallies ``name`` the grader read during the student's last probe call
        (``autograder.probing.tools.tally``; None before one answered)."""
        return None if self._tallied is None else int(self._tallied.get(name, 0))

    def _raise_if_graders(self, death: dict[str, Any] | None, what: str) -> None:
        """Raises :class:`GradersTrouble` when a death is (or, on a first attempt, may be) the grader's."""
        trouble = self.death_trouble(death, what)
        if trouble:
            self.trouble = self.trouble or trouble
            raise GradersTrouble(trouble)

    def _reference_call(self, probe: str, kwargs: dict[str, Any], fresh: _whose.StandIn | None = None) -> Any:
        try:  # ``fresh``: the reference run again, standing in for the student (:meth:`judged`), else the cache
            return fresh.call(probe, kwargs) if fresh else self.host.reference_call(self.exercise, probe, kwargs)
        except GraderBug as err:
            if death := getattr(err, "death", None):
                self._note_death(death, f"the reference's probe {probe}" + (", run again fresh" if fresh else ""))
            self.trouble = self.trouble or f"the reference: {err}"
            raise

    def ctx(self, check: Check) -> Ctx:
        """The context of one check: its seeded rng, the student's worker (timeouts scaled), the reference."""
        host = self.host
        return Ctx(rng=check_rng(host.seed, self.exercise, check.name), seed=host.seed, device=host.device,
                   student=lambda p, c, s, kw, _scale=check.timeout_scale: self._student_call(p, c, s * _scale, kw),
                   reference=self._reference_call, observed=self.observed, counted=self.counted)

    def refusal(self, check: Check) -> tuple[str, dict[str, Any]] | None:
        """Why ``check`` must not run now (``(key, fields)``: a device it needs, the spent timeout budget), or None."""
        host = self.host
        if self.forged:
            return FORGED, {"how": label(self.forged)}
        if check.needs and not _device.satisfies(host.device, check.needs):
            return "NOT_ON_DEVICE", {"device": _device.describe(host.device), "needs": check.needs}
        if self.timeouts >= MAX_TIMEOUTS_PER_EXERCISE:
            return "BUDGET_EXHAUSTED", {"budget": host.timeout * MAX_TIMEOUTS_PER_EXERCISE}
        return None

    def judged(self, check: Check, error: BaseException) -> BaseException:
        """Whose the failure ``error`` of ``check`` is (:mod:`autograder.engine.whose`).

        A crash, or a probe with no answer, is judged again with the reference run again, fresh, in the student's place.

        Args:
            check: the check.
            error: what it raised.

        Returns:
            Passing with the reference standing in, the student's problem (:data:`~autograder.engine.whose.UNREADABLE`,
            or the probe's own); failing so, a :class:`GraderBug` whose reason (kept in :attr:`trouble`) holds
            grader-side facts only. Anything else as it was raised.
        """
        if not _whose.needs_judging(error):
            if isinstance(error, GraderBug):
                # raised in the grader's own process (the reference, a death it judged): its words are the reason
                self.trouble = self.trouble or clean(f"{check.name}: {error}")
            return error
        if self.host.on_chip:  # one worker at a time on the chip: the student's is started again for the next check
            self.close()
        again = _whose.stand_in(check, self.ctx(check), self.host.fresh_reference(self.exercise), self._reference_call)
        if again is None:
            if isinstance(error, CheckFailure):  # a probe with no answer: its message says so
                return error
            self.log.append(_status.clean_reason(
                f"{check.name}: failed with {_whose.described(error)} on the student's answers and passed with "
                "the reference standing in for the student: scored 0 as the student's"))
            return StudentProblem(_whose.UNREADABLE)
        reason = _whose.reason(check.name, again)
        self.log.append(_status.clean_reason(f"{reason}; on the student's answers: {_whose.described(error)}"))
        self.trouble = self.trouble or reason
        return GraderBug(reason)

    def record(self, check: Check, error: BaseException | None,
               skip: tuple[str, dict[str, Any]] | None = None) -> TestRow:
        """Keeps the result of a check that ended with ``error`` (None: it passed; judged first,
        :meth:`judged`) or was refused (``skip``)."""
        test = as_test_row(result_of(check, self.judged(check, error) if error is not None else None, lang=self.lang,
                                     skip=skip))
        self.tests.append(test)
        return test

    def run(self, check: Check) -> TestRow:
        """Runs one check (after :meth:`open` returned None) and keeps its result; never raises."""
        skip = self.refusal(check)
        if skip is not None:
            return self.record(check, None, skip)
        test = as_test_row(run_check(check, self.ctx(check), lang=self.lang, judge=self.judged))
        self.tests.append(test)
        if test["code"] == INTERNAL_ERROR and not self.final:  # maybe the grader's trouble: again, alone
            self.retry = self.trouble or f"{check.name}: {_GRADER_SIDE}"
        return test

    def close(self) -> None:
        """Stops the student's worker (idempotent)."""
        if self._worker is not None:
            if self.forged is None:  # what its last call's forger may still write (the real answer, late)
                self.forged = self._worker.settle(self.host.timeout)
            self._worker.close()
            self._worker = None

    def summary(self) -> ExerciseRow:
        """The exercise's result (docs/grading-contract.md, "Row schema") from the checks run so far: status ``graded``."""
        tests = self.tests
        if self.forged:  # the student's own doing, established in the grader's process: nothing of it is a pass
            message = render(FORGED, self.lang, how=label(self.forged))
            return self._result("graded", voided(tests, message), message)
        broken = [t for t in tests if t["code"] == INTERNAL_ERROR]
        if broken:  # a check (or the reference) failed on the grader's side: no verdict is a grade
            return self.graders_trouble(self.trouble or f"{broken[0]['name']}: {_GRADER_SIDE}")
        failed = [t for t in tests if not t["passed"]]
        if failed and all(t["code"] == "NOT_ATTEMPTED" for t in failed) and len(failed) == len(tests):
            message = render("EXERCISE_NOT_ATTEMPTED", self.lang)
        else:
            message = failed[0]["message"] if failed else ""
        if self.cut_note:
            message = f"{message}; {self.cut_note}" if message else self.cut_note
        return self._result("graded", tests, message)
