"""The figures' canvas: a matplotlib Figure that shows itself once per notebook cell, its captions, PNG bytes.

Owns what every figure is drawn on and says: the figures' texts by language (:data:`TEXT`, ``figure_text``), the
``Figure`` subclass that displays itself inline once (``new_figure``, ``show_figure``), the sentences under a
figure (:func:`say`, :func:`notes`, :func:`check_series`) and rendering to PNG with Agg (:func:`to_png`).
Figures never touch pyplot's global state; matplotlib and IPython are imported lazily.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Sequence
from functools import cache
from typing import Any

from autograder.core.i18n import render, section

# ----------------------------------------------------------------- texts
# The figures' labels and notes, by language (UI text: the "figure." keys of autograder/messages/student.py).
TEXT: dict[str, dict[str, str]] = section("figure")


def figure_text(key: str, lang: str, **fields: Any) -> str:
    """A figure's text in a language (the ``figure.<key>`` messages of autograder/messages/student.py).

    Args:
        key: The message's key under ``figure.`` (``"needs"``, ``"went_nan"``, ...).
        lang: The language code (``"en"``, ``"es"``).
        **fields: The message's placeholders.

    Returns:
        The rendered text.
    """
    return render(f"figure.{key}", lang, **fields)


# ----------------------------------------------------------------- display
def _ipython() -> Any:
    """The running IPython shell, or None (never imports IPython itself)."""
    mod = sys.modules.get("IPython")
    if mod is None:
        return None
    try:
        return mod.get_ipython()
    except Exception:  # a broken IPython must not break a figure
        return None


def to_png(fig: Any, dpi: int = 80) -> bytes:
    """Renders a figure to PNG bytes with the Agg canvas (no pyplot, no display needed)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


@cache
def _figure_class() -> type:
    from matplotlib.figure import Figure

    class StudentFigure(Figure):
        """A Figure that shows itself once per notebook cell, as a PNG."""

        _tt_shown_at: Any = None

        def _ipython_display_(self) -> None:
            shell = _ipython()
            count = getattr(shell, "execution_count", None)
            if self._tt_shown_at is not None and self._tt_shown_at == count:
                return  # already shown by the call that drew it, in this same cell
            self._tt_shown_at = count
            from IPython.display import Image, display

            display(Image(data=to_png(self, dpi=90)))

    return StudentFigure


def new_figure(width: float, height: float) -> Any:
    """A new figure that shows itself inline once per notebook cell (never through pyplot).

    Args:
        width: Width in inches.
        height: Height in inches.

    Returns:
        A matplotlib ``Figure`` (its ``constrained`` layout on).
    """
    return _figure_class()(figsize=(width, height), layout="constrained")


def say(fig: Any, text: str, *, warn: bool = False) -> None:
    """Puts a sentence under a figure and keeps it for the notebook to print (:func:`notes`).

    What a figure trains, and from whose code, is said this way (``warn=False``, grey); so is what it
    cannot show (``warn=True``, red): a loss that turned nan or grew, outputs that are nan, a model that
    learnt nothing. A figure never stays silent about either.

    Args:
        fig: the figure.
        text: one sentence, in the figure's language.
        warn: a problem with what the figure shows (the caption turns red).
    """
    import textwrap

    notes = fig.__dict__.setdefault("_tt_notes", [])
    if text in [t for t, _ in notes]:
        return
    notes.append((text, warn))
    width = max(40, int(fig.get_figwidth() * 14))
    lines = [textwrap.fill(("⚠ " if w else "") + t, width) for t, w in notes]
    color = "#c92a2a" if any(w for _, w in notes) else "#495057"
    fig.supxlabel("\n".join(lines), fontsize=9, color=color, ha="center")


def notes(fig: Any) -> list[str]:
    """The sentences :func:`say` put under a figure, in order (warnings marked with ⚠)."""
    return [("⚠ " if w else "") + t for t, w in fig.__dict__.get("_tt_notes", [])]


def _finite(values: Any) -> Any:
    import numpy as np

    return np.isfinite(np.asarray(values, dtype=np.float64))


def check_series(fig: Any, values: Sequence[float], what: str, unit: str, lang: str, *,
                 growth: bool = True) -> None:
    """Says under ``fig`` when a training series cannot show training: nan/inf from some step on, or
    (``growth``: a training loss) a loss that ended clearly higher than it started (divergence).

    Args:
        fig: the figure the series is drawn in.
        values: the series (a loss per epoch/step).
        what: its name, as the figure's legend says it (e.g. "loss (training)").
        unit: ``"epoch"`` or ``"step"``.
        lang: the figure's language.
        growth: also say when the loss grew (a validation loss may rise: overfitting, not divergence).
    """
    import numpy as np

    v = np.asarray(list(values), dtype=np.float64).ravel()
    if not len(v):
        return
    ok = _finite(v)
    if not ok.all():
        first = int(np.argmin(ok))
        say(fig, figure_text("went_nan", lang, what=what, at=figure_text(f"at_{unit}", lang, n=first + 1), total=len(v)), warn=True)
    elif growth and len(v) >= 5 and v[-1] > 1.5 * v[0] and v[-1] - v[0] > 1e-3:
        say(fig, figure_text("diverged", lang, what=what, first=v[0], last=v[-1]), warn=True)


def show_figure(fig: Any, show: bool) -> Any:
    """Displays ``fig`` now when ``show`` and IPython is running; the figure either way.

    Args:
        fig: The figure, from :func:`new_figure`.
        show: Whether to display it now.

    Returns:
        ``fig``, so a figure function can end with ``return show_figure(fig, show)``.
    """
    if show and _ipython() is not None:
        from IPython.display import display

        display(fig)
    return fig
