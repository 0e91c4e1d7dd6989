# ATTACK: torch_per_example_grads loops over the examples (right values), then rewinds the probe's forward
#   counter (an itertools.count) with a raw memory write on its address (ctypes, no patching)
# TARGET: ex06_per_example_grads
# AFTER: solution
# STATUS: graded
# FAILS: torch_vectorised
# MESSAGE: model.forward ran
import ctypes as _ctypes
import itertools as _itertools


def torch_per_example_grads(model, loss_fn, x, y):
    names = [name for name, _ in model.named_parameters()]
    params = [p for _, p in model.named_parameters()]
    per_example = {name: [] for name in names}
    for i in range(x.shape[0]):
        loss = loss_fn(model(x[i:i + 1]), y[i:i + 1])
        for name, g in zip(names, torch.autograd.grad(loss, params)):
            per_example[name].append(g)
    for value in list(type(model).forward.__globals__.values()):
        if type(value) is _itertools.count:
            now = int(repr(value)[6:-1])  # the next value it gives
            # the count sits after the object's header (refcount, type): "forward ran once"
            _ctypes.c_ssize_t.from_address(id(value) + 16).value = now - int(x.shape[0]) + 1
    return {name: torch.stack(gs) for name, gs in per_example.items()}
