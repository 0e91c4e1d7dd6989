"""Worker side: the worker; loads one exercise module (student or reference) and serves probes.

Started by the grader (forked from the warm zygote, or spawned with
``python -m autograder.workers.worker``). It speaks only through two pipes: commands
in, plain-data results out (see :mod:`autograder.core.wire`); its stdout goes to /dev/null (printing
cannot flood anything), its stderr to a pipe the grader drains, keeping the head and the tail for
the instructor (``_watch.StderrTail``).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import importlib.util
import io
import json
import operator
import os
import pickle
import re
import signal
import sys
import time
import traceback
import types
from typing import Any

from autograder.core import wire as _wire
from autograder.core.exercise import part as _part  # the one import of an exercise's part by name
from autograder.submissions import execute as _exec
from autograder.submissions import standins as _standins
from autograder.submissions.cells import UnreadableCharacter


def _setup_threads_and_precision(device: dict[str, str], jax_cache: str | None) -> None:
    """One thread per worker (jobs x threads <= cores), pinned precision."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"
    if "torch" in sys.modules:
        import torch

        torch.set_num_threads(1)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:
            pass
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
    if "jax" in sys.modules:
        import jax

        jax.config.update("jax_default_matmul_precision", "highest")
        if hasattr(jax.config, "jax_threefry_partitionable"):  # the random bits the snapshot records (public checks)
            jax.config.update("jax_threefry_partitionable", True)
        if device.get("jax") == "cpu":
            jax.config.update("jax_platforms", "cpu")
        elif (platforms := jax.config.jax_platforms) and "cpu" not in platforms.split(","):
            # the host's CPU beside the accelerator, after it (still JAX's default): checks of host memory run
            # there (ex10's copies); JAX_PLATFORMS=tpu alone would leave no CPU device
            jax.config.update("jax_platforms", f"{platforms},cpu")
        if jax_cache:
            # path-independent keys, so entries written by the reference's workers hit in students' ones
            jax.config.update("jax_persistent_cache_enable_xla_caches", "none")
            jax.config.update("jax_compilation_cache_dir", jax_cache)
            jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
            jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def _open_chip(res_fd: int) -> bool:
    """Opens the TPU chip the grader leased to this worker (``jax.devices()`` starts the backend) and says so in a
    frame of its own, before any student code runs (``_intake.chip``). Before the sandbox: its memory cap is then
    counted from what the chip's runtime mapped (opened under the cap, libtpu's first mmap failed: measured on a
    TPU v5e host), and its time is not the student's load.

    Returns:
        Whether the chip is open; when not, the worker ends (the grader starts another: the last holder may still
        have been ending).
    """
    t0 = time.monotonic()
    from autograder.core.device import TEST_CHIP_ENV

    try:
        if os.environ.get(TEST_CHIP_ENV):  # the tests' stand-in for libtpu's lock (CI has no TPU)
            ok, how = _lock_test_chip(os.environ[TEST_CHIP_ENV]), "the test chip is held by another process"
        else:
            import jax

            ok = any(d.platform == "tpu" for d in jax.devices())
            how = "" if ok else f"JAX opened {jax.default_backend()!r}, not a TPU"
    except Exception as err:  # noqa: BLE001 - the grader's trouble (the chip still held, or absent): it says how
        ok, how = False, f"{type(err).__name__}: {err}"
    _wire.send(res_fd, {"status": "chip", "ok": ok, "seconds": round(time.monotonic() - t0, 3), "how": how[:300]})
    return ok


def _lock_test_chip(path: str) -> bool:
    """Takes the tests' chip (``TAPETRACE_TEST_CHIP``: a file locked exclusively, not waiting) for this process's
    life, as libtpu's lock holds a real one; each take and refusal is appended to ``path + ".log"``."""
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        taken = True
    except OSError:
        os.close(fd)
        taken = False
    with open(path + ".log", "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()} {'open' if taken else 'refused'}\n")
    return taken


_OOM_TEXT = "can't allocate memory"


