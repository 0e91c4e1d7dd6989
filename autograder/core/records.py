"""The grading contract's records, typed: a submission's row, an exercise's, a test's, the isolation record.

What ``tapetrace grade --json`` writes, the pytest entry and the Dask cluster assemble, and the reports read
(docs/grading-contract.md, "Row schema": ``tests/test_grading_contract.py`` keeps that page and these types
equal, field for field). They are plain JSON objects (``TypedDict``): :func:`to_json` is the identity that
says so to a type checker. A field marked ``NotRequired`` is absent from some rows (the page says when).
:class:`ReportRow` is a row as the reports read it (outside the contract: grading never writes its extra fields).
"""

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict, cast


class OverrideEntry(TypedDict):
    """One manual override as recorded beside the score it changed (autograder/reports/overrides.py)."""

    row: int
    action: str
    points: float
    comment: str
    by: str
    at: str
    flags: list[str]


class OverrideRecord(TypedDict):
    """A test's or an exercise's manual overrides (``override``): the autograder's own score and each override, in
    the order applied. Written by the after-grading tools only (``--overrides``), never by ``tapetrace grade``."""

    autograder: float
    entries: list[OverrideEntry]


class TestRow(TypedDict):
    """One check's result: ``{"name", "score", "max_score", "passed", "hidden", "message", "code"}``."""

    name: str
    score: float
    max_score: float
    passed: bool
    hidden: bool
    message: str
    code: str
    override: NotRequired[OverrideRecord]


class ExerciseRow(TypedDict):
    """One exercise's result (``status``: one of ``core.status.STATUSES``)."""

    score: float
    max_score: float
    status: str
    message: str
    tests: list[TestRow]
    seconds: float
    grader_reason: NotRequired[str]
    instructor_log: NotRequired[list[str]]
    retry: NotRequired[str]
    fingerprint: NotRequired[dict[str, Any]]
    override: NotRequired[OverrideRecord]


class IsolationRecord(TypedDict, total=False):
    """What a student's worker obtained of the sandbox (``level``: ``minimal``, ``container`` or ``full``)."""

    level: str
    error: str
    network_dropped: bool
    pid_namespace: bool
    read_only_filesystem: bool
    private_dirs_hidden: bool
    capabilities_dropped: bool
    landlock: int
    landlock_net: bool
    landlock_scoped: bool
    landlock_error: str
    seccomp: bool
    seccomp_signals: bool
    uid: int | None
    uid_note: str
    proc_private: bool
    pids_cap: int
    pids_cgroup: str
    cpu_accounting: str
    cpu_cgroup: str
    memory_accounting: str
    memory_cgroup: str
    memory_cap_bytes: int
    file_size_cap_bytes: int
    outputs_readable: list[str]
    sandbox_error: str
    skipped: list[str]
    private_files_unreadable: bool
    writes_confined: bool
    network_blocked: bool
    processes_confined: bool


class ResultRow(TypedDict):
    """One submission's row (``--json`` writes one, or a list of them)."""

    submission: str
    device: dict[str, str]
    seed: int
    total: float
    max_total: float
    exercises: dict[str, ExerciseRow]
    precision: NotRequired[dict[str, str | bool]]
    isolation: NotRequired[IsolationRecord]
    launcher: NotRequired[str]
    envelope: NotRequired[dict[str, Any]]


class ReportRow(ResultRow, total=False):
    """A row as the after-grading tools read it (``tapetrace report``, ``gradebook``, ``handback``): a
    :class:`ResultRow`, or otter's ``results.json`` read as one (``source`` ``"otter"``, no ``seed``; ``error``
    when otter could not grade; autograder/reports/summary.py), with the manual overrides applied where there
    are any (``override_total``: the autograder's total; autograder/reports/overrides.py). Never written by
    ``tapetrace grade``."""

    source: str
    error: str
    override_total: float


def as_test_row(result: Mapping[str, Any]) -> TestRow:
    """A check's result as :func:`autograder.core.suite.result_of` gives it, as the row's :class:`TestRow`: the same
    fields, in the same order, in a new dict (``suite`` ships in the notebook's runtime, which has no records, so
    it returns a plain ``dict``)."""
    return {"name": result["name"], "score": result["score"], "max_score": result["max_score"],
            "passed": result["passed"], "hidden": result["hidden"], "message": result["message"], "code": result["code"]}


def to_json(row: ResultRow) -> dict[str, Any]:
    """A row as the plain JSON object it is (no copy)."""
    return cast(dict[str, Any], row)
