# ATTACK: compiled_train_step wraps the loss in a new torch.compile every step (Dynamo's cache: no new graph), and
#   rewinds the probe's count of torch.compile calls (padded past the small ints while the step is built) with a
#   raw memory write on its address (ctypes, no patching)
# TARGET: ex11_torch_compile
# AFTER: solution
# STATUS: graded
# FAILS: compiled_step_captures_once
# MESSAGE: torch.compile
import ctypes as _ctypes


def compiled_train_step(model, optimizer, loss_fn, backend="inductor"):
    def forward_loss(x, y):
        return loss_fn(model(x), y)

    for _ in range(300):
        torch.compile(forward_loss, backend=backend)  # the count leaves CPython's cache of small ints
    first = []

    def step(x, y):
        counter = torch.compile
        compiled = counter(forward_loss, backend=backend)  # re-wrapped: a torch.compile call per step
        calls = getattr(counter, "calls", None)
        if type(calls) is int and calls > 256:
            if not first:
                first.append(calls)
            else:  # a small int's one digit sits after its header (refcount, type, size)
                _ctypes.c_uint32.from_address(id(calls) + 24).value = first[0]
        model.train()
        optimizer.zero_grad()
        loss = compiled(x, y)
        loss.backward()
        optimizer.step()
        return loss.item()

    return step
