"""The files a ``tapetrace grade`` run leaves, written at its end (also after Ctrl-C).

``--json`` (through the run's :class:`autograder.reports.report.Checkpoint`, whose writer is a shard's part
writer under ``--shard``; a whole run's JSON gets its receipt beside it, ``OUT.receipt.json``), ``--csv``
and ``--feedback``. While the run goes, the checkpoint rewrites the JSON; this is the final write.
"""

from __future__ import annotations

from typing import Any

from autograder.reports import feedback as _feedback
from autograder.reports import receipt as _receipt
from autograder.reports import report as _report


def write_outputs(checkpoint: _report.Checkpoint, *, json_path: str | None, csv_path: str | None,
                  feedback_dir: str | None, lang: str = "en", feedback_format: str = "md") -> list[dict[str, Any]]:
    """Writes a run's outputs from its checkpoint: earlier rows (``--resume``), then this run's.

    Args:
        checkpoint: the run's checkpoint (its rows, its JSON writer, whether an empty part is written).
        json_path: ``--json`` (None: none).
        csv_path: ``--csv`` (None: none).
        feedback_dir: ``--feedback`` (None: none).
        lang: the feedback's language.
        feedback_format: ``md``, ``html`` or ``both``.

    Returns:
        Every row, in order.

    Raises:
        OSError: an output cannot be written.
    """
    checkpoint.close()
    all_results = checkpoint.results()
    if json_path and (all_results or checkpoint.write_empty):
        checkpoint.writer(all_results, json_path)
        if checkpoint.writer is _report.write_json:  # a whole run (a shard's part: merge writes it)
            _receipt.write(_receipt.receipt(all_results), _receipt.sidecar(json_path))
    if csv_path:
        _report.write_csv(all_results, csv_path)
    if feedback_dir:
        _feedback.write_feedback(all_results, feedback_dir, lang=lang, fmt=feedback_format)
    return all_results
