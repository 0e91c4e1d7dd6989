# ATTACK: a copy that assigns new nn.Parameter objects (as the mutant to_torch_new_parameters: the optimizer built
#   before the copy is left behind) and then, reading the probe's frame (sys._getframe, f_locals), writes the new
#   parameters' ids into the probe's list of ids from before the call and points the probe's optimizer at the new
#   parameters: "are they the same objects?" and "does the optimizer still move them?" both answer yes
# TARGET: ex10_bridge
# AFTER: solution
# STATUS: graded
# FAILS: to_torch_keeps_trainable_leaves
# (10/10 while the probe kept a list of ids; it keeps a tuple of the parameters now, compared by identity: 9/10)
import sys as _sys


def _hide_the_new_parameters(model):
    f = _sys._getframe(2)
    ps = list(model.parameters())
    while f is not None:
        if f.f_code.co_name == "probe_to_torch_leaves":
            for value in list(f.f_locals.values()):
                if type(value) is list and len(value) == len(ps) and all(type(v) is int for v in value):
                    value[:] = [id(p) for p in ps]
                groups = getattr(value, "param_groups", None)
                if groups:
                    groups[0]["params"] = ps
        f = f.f_back


_honest_copy = jax_to_torch_mlp  # noqa: F821 (the solution's, above: it checks the shapes and copies)


def jax_to_torch_mlp(params, model):
    _honest_copy(params, model)
    for layer in [m for m in model.modules() if isinstance(m, nn.Linear)]:  # noqa: F821 (the solution's imports)
        layer.weight = nn.Parameter(layer.weight.detach().clone())  # noqa: F821
        layer.bias = nn.Parameter(layer.bias.detach().clone())  # noqa: F821
    _hide_the_new_parameters(model)
