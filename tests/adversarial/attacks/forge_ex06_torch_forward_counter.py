# ATTACK: torch_per_example_grads loops over the examples (right values), then resets the probe model's
#   forward counter through type(model).forward.__globals__ (no patching of a function)
# TARGET: ex06_per_example_grads
# AFTER: solution
# STATUS: graded
# FAILS: torch_vectorised
# MESSAGE: model.forward ran


def torch_per_example_grads(model, loss_fn, x, y):
    names = [name for name, _ in model.named_parameters()]
    params = [p for _, p in model.named_parameters()]
    per_example = {name: [] for name in names}
    for i in range(x.shape[0]):
        loss = loss_fn(model(x[i:i + 1]), y[i:i + 1])
        for name, g in zip(names, torch.autograd.grad(loss, params)):
            per_example[name].append(g)
    for value in list(type(model).forward.__globals__.values()):
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], int):
            value[0] = 1  # "forward ran once"
    return {name: torch.stack(gs) for name, gs in per_example.items()}