def _environment() -> dict[str, Any]:
    """What the worker runs with: threads, precision pins, devices (for tests and reports)."""
    out: dict[str, Any] = {"omp_threads": os.environ.get("OMP_NUM_THREADS", ""), "gc_enabled": gc.isenabled(),
                           "gc_frozen": gc.get_freeze_count()}
    with contextlib.suppress(OSError, ValueError), open("/proc/self/oom_score_adj") as fh:
        out["oom_score_adj"] = int(fh.read())
    if "torch" in sys.modules:
        import torch

        out.update(torch_threads=torch.get_num_threads(), torch_tf32_matmul=torch.backends.cuda.matmul.allow_tf32,
                   torch_tf32_cudnn=torch.backends.cudnn.allow_tf32,
                   torch_matmul_precision=torch.get_float32_matmul_precision(),
                   torch_cuda=torch.cuda.is_available())
    if "jax" in sys.modules:
        import jax

        mlir = sys.modules.get("jax._src.interpreters.mlir")
        out.update(jax_matmul_precision=str(jax.config.jax_default_matmul_precision),
                   jax_backend=jax.default_backend(),
                   jax_mlir_context_reuse=int(getattr(getattr(mlir, "make_ir_context", None), "reuses", 0)))
    return out


def student_frame(tb: Any, path: str) -> tuple[int, str, str] | None:
    """Where in the student's file an exception was raised: its deepest traceback frame there.

    Args:
        tb: The exception's traceback (``err.__traceback__``).
        path: The student's file, absolute.

    Returns:
        ``(line, code, function)``, or ``None`` when no frame is in that file.
    """
    found = None
    for frame in traceback.extract_tb(tb):
        if os.path.abspath(frame.filename) == path:
            found = (frame.lineno or 0, (frame.line or "").strip(), frame.name)
    return found


def _safe_str(err: BaseException) -> str:
    try:
        text = str(err)
    except Exception:  # noqa: BLE001 - a hostile __str__
        text = "<unprintable>"
    text = " ".join(text.split())
    return text[:300] + ("…" if len(text) > 300 else "")


def _describe(err: BaseException, path: str) -> dict[str, Any]:
    where = student_frame(err.__traceback__, path)
    loc: dict[str, Any] | str = ""
    func = ""
    if where:  # a nested catalogued text: the grader renders it in the run's language (autograder.core.i18n.render)
        line, code, func = where
        loc = {"key": "where.line_code", "line": line, "code": code[:120]} if code else {"key": "where.line", "line": line}
    # the grader cleans and caps every string it receives (_intake); capped here too, so a huge type name
    # still reaches it as the exception it is rather than as an oversized frame
    return {"type": type(err).__name__[:200], "message": _safe_str(err), "where": loc, "func": func[:200]}


def _stub_texts() -> frozenset[str]:
    """What a stub's ``raise NotImplementedError(...)`` says after ``"exNN_name: "``, in every language."""
    from autograder.core.i18n import LANGS, catalogue

    return frozenset(" ".join(catalogue(lang)["stub.replace"].split()) for lang in LANGS)


_STUB_PREFIX = re.compile(r"ex\d+_\w+")


def is_stub_raise(err: NotImplementedError, path: str) -> bool:
    """Whether ``err`` is a stub's own raise: raised by a line of the student's code (``path``) with the
    text ``tapetrace stubs`` writes (``"exNN_name: replace this line with your code"``, any language).

    Only that means "not attempted": a ``NotImplementedError`` raised inside a library (JAX raises one,
    for instance, for a ``shard_map`` that closes over inputs sharded on explicit axes, and its message
    names the fix) or a student's own ``raise NotImplementedError("...")`` is an error of their code.
    """
    frames = traceback.extract_tb(err.__traceback__)
    if not frames or not os.path.abspath(frames[-1].filename) == path:
        return False
    prefix, sep, rest = _safe_str(err).partition(": ")
    return bool(sep) and _STUB_PREFIX.fullmatch(prefix) is not None and rest in _stub_texts()


