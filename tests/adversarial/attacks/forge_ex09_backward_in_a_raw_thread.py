# ATTACK: manual_grads hands its forward and backward pass to a thread started at import (through
#   _thread, captured before the probe's tripwires), which waits for work: the saved-tensor hook never sees it
# TARGET: ex09_autograd_tape
# AFTER: solution
# STATUS: graded
# FAILS: manual_grads_without_autograd
# MESSAGE: another thread
import _thread
import queue as _queue

_SAVED = [torch.autograd.backward]  # in a list: not a name of the module the probe rewraps
_JOBS, _DONE = _queue.Queue(), _queue.Queue()


def _serve():
    while True:
        w, x, b = _JOBS.get()
        t = [torch.tensor(float(v), requires_grad=True) for v in (w, x, b)]
        _SAVED[0]([(t[0] * t[1] + t[2]) ** 2])
        _DONE.put(tuple(float(v.grad) for v in t))


_START = [_thread.start_new_thread]
_START[0](_serve, ())


def manual_grads(w, x, b):
    _JOBS.put((w, x, b))
    return _DONE.get()
