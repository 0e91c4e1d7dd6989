"""One comparison helper for trees of numpy data (what workers send back).

Structure first, then shapes and dtypes, then values. A failure message says
where, the shapes, the max abs/rel error and how many elements are off; it
never prints the expected values. Functions used here are bound at import,
before any student code could run in this process (none ever does).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from autograder.core.tolerances import Tol

_isfinite = np.isfinite
_abs = np.abs
_asarray = np.asarray


def _kind(x: Any) -> str:
    if isinstance(x, dict):
        return "dict"
    if isinstance(x, (list, tuple)):
        return "sequence"
    if isinstance(x, np.ndarray):
        return "array"
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, (int, float)):
        return "number"
    if x is None:
        return "None"
    if isinstance(x, str):
        return "str"
    return type(x).__name__


def first_difference(got: Any, want: Any, tol: Tol, where: str = "") -> str | None:
    """Compares two trees; returns None when they match, else a student-safe message.

    Args:
        got: the submission's tree (numpy arrays, numbers, lists, dicts).
        want: the reference tree, same kinds.
        tol: tolerance for float leaves; integer and bool leaves must be equal.
        where: path prefix used in messages.

    Returns:
        ``None`` or one line describing the first difference.
    """
    here = where or "output"
    kg, kw = _kind(got), _kind(want)
    if kw in ("number", "bool") and kg == "array" and got.shape == ():
        got, kg = got.item(), _kind(got.item())
    if kw == "number" and kg == "bool":
        kg = "number"
    if kg != kw:
        return f"{here}: expected a {kw}, got a {kg}"
    if kw == "dict":
        if set(got) != set(want):
            missing = sorted(set(want) - set(got))
            extra = sorted(set(got) - set(want))
            parts = []
            if missing:
                parts.append(f"missing keys {missing}")
            if extra:
                parts.append(f"unexpected keys {extra}")
            return f"{here}: " + ", ".join(parts)
        for k in want:
            msg = first_difference(got[k], want[k], tol, f"{where}[{k!r}]" if where else repr(k))
            if msg:
                return msg
        return None
    if kw == "sequence":
        if len(got) != len(want):
            return f"{here}: expected {len(want)} items, got {len(got)}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            msg = first_difference(g, w, tol, f"{where}[{i}]")
            if msg:
                return msg
        return None
    if kw in ("str", "None"):
        return None if got == want else f"{here}: differs"
    g = _asarray(got)
    w = _asarray(want)
    if g.shape != w.shape:
        return f"{here}: expected shape {tuple(w.shape)}, got {tuple(g.shape)}"
    if kw == "array" and g.dtype != w.dtype:
        return f"{here}: expected dtype {w.dtype}, got {g.dtype}"
    if g.dtype.kind in "biu" and w.dtype.kind in "biu":
        bad = g != w
        n = int(bad.sum())
        if n:
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            return f"{here}: {n} of {g.size} entries differ (first at index {idx})"
        return None
    g64 = np.atleast_1d(g.astype(np.float64))
    w64 = np.atleast_1d(w.astype(np.float64))
    gfin, wfin = _isfinite(g64), _isfinite(w64)
    # Fail closed: a nan is never a match; an inf only where the reference has the same inf.
    if np.isnan(g64).any() or not np.array_equal(gfin, wfin) or not np.array_equal(g64[~gfin], w64[~wfin]):
        n = int((~gfin).sum())
        return f"{here}: {n} non-finite value(s) (nan/inf) where finite values were expected"
    with np.errstate(invalid="ignore"):  # inf - inf where both are the same inf
        err = _abs(g64 - w64)
    err[~gfin] = 0.0
    limit = tol.atol + tol.rtol * _abs(w64)
    bad = err > limit
    if bad.any():
        n = int(bad.sum())
        meaningful = bad & (_abs(w64) > tol.atol)
        rel_text = (f"{float((err[meaningful] / _abs(w64[meaningful])).max()):.3g}"
                    if meaningful.any() else "n/a (reference near 0)")
        idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(err - limit)), err.shape))[: g.ndim]
        shape = f"shape {tuple(g.shape)}, " if g.shape else ""
        return (
            f"{here}: {n} of {max(g.size, 1)} values off ({shape}max abs error "
            f"{float(err.max()):.3g}, max rel error {rel_text}, worst at index "
            f"{idx}; tolerance atol={tol.atol:g}, rtol={tol.rtol:g})"
        )
    return None



def drift_start(got: Any, want: Any, tol: Tol, settle: int = 2) -> int | None:
    """Where a run of steps that started right drifts away: the first state carried badly from one step to the next.

    A training run is a series of values, one per state reached: ``values[i]`` reflects the first ``i`` updates
    (the loss before update ``i + 1``; a run's final params may close the series). When the first ``settle``
    values match the reference's (the first update was right) and a later one does not, each call does its own
    work right but what it hands to the next call is wrong: an optimizer state returned unchanged (the old one),
    params not rebound, gradients left to accumulate in ``.grad``.

    Args:
        got: the submission's series (a sequence; each item a tree :func:`first_difference` compares).
        want: the reference's series.
        tol: the tolerance of each comparison.
        settle: how many leading values must match (2: the start and the state after the first update).

    Returns:
        The 0-based index of the first value that differs (``>= settle``), or None: all match, the series
        differ in length or are shorter than ``settle + 1``, or the start already differs.
    """
    if not isinstance(got, (list, tuple)) or not isinstance(want, (list, tuple)) or len(got) != len(want) \
            or len(want) <= settle:
        return None
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if first_difference(g, w, tol) is not None:
            return i if i >= settle else None
    return None

# --------------------------------------------------------------------------- the detail in other languages
# first_difference's sentences are built in English (they are also logged); messages.render translates the
# `detail` field of a message with these patterns when it renders another language. A sentence that matches
# none (a check's own detail, an exception's text) is left as it is.
_KIND_ES = {"dict": "un dict", "sequence": "una secuencia", "array": "un array", "bool": "un bool",
            "number": "un número", "None": "None", "str": "un str"}
_DETAIL_ES: list[tuple[str, str]] = [
    (r"(?P<n>\d+) of (?P<size>\d+) values off \((?:shape (?P<shape>\(.*?\)), )?max abs error (?P<abs>\S+), "
     r"max rel error (?P<rel>n/a \(reference near 0\)|\S+), worst at index (?P<idx>\(.*?\)); "
     r"tolerance (?P<tol>atol=\S+, rtol=\S+)\)",
     "{n} de {size} valores fuera de tolerancia ({shape}error abs. máx. {abs}, error rel. máx. {rel}, "
     "el peor en el índice {idx}; tolerancia {tol})"),
    (r"(?P<n>\d+) of (?P<size>\d+) entries differ \(first at index (?P<idx>.*)\)",
     "{n} de {size} entradas difieren (la primera en el índice {idx})"),
    (r"(?P<n>\d+) non-finite value\(s\) \(nan/inf\) where finite values were expected",
     "{n} valor(es) no finito(s) (nan/inf) donde se esperaban valores finitos"),
    (r"expected shape (?P<want>.*), got (?P<got>.*)", "se esperaba la forma {want}, se obtuvo {got}"),
    (r"expected dtype (?P<want>\S+), got (?P<got>\S+)", "se esperaba el dtype {want}, se obtuvo {got}"),
    (r"expected (?P<want>\d+) items, got (?P<got>\d+)", "se esperaban {want} elementos, se obtuvieron {got}"),
    (r"expected a (?P<want>\w+), got a (?P<got>\w+)", "se esperaba {want}, se obtuvo {got}"),
    (r"missing keys (?P<missing>\[.*?\]), unexpected keys (?P<extra>\[.*\])",
     "faltan las claves {missing}, claves inesperadas {extra}"),
    (r"missing keys (?P<missing>\[.*\])", "faltan las claves {missing}"),
    (r"unexpected keys (?P<extra>\[.*\])", "claves inesperadas {extra}"),
    (r"differs", "difiere"),
]


def _detail_fields(m: re.Match[str]) -> dict[str, str]:
    fields = {k: (v or "") for k, v in m.groupdict().items()}
    if "shape" in fields:
        fields["shape"] = f"forma {fields['shape']}, " if fields["shape"] else ""
    if fields.get("rel", "").startswith("n/a"):
        fields["rel"] = "n/d (referencia cercana a 0)"
    for k in ("want", "got"):
        if fields.get(k) in _KIND_ES:
            fields[k] = _KIND_ES[fields[k]]
    return fields


def localize_detail(detail: str, lang: str) -> str:
    """A :func:`first_difference` sentence in ``lang`` (``"en"`` returns it unchanged).

    Args:
        detail: the English sentence (``"<where>: <what differs>"``).
        lang: ``"en"`` or ``"es"``.

    Returns:
        The sentence in ``lang``; anything :func:`first_difference` did not make, unchanged.
    """
    if lang != "es" or not isinstance(detail, str):
        return detail
    start = 0
    while (i := detail.find(": ", start)) >= 0:
        head, tail = detail[:i], detail[i + 2:]
        for pattern, template in _DETAIL_ES:
            m = re.fullmatch(pattern, tail)
            if m:
                return f"{'salida' if head == 'output' else head}: {template.format(**_detail_fields(m))}"
        start = i + 1
    return detail