def _load(spec: dict[str, Any], after_context: Any = None, before_context: Any = None) -> tuple[Any, dict[str, Any]]:
    """Loads the exercise's module: a plain file, or a notebook's graded module (context, then section).

    See :mod:`autograder.submissions.execute`: stand-ins for the notebook's helpers (and ``google.colab`` in a
    student's worker, where the real one is absent: :mod:`autograder.submissions.standins`), the context with its failures skipped under a
    small time budget, then the section strictly: its failure is the load error reported here.
    ``after_context`` runs between the two (see :func:`autograder.submissions.execute.run`), and
    ``before_context`` before any of it, where there is a context (a plain file has none: neither runs then).
    """
    path = os.path.abspath(spec["source_path"])
    name = spec["module_name"]
    package = sys.modules.get(f"autograder.exercises.{spec.get('exercise')}")
    contract = tuple(package.META.names) if package is not None else ()
    try:
        with open(path, "rb") as fh:
            # the grader wrote it as UTF-8 (autograder.core.text_intake): a student's coding line is stale there
            text = io.IncrementalNewlineDecoder(None, translate=True).decode(fh.read().decode("utf-8"), final=True)
        prepared = _exec.prepare(text, path, contract)
        if not prepared.context:
            after_context = None
        elif before_context is not None:
            before_context()
        mspec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(mspec)
        sys.modules[name] = mod
        if spec.get("role") != "reference":
            _standins.install_colab_standin()
        report = _exec.run(prepared, mod.__dict__, after_context=after_context,
                           load_timeout=float(spec.get("load_timeout") or _exec.LOAD_TIMEOUT))
    except BaseException as err:  # noqa: BLE001 - anything student code raises
        try:
            return None, load_error(err, path)
        except BaseException:  # noqa: BLE001 - describing it failed (builtins the student's code rebound): still its error
            return None, {"status": "error", "code": "LOAD_EXCEPTION",
                          "fields": {"error": "an exception the grader could not describe", "where": ""}}
    # a top-level statement stopped at its budget: the grader notes it, or times the load out when a name of the
    # contract was left undefined (``autograder.engine.exercise``)
    return mod, {"status": "loaded", **({"cut": report.cut.fields()} if report.cut is not None else {})}


# The Python students' code is written for (Colab's: docs/supported-versions.md); a grader on an older one
# rejects syntax newer than its own, and says so (``load.older_python``).
STUDENT_PYTHON = (3, 12)
_EXERCISE_MODULE = re.compile(r"ex\d\d_\w+")


def _older_python() -> dict[str, Any] | str:
    """The note a syntax error gets on a grader older than :data:`STUDENT_PYTHON` (a catalogued label), else ``""``."""
    if sys.version_info[:2] >= STUDENT_PYTHON:
        return ""
    return {"key": "load.older_python", "python": "{}.{}".format(*sys.version_info[:2]),
            "newer": "{}.{}".format(*STUDENT_PYTHON)}


def other_exercise(err: BaseException) -> str | None:
    """The exercise module an import failed to find (``from ex04_jax_mlp import ...``), else None.

    Each exercise file is graded on its own, so another exercise's module is never importable.
    """
    if not isinstance(err, ModuleNotFoundError):
        return None
    try:
        name = err.name
    except Exception:  # noqa: BLE001 - a hostile subclass's property
        return None
    if type(name) is not str:
        return None
    top = name.partition(".")[0]
    return top if _EXERCISE_MODULE.fullmatch(top) else None


def load_error(err: BaseException, path: str, _isinstance: Any = isinstance) -> dict[str, Any]:
    """The load status for an exception a module's code raised (``path``: its file, for the line). ``isinstance``
    as it was when this module loaded, before any student code (which may rebind the builtin)."""
    if _isinstance(err, UnreadableCharacter):  # recorded at intake (autograder.core.text_intake): as "Run all" fails
        fault = err.fault
        return {"status": "error", "code": "LOAD_NULL_CHAR" if fault.kind == "nul" else "LOAD_SURROGATE",
                "fields": {"line": fault.line, "char": f"U+{fault.char:04X}"}}
    if _isinstance(err, SyntaxError):
        return {"status": "error", "code": "LOAD_SYNTAX",
                "fields": {"error": f"{type(err).__name__}: {err.msg}", "line": err.lineno or 0,
                           "older": _older_python()}}
    module = other_exercise(err)
    if module is not None:
        return {"status": "error", "code": "LOAD_OTHER_EXERCISE",
                "fields": {"module": module[:64], "where": _describe(err, path)["where"]}}
    if _isinstance(err, SystemExit):
        return {"status": "error", "code": "LOAD_EXIT", "fields": {"where": _describe(err, path)["where"]}}
    if _isinstance(err, MemoryError) or (_isinstance(err, RuntimeError) and _OOM_TEXT in _safe_str(err).lower()):
        return {"status": "error", "code": "LOAD_MEMORY", "fields": {}}
    d = _describe(err, path)
    return {"status": "error", "code": "LOAD_EXCEPTION",
            "fields": {"error": f"{d['type']}: {d['message']}", "where": d["where"]}}


