# ATTACK: manual_grads runs its forward and backward pass in a fresh thread (the probe's saved-tensor hook
#   watches its own thread only), with torch.autograd.backward taken at import, before the tripwires
# TARGET: ex09_autograd_tape
# AFTER: solution
# STATUS: graded
# FAILS: manual_grads_without_autograd
# MESSAGE: another thread
import threading as _threading

_SAVED = [torch.autograd.backward]  # in a list: not a name of the module the probe rewraps


def manual_grads(w, x, b):
    box = {}

    def work():
        t = [torch.tensor(float(v), requires_grad=True) for v in (w, x, b)]
        _SAVED[0]([(t[0] * t[1] + t[2]) ** 2])
        box["grads"] = tuple(float(v.grad) for v in t)

    thread = _threading.Thread(target=work)
    thread.start()
    thread.join()
    return box["grads"]
