# ATTACK: a copy that stops the model from learning (a hook zeroes every parameter's gradient: EX10_NOT_TRAINING)
#   and then, reading the probe's frame (sys._getframe, f_locals), gives the probe's optimizer a weight decay, which
#   moves every weight at the next step whatever the gradients: "does the optimizer still move the weights?" yes
# TARGET: ex10_bridge
# AFTER: solution
# STATUS: graded
# FAILS: to_torch_keeps_trainable_leaves, same_start_trains_alike
# (8.5/10 while "trains" meant "the weights moved"; it now also asks that each parameter got a gradient that is not
#  all zeros, read before the step: 7.5/10)
import sys as _sys

_honest_copy = jax_to_torch_mlp  # noqa: F821 (the solution's, above)


def _retune_the_optimizer():
    f = _sys._getframe(2)
    while f is not None:
        if f.f_code.co_name == "probe_to_torch_leaves":
            for value in list(f.f_locals.values()):
                for group in getattr(value, "param_groups", None) or ():
                    group["weight_decay"] = 1.0
                    group["lr"] = 0.5
        f = f.f_back


def jax_to_torch_mlp(params, model):
    _honest_copy(params, model)
    for p in model.parameters():
        p.register_hook(lambda g: g * 0.0)
    _retune_the_optimizer()