def _oom_first(role: str) -> None:
    """Offers this worker to the kernel's OOM killer before the grader and its zygotes: when a container's
    memory runs out, a worker's death costs one exercise a second attempt (the grader sees the kill:
    ``_handle.Worker.death``); the zygote's would cost every later worker a fresh interpreter, the grader's
    every result. A student's worker goes first, then the reference's (raising it needs no privilege)."""
    with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as fh:
        fh.write("500" if role == "reference" else "1000")


def _faults_to_stderr() -> None:
    """A fatal signal (SIGSEGV, SIGABRT, SIGBUS...) writes the Python stack to stderr: the instructor's
    clue when a worker dies (the grader keeps the tail; a student never sees it)."""
    import faulthandler

    with contextlib.suppress(Exception):
        faulthandler.enable(all_threads=False)  # the thread that died


def _plain_field(value: Any, depth: int = 0) -> Any:
    """A probe's message field as plain data for the wire: a number, a text, or a catalogued label
    (``{"key": ..., **fields}``, :func:`autograder.core.i18n.label`, a level deep) the grader renders in the
    run's language; anything else as its ``str``."""
    if value is None or type(value) in (bool, int, float, str):
        return value
    if type(value) is dict and type(value.get("key")) is str and depth < 2:
        return {str(k): _plain_field(v, depth + 1) for k, v in value.items()}
    return str(value)


def _probe_error(err: BaseException, path: str, probe: str) -> dict[str, Any]:
    """The response for an exception a probe raised (its own ``ProbeFail``, or the student's code's)."""
    from autograder.probing.tools import ProbeFail

    if isinstance(err, ProbeFail):
        return {"ok": False, "kind": "fail", "code": err.code,
                "fields": {k: _plain_field(v) for k, v in err.fields.items()}}
    if isinstance(err, NotImplementedError):
        d = _describe(err, path)
        if is_stub_raise(err, path):
            return {"ok": False, "kind": "not_attempted", "where": d["func"] or probe}
        return {"ok": False, "kind": "exception", **d}  # e.g. JAX's own, whose message names the fix
    if isinstance(err, MemoryError) or (isinstance(err, RuntimeError) and _OOM_TEXT in _safe_str(err).lower()):
        return {"ok": False, "kind": "memory"}
    if isinstance(err, SystemExit):
        return {"ok": False, "kind": "exit"}
    return {"ok": False, "kind": "exception", **_describe(err, path)}


# What a probe call gives the result window (autograder.workers.seal.answer): ("value", the probe's value
# pickled) or ("response", the whole response pickled); bytes, which nothing can change.
Sealed = tuple[str, bytes]
_PICKLE_PROTOCOL = 4  # no out-of-band buffers: one bytes object holds everything


def _calibration_read(fd: int) -> Any:
    """One read of the command pipe, run as a probe is (through :func:`operator.call`: one C-level call below
    the loop): where the kernel then sees this thread wait is the depth of any student code's own read
    (``autograder.workers.confirm``)."""
    return _wire.recv(fd)


def _seal_probe(probes: Any, mod: Any, req: dict[str, Any], path: str, _dumps: Any = pickle.dumps,
                _protocol: int = _PICKLE_PROTOCOL, _call: Any = operator.call) -> Sealed:
    """Runs one probe; its answer frozen to bytes the moment it returns (see :mod:`autograder.workers.seal`).

    The probe's value is pickled in the very expression that calls it: it is never held by a variable a
    frame exposes, and no bytecode runs between its return and the pickling (no signal handler, no thread
    switch). Pickling plain data runs no Python code; anything else fails here, as unsendable.
    """
    if req["probe"] == "__env__":
        return "value", _dumps(_environment(), _protocol)
    fn = getattr(probes, "probe_" + req["probe"], None)
    if fn is None:
        return "response", _dumps({"ok": False, "kind": "internal", "message": f"no probe {req['probe']!r}"}, _protocol)
    kwargs = req.get("kwargs", {})
    try:
        # through a C function: the probe (and so the student's code) runs a C-level call below the loop on every
        # Python, where the kernel tells its reads from the loop's (autograder.workers.confirm)
        return "value", _dumps(_call(fn, mod, **kwargs), _protocol)
    except BaseException as err:  # noqa: BLE001 - anything student code raises
        tb = err.__traceback__
        if tb is not None and tb.tb_next is None and isinstance(err, (TypeError, AttributeError, pickle.PicklingError)):
            # raised in this frame, by pickle: not plain data
            response = {"ok": False, "kind": "internal", "message": f"probe returned unsendable data: {_safe_str(err)}"}
        else:
            response = _probe_error(err, path, req["probe"])
    return "response", _dumps(response, _protocol)


