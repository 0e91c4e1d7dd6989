"""The one judgement of random masks: dropout that keeps or zeroes whole rows or whole columns together.

Dropout decides each element on its own. A mask drawn once for the batch (shape ``(units,)`` broadcast over the
examples) or once per example (``(N, 1)``) keeps each element with the right probability too, so a check of the
kept fraction alone passes it about as often as not (it has far fewer independent draws than elements); what
shows it is that whole rows or whole columns are kept or zeroed together.
"""

from __future__ import annotations

import numpy as np


def whole_lines(active: np.ndarray, dropped: np.ndarray, least: int = 16, lines: int = 10) -> bool:
    """Does a mask keep or zero whole rows or whole columns together?

    Args:
        active: ``(N, M)`` booleans, the elements that can show a drop (nonzero before the mask).
        dropped: ``(N, M)`` booleans, the elements zeroed by the mask.
        least: a row or column is judged when it holds at least this many active elements.
        lines: fewer judged rows (columns) than this and they are not judged.

    Returns:
        True when, along rows or along columns, more than half of the judged lines are whole (every active
        element kept, or every one zeroed) while the mask zeroes some active elements but not all.

    Independent drops at rate p make a line of k >= 16 elements whole with probability p^k + (1-p)^k: at most
    0.028 for p in [0.2, 0.8], 0.074 in [0.15, 0.85]. More than half of >= 10 independent such lines being
    whole then has probability < 1e-6, resp. < 3e-5 (binomial tail), and far less on the lines checks judge
    (ex03: ~30 active units a row at p in [0.3, 0.8]; ex08: rows of 500 and columns of 200 elements, < 1e-13).
    """
    zeroed_in_all = int((dropped & active).sum())
    if zeroed_in_all in (0, int(active.sum())):
        return False  # nothing zeroed, or everything: the kept fraction's check says which
    for axis in (0, 1):
        counts = active.sum(axis=axis)
        judged = counts >= least
        if int(judged.sum()) < lines:
            continue
        zeroed = (dropped & active).sum(axis=axis)
        whole = judged & ((zeroed == 0) | (zeroed == counts))
        if int(whole.sum()) * 2 > int(judged.sum()):
            return True
    return False
