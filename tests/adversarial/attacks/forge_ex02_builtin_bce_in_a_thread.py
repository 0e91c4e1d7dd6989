# ATTACK: bce_with_logits calls the banned built-in (F.binary_cross_entropy_with_logits) in a thread of its own
#   and returns its result: torch keeps function and dispatch modes per thread, so the probe's spies, which
#   watch the calling thread, saw nothing; the values, the gradients and the stability are the built-in's own
# TARGET: ex02_torch_training
# AFTER: solution
# STATUS: graded
# FAILS: bce_does_not_call_builtin
# MESSAGE: calls the built-in loss
# (10/10 while the spies alone watched; the check now also asks for the graph, where the built-in's backward
#  node shows whichever thread ran it)
import threading as _threading

import torch.nn.functional as _F


def bce_with_logits(logits, targets):  # noqa: F811 - replaces the honest answer above
    out = []
    worker = _threading.Thread(target=lambda: out.append(_F.binary_cross_entropy_with_logits(logits, targets)))
    worker.start()
    worker.join()
    return out[0]