def run_probe(probes: Any, mod: Any, req: dict[str, Any], path: str) -> dict[str, Any]:
    """One probe's response as plain data, in this process (the notebook's own checks call it).

    Args:
        probes: The exercise's probes module.
        mod: The student's module.
        req: The request (``{"probe": name, "kwargs": {...}}``).
        path: The student's file, absolute (for the traceback's frame).

    Returns:
        The response the worker would send: ``{"ok": True, "value": ...}`` or ``{"ok": False, "kind": ...,
        "message": ...}`` (also when the value cannot be sent).
    """
    kind, blob = _seal_probe(probes, mod, req, path)
    value = pickle.loads(blob)  # noqa: S301 - the bytes _seal_probe just made
    if kind != "value":
        return value
    try:
        _wire.encode(value)
    except TypeError as err:
        return {"ok": False, "kind": "internal", "message": f"probe returned unsendable data: {err}"}
    return {"ok": True, "value": value}


def _pin_result(res_fd: int) -> int:
    """Moves the result pipe to :data:`autograder.probing.tools.RESULT_FD`, where the probes' tallies are
    written (``tools.tally``, bound at import); the descriptor it had is closed.

    Raises:
        RuntimeError: that descriptor is taken (nothing could be counted in the grader's process).
    """
    import fcntl  # POSIX only: a worker's (this module also ships in the notebook's runtime)

    from autograder.probing.tools import RESULT_FD

    if res_fd == RESULT_FD:
        return res_fd
    try:
        fcntl.fcntl(RESULT_FD, fcntl.F_GETFD)
    except OSError:
        os.dup2(res_fd, RESULT_FD, inheritable=False)
        os.close(res_fd)
        return RESULT_FD
    raise RuntimeError(f"descriptor {RESULT_FD} is taken: the worker's result pipe cannot move there")


def _stage_descriptors(res_fd: int, spec: dict[str, Any], err_fd: int | None) -> int:
    """Threat: a worker's output, memory or writes harming the grader (a flooded pipe, the OOM killer, SIGXFSZ).

    The result pipe moved to :data:`autograder.probing.tools.RESULT_FD` (where the probes' tallies go); stdin
    and stdout on /dev/null, stderr on the grader's pipe (``err_fd``) with a fatal signal's stack written there;
    this process offered to the OOM killer before the grader; an oversized write fails with EFBIG instead of
    killing it. With ``debug`` in the spec the standard streams stay as they are.

    Returns:
        The result pipe's descriptor from now on.
    """
    res_fd = _pin_result(res_fd)
    if not spec.get("debug"):
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.dup2(err_fd if err_fd is not None else devnull, 2)
        if err_fd is not None and err_fd != 2:
            os.close(err_fd)
        _faults_to_stderr()
    _oom_first(spec.get("role", "student"))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # oversized writes fail with EFBIG instead of killing
    return res_fd


def _stage_isolation_probe(res_fd: int, spec: dict[str, Any]) -> None:
    """Threat: a run that records more isolation than its students' workers would obtain.

    The run's pre-flight (role ``isolation``): the sandbox a student's worker gets, applied in a worker that
    loads no code, and its record sent (``{"status": "isolation", ...}``); the worker then ends.
    """
    from autograder.sandbox import isolate as _sandbox

    _scratch, isolation = _sandbox.apply(**spec["sandbox"])
    _wire.send(res_fd, {"status": "isolation", "isolation": isolation})


