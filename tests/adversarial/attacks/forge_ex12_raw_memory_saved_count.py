# ATTACK: torch_checkpointed applies the blocks plainly (no checkpoint: every activation saved), pads the probe's
#   saved-tensor count past the small ints, then zeroes it with a raw memory write on its address (ctypes)
# TARGET: ex12_checkpointing
# AFTER: solution
# STATUS: graded
# FAILS: torch_ckpt_recomputes_each_block, torch_ckpt_saves_fewer
# MESSAGE: tensors for backward
import ctypes as _ctypes
import sys as _sys


def torch_checkpointed(blocks, x):
    h = x
    for block in blocks:
        h = block(h)
    pad = torch.ones(1, requires_grad=True)
    for _ in range(200):
        pad * pad  # two tensors saved each: the count leaves CPython's cache of small ints
    frame = _sys._getframe(1)
    while frame is not None:
        counter = frame.f_locals.get("counter")
        if counter is not None and type(getattr(counter, "packed", None)) is int and counter.packed > 256:
            # an int's size sits after its header (refcount, type): size 0 is the int 0
            _ctypes.c_ssize_t.from_address(id(counter.packed) + 16).value = 0
            break
        frame = frame.f_back
    return h
