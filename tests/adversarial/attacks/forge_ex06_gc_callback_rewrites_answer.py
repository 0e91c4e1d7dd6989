# ATTACK: torch_per_example_grads loops over the examples (right values) and leaves a garbage-collector
#   callback that, once the probe has returned, rewrites its answer ("forward ran once") in the worker's frames
# TARGET: ex06_per_example_grads
# AFTER: solution
# STATUS: graded
# FAILS: torch_vectorised
# MESSAGE: model.forward ran
import gc as _gc
import sys as _sys


def _rewrite(phase, info):
    frame, inside = _sys._getframe(1), False
    while frame is not None:
        inside = inside or frame.f_code is torch_per_example_grads.__code__
        for value in list(frame.f_locals.values()):
            if type(value) is dict and set(value) == {"calls", "n"}:
                value["calls"] = 1
        frame = frame.f_back
    if not inside:  # the first collection after the probe returned has had its chance: the usual pace again
        _gc.set_threshold(700, 10, 10)


def torch_per_example_grads(model, loss_fn, x, y):
    names = [name for name, _ in model.named_parameters()]
    params = [p for _, p in model.named_parameters()]
    per_example = {name: [] for name in names}
    for i in range(x.shape[0]):
        loss = loss_fn(model(x[i:i + 1]), y[i:i + 1])
        for name, g in zip(names, torch.autograd.grad(loss, params)):
            per_example[name].append(g)
    if _rewrite not in _gc.callbacks:
        _gc.callbacks.append(_rewrite)
    _gc.set_threshold(1)  # a collection at (nearly) every allocation: the first after the probe returns rewrites
    return {name: torch.stack(gs) for name, gs in per_example.items()}