def _stage_devices(res_fd: int, spec: dict[str, Any]) -> tuple[Any, Any] | None:
    """Threat: results that depend on the host (threads, precision, devices) or on a chip another worker holds.

    The device the probes see (``autograder.probing.tools.DEVICE``), the exercise's ``META`` and probes imported,
    JAX's MLIR contexts reused, the host CPU devices the exercise asks for (ex13: 8; read when JAX's backend starts,
    which no worker has done yet), one thread and the highest matmul precision (the run's compile cache in a
    reference worker only), then, with ``--device tpu``, the chip the grader leased to this worker
    (:func:`_open_chip`, before the sandbox and any student code: ``autograder.engine.chip``).

    Returns:
        ``(META, probes module)``, or None where the chip could not be opened (the worker ends).
    """
    from autograder.probing import tools as _probing

    _probing.DEVICE.update(spec["device"])
    meta = _part(spec["exercise"]).META
    probes = _part(spec["exercise"], "probes")
    from autograder.workers import jaxtune as _jaxtune  # the engine's (a zygote already did this before it forked)

    _jaxtune.reuse_mlir_contexts()
    if meta.cpu_devices and "jax" in sys.modules:
        sys.modules["jax"].config.update("jax_num_cpu_devices", int(meta.cpu_devices))
    # Only reference workers use the run's compile cache (the engine gives students none).
    writer = spec.get("role") == "reference" and not spec.get("sandbox")
    _setup_threads_and_precision(spec["device"], spec.get("jax_cache") if writer else None)
    if spec.get("chip") and not _open_chip(res_fd):
        return None
    return meta, probes


def _stage_compiler_warmup(meta: Any) -> None:
    """Threat: Dynamo's one-time set-up refused by the guard (AOTAutograd's first compile replaces a ``__code__``).

    Paid here, before the sandbox and the guard, where the exercise compiles (``META.compiles``) and the zygote
    did not (:func:`autograder.workers.warmup.warm_dynamo_once`).
    """
    if getattr(meta, "compiles", False):
        from autograder.workers import warmup as _warmup  # the engine's: not part of the notebook's runtime

        _warmup.warm_dynamo_once()


def _stage_datasets() -> None:
    """Threat: probes that cannot read their datasets once the sandbox hides the grader's files.

    The probes read the datasets lazily; the sandbox may cover the grader's files (e.g. under /tmp when
    ``otter run`` unpacked the autograder there), so they are read now (a student's worker only).
    """
    from autograder.core import data as _data

    try:
        _data.all_arrays()
    except OSError:
        pass


def _stage_sandbox(cmd_fd: int, res_fd: int, spec: dict[str, Any]) -> dict[str, Any]:
    """Threat: a student's code reaching the grader's files, other submissions, the network or other processes.

    The sandbox applied (:func:`autograder.sandbox.isolate.apply`, keeping the two pipes), its record sent as
    this worker's first frame (``{"status": "sandboxed", ...}``: the grader reads it before any student code
    runs, so it is the sandbox's own; what the student's code sends later is never one), and the student's
    file copied into the scratch folder (read before the sandbox, written after it).

    Returns:
        The spec, its ``source_path`` now the copy in the scratch folder.
    """
    from autograder.sandbox import isolate as _sandbox

    with open(spec["source_path"], "rb") as fh:
        source = fh.read()
    scratch, isolation = _sandbox.apply(**spec["sandbox"], kept_fds=(cmd_fd, res_fd))
    _wire.send(res_fd, {"status": "sandboxed", "isolation": isolation})
    spec = dict(spec, source_path=os.path.join(scratch, f"{spec['module_name']}.py"))
    with open(spec["source_path"], "wb") as fh:
        fh.write(source)
    return spec


def _stage_borrowing(cmd_fd: int, res_fd: int, spec: dict[str, Any]) -> tuple[Any, bool]:
    """Threat: a student's worker reading the run's compile cache (it may only ask the grader, by key).

    With ``borrow_compiles`` in the spec, this JAX asks the grader for the reference's compiled programs
    (:func:`autograder.workers.compile_cache.borrow`); a notebook's statement stopped at its budget never leaves a
    request half made (``autograder.submissions.execute.UNINTERRUPTED``).

    Returns:
        ``(serve, borrowing)``: ``serve(on)``, called around the load and each probe (bound now), and whether
        every compile of the main thread is asked of the grader.
    """
    borrower = None
    if spec.get("borrow_compiles"):
        from autograder.workers import (
            compile_cache as _compile_cache,  # the engine's: not part of the notebook's runtime
        )

        borrower = _compile_cache.borrow(cmd_fd, res_fd)
        _exec.UNINTERRUPTED.add(_compile_cache.Borrower.get.__code__.co_filename)
    serve = borrower.serve if borrower is not None else _serve_nothing
    return serve, borrower is not None


