# ATTACK: a forward that replaces the caller's arrays in its params lists (as the mutant forward_rewrites_params)
#   and then, reading the probe's frames up the stack (sys._getframe, f_back, f_locals), finds the probe's
#   "before" snapshots of those lists and writes the new arrays into them too: the purity checks compare params
#   with snapshots that now agree, and nothing of the grader's was rebound
# TARGET: ex04_jax_mlp
# AFTER: solution
# STATUS: graded
# FAILS: forward_under_transforms, forward_is_pure
# (9/10 while the snapshots held lists, forward_is_pure passed: a frame's locals hand out the probe's objects, and
#  a list in them could be rewritten; the snapshots are tuples now: 8/10)
import sys as _sys


def _rewrite_snapshots(params):
    f = _sys._getframe(1)
    while f is not None:
        if f.f_code.co_name.startswith("probe_"):
            for value in list(f.f_locals.values()):
                if type(value) is tuple and len(value) == 5 and value[0] is params:
                    for held, now in ((value[3], params["W"]), (value[4], params["b"])):
                        try:
                            held[:] = now
                        except TypeError:
                            pass
        f = f.f_back


def mlp_forward(params, x):
    params["W"][:] = [jnp.asarray(w) + 0.0 for w in params["W"]]  # noqa: F821 (the solution's import, above)
    params["b"][:] = [jnp.asarray(b) + 0.0 for b in params["b"]]  # noqa: F821
    _rewrite_snapshots(params)
    h = x
    for w, b in zip(params["W"][:-1], params["b"][:-1]):
        h = jax.nn.relu(h @ w + b)  # noqa: F821
    return h @ params["W"][-1] + params["b"][-1]
