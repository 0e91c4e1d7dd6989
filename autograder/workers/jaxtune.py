"""Worker side: JAX set-up of the engine's worker processes that changes speed, never a result.

JAX lowers every new program (an eager op at a new shape, a jitted function at new arguments)
in an MLIR context of its own: a fresh context loads and registers the dialects again and is torn
down afterwards, ~5 ms of a program's ~25 ms on one CPU thread, and grading lowers hundreds of
small programs per submission (more so once a student's worker borrows compiled programs instead
of compiling them: ``_compile_cache``). Here each thread reuses its context for
:data:`LOWERINGS_PER_CONTEXT` lowerings, then starts a new one, so what a context keeps (interned
types, attributes, constants) stays bounded as before. The modules are the same text either way
(tests/test_speed.py), so compiled programs, cache keys and results are too.

Installed in the zygotes, before they fork (``zygote.worker_modules``); a spawned worker installs it itself.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

LOWERINGS_PER_CONTEXT = 32


def reuse_mlir_contexts(uses: int = LOWERINGS_PER_CONTEXT) -> bool:
    """Makes ``jax``'s lowering reuse a thread's MLIR context ``uses`` times (once per process).

    Creates no context here: a zygote forks after this, and each thread of each worker makes its
    own on its first lowering.

    Returns:
        Whether the reuse is in place (False where JAX is not imported or lowers elsewhere).
    """
    if "jax" not in sys.modules:
        return False
    try:
        from jax._src.interpreters import mlir
    except ImportError:
        return False
    make = getattr(mlir, "make_ir_context", None)
    if make is None:
        return False
    if getattr(make, "reuses", 0):
        return True
    local = threading.local()

    def make_ir_context() -> Any:
        ctx, left = getattr(local, "ctx", None), getattr(local, "left", 0)
        if ctx is None or left <= 0:
            ctx, left = make(), uses
        local.ctx, local.left = ctx, left - 1
        return ctx

    make_ir_context.reuses = uses  # type: ignore[attr-defined]
    make_ir_context.__doc__ = make.__doc__
    mlir.make_ir_context = make_ir_context
    return True
