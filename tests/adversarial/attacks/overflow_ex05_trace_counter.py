# ATTACK: a wrong step (built again on each new batch size, so a size seen before is traced again) that hides its
#   failure behind a crash: on the second batch size it adds 10**400 to the probe's trace counter (found in loss_fn's
#   closure), and one_trace_per_new_shape's (loss[4] - loss[3]) / loss[0] raises OverflowError. The crash is judged
#   again with the reference run again, fresh, standing in for the student: it passes, so the crash is the student's
#   (0 for that test, the rest graded). Answered from the run's cache (one answer per probe and arguments), the
#   stand-in got trace_call's first count again for batch a, the reference "failed" and ex05 was grader_error
# TARGET: ex05_jit_train_step
# AFTER: solution
# STATUS: graded
# FAILS: one_trace_per_new_shape
# MESSAGE: could not read what your code returned
_honest_make_train_step = make_train_step


def _counters(fn):
    found = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(value, dict) and "loss" in value:
            found.append(value)
    return found


def make_train_step(loss_fn, optimizer):
    counters = _counters(loss_fn)
    built = {"step": _honest_make_train_step(loss_fn, optimizer), "shapes": []}

    def step(params, opt_state, x, y):
        second = False
        if tuple(x.shape) not in built["shapes"]:
            if built["shapes"]:  # the wrong part: a new jitted step per new size (the old sizes trace again)
                built["step"] = _honest_make_train_step(loss_fn, optimizer)
            built["shapes"].append(tuple(x.shape))
            second = len(built["shapes"]) == 2
        out = built["step"](params, opt_state, x, y)
        if second:
            for counter in counters:
                counter["loss"] += 10**400
        return out

    return step
