# ATTACK: a clip that scales x in place (as the mutant clip_in_place) and then, reading the probe's frame
#   (sys._getframe, f_back, f_locals), writes the same values into the probe's copy of x from before the call,
#   so that "was x changed in place?" compares two equal things
# TARGET: ex11_torch_compile
# AFTER: solution
# STATUS: graded
# FAILS: clip_matches_reference, clip_compiles_fullgraph, clip_gradient, clip_gradient_at_zero
# (8/10 while the copy was a tensor in the probe's locals, clip_matches_reference passed; now a read-only array
#  over bytes, see autograder.probing.tools.sealed: 7/10)
import sys as _sys


def _rewrite_the_copy(x):
    f = _sys._getframe(1)
    while f is not None:
        if f.f_code.co_name.startswith("probe_"):
            for value in list(f.f_locals.values()):
                if value is x:
                    continue
                try:
                    if tuple(value.shape) == tuple(x.shape):
                        value[...] = x.detach().cpu().numpy() if not hasattr(value, "copy_") else x.detach()
                except (AttributeError, TypeError, ValueError, RuntimeError):
                    pass
        f = f.f_back


def clip_by_norm(x, max_norm):
    norm = torch.linalg.vector_norm(x)  # noqa: F821 (the solution's import, above)
    with torch.no_grad():  # noqa: F821
        x.mul_(max_norm / torch.clamp(norm, min=max_norm))  # noqa: F821
    _rewrite_the_copy(x)
    return x