def _stage_guard(probes: Any, spec: dict[str, Any]) -> tuple[Any, Any, Any, Any]:
    """Threat: a student's code reaching the probes, or changing the grader's code they call.

    The probes dispatched from a table read now; in a student's worker their global names frozen into their
    code (:mod:`autograder.workers.freeze`), the grader's code watched from now on (restored after a notebook's
    context, compared after the section and each probe: :class:`autograder.workers.guard.Snapshot`) and the
    introspection that reaches a running probe's state refused (the audit hook).

    Returns:
        ``(table, watch, changes, restore)``: the probes' table, the snapshot (None in a reference's worker) and
        its own checks, bound now (a student's code can rebind an attribute, not a local).
    """
    table, watch = _protect(probes, spec)
    changes, restore = (watch.checker(), watch.restore) if watch is not None else (None, None)
    return table, watch, changes, restore


def _stage_load(spec: dict[str, Any], meta: Any, serve: Any, watch: Any,
                changes: Any) -> tuple[Any, dict[str, Any], list[str]]:
    """Threat: the student's top-level code changing the grader's code before the probes run.

    The student's (or the reference's) module loaded (:func:`_load`) with the compile borrower serving, then
    the snapshot compared and, where changed, put back before this process's own code uses any of it; the load
    status names the contract's missing names (all missing: ``MISSING_NAMES``) and keeps a load cut at its
    budget (``cut``).

    Returns:
        ``(module or None, load status, what was changed)``; the status still lacks ``borrowing``.
    """
    serve(True)
    try:
        mod, status = _load(spec, after_context=watch.restore if watch is not None else None,
                            before_context=watch.keep_libraries if watch is not None else None)
    finally:
        serve(False)
    tampered = changes() if changes is not None else []
    if tampered:  # put back before this process's own code uses any of it
        watch.restore()
    if mod is not None:
        names = list(meta.names)
        missing = [n for n in names if not hasattr(mod, n)]
        cut = status.get("cut")
        if names and len(missing) == len(names):
            status = {"status": "missing", "code": "MISSING_NAMES",
                      "fields": {"names": ", ".join(names)}}
        else:
            status = {"status": "loaded", "missing": missing}
        if cut is not None:
            status["cut"] = cut
    return mod, status, tampered


def worker_main(cmd_fd: int, res_fd: int, spec: dict[str, Any], err_fd: int | None = None) -> None:
    """Runs one worker until the grader closes the command pipe: its stages in order, then its loop.

    Each ``_stage_*`` function's docstring names, on its first line, the threat it answers (the order is the
    one in ``autograder/workers/README.md``). The loop's locals, the calibration and the loop stay in this
    function: the loop must wait in its own ``readv`` from this frame, where the calibration read
    (:mod:`autograder.workers.confirm`), with every function it calls bound to a local before any student code
    runs (a student's code can rebind a module's attribute, not a local of a running frame).

    Args:
        cmd_fd: read end of the command pipe.
        res_fd: write end of the result pipe.
        spec: exercise, role, module source path, scratch dir, device, sandbox settings.
        err_fd: where its stderr goes (the grader keeps the tail for the instructor; never a student's
            to read); None: /dev/null.
    """
    res_fd = _stage_descriptors(res_fd, spec, err_fd)
    if spec.get("role") == "isolation":  # the run's pre-flight: what would a student's worker obtain?
        _stage_isolation_probe(res_fd, spec)
        return
    loaded = _stage_devices(res_fd, spec)
    if loaded is None:  # the chip leased to it could not be opened: the grader starts another
        return
    meta, probes = loaded
    _stage_compiler_warmup(meta)
    if spec.get("sandbox"):
        _stage_datasets()
        spec = _stage_sandbox(cmd_fd, res_fd, spec)
    serve, borrowing = _stage_borrowing(cmd_fd, res_fd, spec)
    table, watch, changes, restore = _stage_guard(probes, spec)
    # Inline from here: the loop's locals, the calibration and the loop itself (see above).
    from autograder.workers import guard as _guard  # the engine's: not part of the notebook's runtime
    from autograder.workers import seal as _seal  # the engine's: the notebook's checks call run_probe

    send, recv_rest, send_frame, tampered_response = _wire.send, _wire.recv_rest, _wire.send_frame, _guard.tampered_response
    readv = os.readv
    answer = _seal.answer
    # between two probes no student code runs on this thread (autograder.workers.confirm counts the bytes it reads
    # while it waits: a command taken by another thread leaves it short, and nothing here may read to make up for
    # it): Python's signal handlers deferred and the collector off (seal.hold, at the switch interval in force), and
    # every signal blocked for this thread (a C-level handler would run here)
    hold, release, getswitch = _seal.hold, _seal.release, sys.getswitchinterval
    sigmask, block, every = signal.pthread_sigmask, signal.SIG_SETMASK, signal.valid_signals()
    fence, is_a, a_dict = _wire.FENCE, isinstance, dict  # (builtins too: a student's code can rebind those)
    head = bytearray(8)  # the loop waits for each command in its own readv, a C call from this frame
    if spec.get("calibrate"):  # before any student code: where this loop waits, for the grader to read
        _wire.recv_rest(cmd_fd, head[:os.readv(cmd_fd, [head])])
        operator.call(_calibration_read, cmd_fd)
    mod, status, tampered = _stage_load(spec, meta, serve, watch, changes)
    status["borrowing"] = borrowing
    send(res_fd, status)
    if mod is None:
        return
    path = os.path.abspath(spec["source_path"])
    mask, held = sigmask(block, every), hold(_held=getswitch())
    while True:
        try:  # waiting here, as the calibration did (a hook on Python frames cannot move it: autograder.workers.confirm)
            got = readv(cmd_fd, [head])
            if not got:
                return
            req = recv_rest(cmd_fd, head[:got])
        except (EOFError, OSError):
            return
        if is_a(req, a_dict) and fence in req:  # the grader's fence after an answer: echoed as it came
            send(res_fd, {fence: req[fence]})
            continue
        sigmask(block, mask)
        release(held)
        serve(True)
        try:
            sealed = ("response", b"") if tampered else _seal_probe(table, mod, req, path)
        finally:
            serve(False)
        data, tampered = answer(sealed, changes, restore, tampered, tampered_response)
        mask, held = sigmask(block, every), hold(_held=getswitch())
        send_frame(res_fd, data)


