"""Runs the full zygote's warm-ups in this fresh interpreter, then reports (one JSON line) what a worker
forked from it would inherit: threads, Dynamo's counters, the guard profiler in use, and whether Dynamo
still guards (a new dtype must make a second graph). Used by tests/test_speed.py."""

from __future__ import annotations

import json
import threading

import torch
import torch._dynamo
import torch._dynamo.guards
import torch._dynamo.utils

from autograder.workers import warmup as _warmup

_warmup.warm_torch()
_warmup.warm_dynamo()
state = {"threads": threading.active_count(),
         "counters": sum(len(c) for c in torch._dynamo.utils.counters.values()),
         "guard_profiler_off": torch._dynamo.guards.profile_guard_manager is _warmup._zero_latency}


def double(x: torch.Tensor) -> torch.Tensor:
    return x * 2


compiled = torch.compile(double, backend="eager")
same = [bool(torch.equal(compiled(torch.ones(3, dtype=dt)), torch.full((3,), 2, dtype=dt)))
        for dt in (torch.float32, torch.float32, torch.float64)]
state["results_right"] = all(same)
state["graphs"] = int(torch._dynamo.utils.counters["stats"]["unique_graphs"])
print(json.dumps(state))
