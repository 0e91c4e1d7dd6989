# ATTACK: a forward that rewrites the caller's params (as the mutant forward_rewrites_params) and, during each call,
#   rebinds the probe module's `_unchanged` (its "were the inputs touched?" helper) to a function that puts the
#   original back the first time it runs and answers "nothing changed": after the call nothing differs from the
#   guard's snapshot, and the purity checks read the forged answer (only in the two probes that ask it next: the
#   caller's frame names them; in the transforms' probe once, before jit/vmap/grad call the forward again)
# TARGET: ex04_jax_mlp
# AFTER: solution
# STATUS: graded
# FAILS: forward_under_transforms, forward_is_pure, bce_loss_stable, accuracy_matches, init_params_he_statistics, init_params_keys
# MESSAGE: changed the grader's own code
# (10/10 before the probes' global names were frozen into their code, autograder/workers/freeze.py: the forged
#  helper is never called, stays in place, and the guard sees it after the probe)
import sys as _sys


_SEEN = []


def _hide_the_rewrite():
    probes = _sys.modules.get("autograder.exercises.ex04_jax_mlp.probes")
    f = _sys._getframe(2)
    while f is not None and not f.f_code.co_name.startswith("probe_"):
        f = f.f_back
    if probes is None or f is None or f.f_code.co_name not in ("probe_forward_transforms", "probe_forward_purity"):
        return
    if f.f_code.co_name == "probe_forward_transforms":
        if any(seen is f for seen in _SEEN):
            return
        _SEEN.append(f)
    real = probes.__dict__.get("_unchanged")
    if real is None or getattr(real, "_forged", False):
        return

    left = [1 if f.f_code.co_name == "probe_forward_transforms" else 2]  # the purity probe asks twice a time

    def forged(*args, **kwargs):
        left[0] -= 1
        if left[0] <= 0:
            probes.__dict__["_unchanged"] = real  # back before anyone compares
        return ""

    forged._forged = True
    probes.__dict__["_unchanged"] = forged


def mlp_forward(params, x):
    params["W"] = [jnp.asarray(w) for w in params["W"]]
    params["b"] = [jnp.asarray(b) for b in params["b"]]
    _hide_the_rewrite()
    h = x
    for w, b in zip(params["W"][:-1], params["b"][:-1]):
        h = jax.nn.relu(h @ w + b)
    return h @ params["W"][-1] + params["b"][-1]