def _serve_nothing(_on: bool) -> None:
    """A worker that borrows no compiled programs (see ``Borrower.serve``)."""


def _protect(probes: Any, spec: dict[str, Any]) -> tuple[Any, Any]:
    """The probes as dispatched (read before any student code runs) and, in a student's worker, the
    snapshot of the grader's code (:class:`autograder.workers.guard.Snapshot`) with the audit hook installed."""
    from autograder.workers import guard as _guard

    table = types.SimpleNamespace(**{f"probe_{k}": v for k, v in _guard.probe_table(probes).items()})
    if spec.get("role") != "student":
        return table, None
    _freeze_probes(probes, spec["exercise"])
    watch = _guard.Snapshot(_guard.grader_folder(), extra=_guard.WATCHED, libraries=False)  # (see _load)
    _guard.install_audit_hook(_guard.context_tracers())
    return table, watch


def _freeze_probes(probes: Any, exercise: str) -> None:
    """The probes' and their tools' global names, and the attributes of modules and classes they load through them,
    frozen into their code (:mod:`autograder.workers.freeze`), before the snapshot and the audit hook. Where the
    exercise compiles with TorchDynamo (``META.compiles``), only its probes, less what they list in ``UNFROZEN``
    (what Dynamo traces: its bytecode reader takes no module or function as a constant); the tools stay as written,
    since a student's compiled code may reach them."""
    from autograder.workers import freeze as _freeze  # the engine's: not part of the notebook's runtime

    if getattr(_part(exercise).META, "compiles", False):
        _freeze.freeze_module(probes)
        return
    for name, module in list(sys.modules.items()):
        if module is probes or name == "autograder.probing" or name.startswith("autograder.probing."):
            _freeze.freeze_module(module)


def main() -> None:
    """Entry point of a spawned worker: ``python -m autograder.workers.worker CMD RES SPEC`` (stderr: its pipe)."""
    cmd_fd, res_fd = int(sys.argv[1]), int(sys.argv[2])
    spec = json.loads(sys.argv[3])
    from autograder.workers.environment import keep_to_planned_cpus

    keep_to_planned_cpus()
    try:
        worker_main(cmd_fd, res_fd, spec, err_fd=2)
    finally:
        os._exit(0)


if __name__ == "__main__":
    main()
