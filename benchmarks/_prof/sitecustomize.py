"""Worker-side instrumentation for benchmarks/profile_lone.py (never used when grading).

profile_lone.py starts the zygote with this folder first on PYTHONPATH, so Python imports this
module at start-up. It wraps the worker's entry point, module load and probe calls (the sealed
path the worker's loop takes, ``_seal_probe``, and the notebook's ``run_probe``), and adds a
``_prof`` record (wall, CPU, JAX compile time by event, optionally a cProfile summary) to the
worker's status and to every answer it frames (``send_frame``: the frame is read back, the record
added, framed again); the grader side of profile_lone.py takes it off again. A fence's echo and a
compile request go out as they are. Nothing is written to disk, so a sandboxed worker behaves as it
does when grading.
"""

from __future__ import annotations

import json
import os
import struct
import time

if os.environ.get("TAPETRACE_PROF") == "1":
    import autograder.core.wire as _wire
    import autograder.workers.worker as _worker

    _state: dict = {"compile": {}, "n_compile": 0, "marks": {}, "names": []}
    _orig_send, _orig_main, _orig_load, _orig_probe = _wire.send, _worker.worker_main, _worker._load, _worker.run_probe
    _orig_send_frame, _orig_seal = _wire.send_frame, _worker._seal_probe
    _want = os.environ.get("TAPETRACE_PROF_CPROFILE", "")  # "exercise:role" to cProfile

    def _listener(event: str, duration: float, **_kw: object) -> None:
        _state["compile"][event] = _state["compile"].get(event, 0.0) + duration
        if event.endswith("backend_compile_duration"):
            _state["n_compile"] += 1

    def _event(event: str, **_kw: object) -> None:
        if event.startswith("/jax/compilation_cache/cache_"):
            key = event.rsplit("/", 1)[1]
            _state["compile"]["#" + key] = _state["compile"].get("#" + key, 0) + 1

    def _reset() -> None:
        _state["t"], _state["cpu"] = time.perf_counter(), time.process_time()
        _state["compile"], _state["n_compile"], _state["names"] = {}, 0, []

    def _record() -> dict:
        return {"wall": time.perf_counter() - _state["t"], "cpu": time.process_time() - _state["cpu"],
                "compile": dict(_state["compile"]), "n_compile": _state["n_compile"], "names": list(_state["names"]),
                "marks": dict(_state["marks"]), "cprofile": _state.pop("cprofile", "")}

    def _send(fd: int, obj: object, *deadline: float) -> None:
        from autograder.workers import compile_cache as _compile_cache

        if _compile_cache.is_request(obj) or (isinstance(obj, dict) and _wire.FENCE in obj):
            _orig_send(fd, obj, *deadline)  # a request for a compiled program, the fence's echo: sent as they are
            return
        if isinstance(obj, dict):
            obj = dict(obj, _prof=_record())
        _state["marks"] = {}
        _orig_send(fd, obj, *deadline)
        _reset()

    def _send_frame(fd: int, data: bytes, *deadline: float) -> None:
        # the worker's loop frames each answer itself (autograder.workers.seal.answer) and sends the bytes:
        # an answer (a dict with "ok") gets its record here; _send's own frames pass through unchanged
        try:
            obj = json.loads(bytes(data[8:]))
        except ValueError:
            obj = None
        if not (isinstance(obj, dict) and "ok" in obj and "_prof" not in obj):
            _orig_send_frame(fd, data, *deadline)
            return
        obj["_prof"] = _record()
        payload = json.dumps(obj, separators=(",", ":")).encode("utf-8")
        _state["marks"] = {}
        _orig_send_frame(fd, struct.pack(">Q", len(payload)) + payload, *deadline)
        _reset()

    def _seal_probe(probes, mod, req, path, *rest, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202
        _reset()
        if _want and _want == _state.get("who"):
            return _cprofiled(_orig_seal, probes, mod, req, path, *rest)
        return _orig_seal(probes, mod, req, path, *rest, **kw)

    def _cprofiled(fn, *args):  # noqa: ANN001, ANN202
        import cProfile
        import io
        import pstats

        prof = cProfile.Profile()
        try:
            return prof.runcall(fn, *args)
        finally:
            buf = io.StringIO()
            pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(30)
            _state["cprofile"] = buf.getvalue()[-6000:]

    def _load(spec, *rest, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202
        t = time.perf_counter()
        _state["marks"]["before_load"] = t - _state["t"]
        if os.environ.get("TAPETRACE_PROF_PRIVATE_CACHE") == "1" and spec.get("role") == "student" \
                and "jax" in __import__("sys").modules:  # experiment: a private compile cache in the scratch
            jax = __import__("sys").modules["jax"]
            cache = os.path.join(os.path.dirname(os.path.abspath(spec["source_path"])), "jax-private")
            os.makedirs(cache, exist_ok=True)
            jax.config.update("jax_persistent_cache_enable_xla_caches", "none")
            jax.config.update("jax_compilation_cache_dir", cache)
            jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
            jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
        try:
            if _want == f"{spec.get('exercise')}:{spec.get('role')}":
                return _cprofiled(_orig_load, spec, *rest)
            return _orig_load(spec, *rest, **kw)
        finally:
            _state["marks"]["load"] = time.perf_counter() - t

    def _run_probe(probes, mod, req, path):  # noqa: ANN001, ANN202
        _reset()
        if _want and _want == _state.get("who"):
            return _cprofiled(_orig_probe, probes, mod, req, path)
        return _orig_probe(probes, mod, req, path)

    def _main(cmd_fd, res_fd, spec, *rest, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202
        _reset()
        _state["who"] = f"{spec.get('exercise')}:{spec.get('role')}"
        import sys

        if "jax" in sys.modules:
            sys.modules["jax"].monitoring.register_event_duration_secs_listener(_listener)
            sys.modules["jax"].monitoring.register_event_listener(_event)
            if os.environ.get("TAPETRACE_PROF_NAMES") == "1":  # the name of every program XLA compiles
                import logging

                class _Names(logging.Handler):
                    def emit(self, record: logging.LogRecord) -> None:
                        msg = record.getMessage()
                        if msg.startswith("Finished XLA compilation of "):
                            words = msg.split(" ")  # ... of jit(NAME) in SECONDS sec
                            _state["names"].append(f"{words[4]}={float(words[6]) * 1000:.0f}ms")

                sys.modules["jax"].config.update("jax_log_compiles", True)
                logging.getLogger("jax").addHandler(_Names())
        return _orig_main(cmd_fd, res_fd, spec, *rest, **kw)

    _wire.send, _worker.worker_main, _worker._load, _worker.run_probe = _send, _main, _load, _run_probe
    _wire.send_frame, _worker._seal_probe = _send_frame, _seal_probe
