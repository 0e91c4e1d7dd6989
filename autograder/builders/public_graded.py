"""The exercise as the grader will see it in the running notebook: its graded module, loaded in this process.

``check()`` without a namespace reads the running notebook (Colab's live copy, else the file Jupyter or
VS Code names: :func:`notebook_json`), splits it as the grader's loader does
(:mod:`autograder.submissions.cells`) and loads the exercise's graded module in a fresh module, context
first, then the section (:func:`graded_module`), as the grader's worker does. Where the notebook cannot
be read, or the session ran code the saved file lacks, the session's names are used with a note saying
so (:class:`GradedView`). Ships in the notebook's runtime.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import types
from dataclasses import dataclass
from typing import Any

from autograder.builders.public_snapshot import snapshot
from autograder.builders.public_student import StudentFiles, _CheckTimeout, _time_limit, as_module
from autograder.core.i18n import render
from autograder.core.registry import contracts
from autograder.submissions import cells as _cells
from autograder.submissions import execute as _exec
from autograder.submissions import standins as _standins

# Seconds the graded module's own section may take to load in a check (the grader's default load timeout); its
# top-level statements get their share of it, as in the grader's worker (``_exec.top_level_budget``).
LOAD_TIMEOUT = _exec.LOAD_TIMEOUT


def _text(lang: str, key: str, **fields: Any) -> str:
    return render(f"public.{key}", lang, **fields)


def notebook_json(namespace: Any = None, timeout: float = 10.0) -> tuple[dict | None, str]:
    """The running notebook's JSON and where it came from (``"colab"``, ``"file"``), else ``(None, "")``.

    Colab: the live notebook from the browser (``google.colab._message``, unsaved edits included).
    Jupyter: the file named by ``JPY_SESSION_NAME``; VS Code: ``__vsc_ipynb_file__``; papermill: its injected
    ``PAPERMILL_INPUT_PATH``/``PAPERMILL_OUTPUT_PATH``; nbconvert/nbclient name none: the working folder's
    notebook (:func:`_in_cwd`).
    """
    colab = sys.modules.get("google.colab")
    if colab is not None and not isinstance(colab, _standins.ColabModule):
        try:
            from google.colab import _message

            resp = _message.blocking_request("get_ipynb", request="", timeout_sec=timeout)
            nb = resp.get("ipynb") if isinstance(resp, dict) else None
            if isinstance(nb, dict) and isinstance(nb.get("cells"), list):
                return nb, "colab"
        except Exception:  # noqa: BLE001 - the frontend did not answer: try the file
            pass
    names = dict(namespace) if isinstance(namespace, dict) else {}
    for path in _named_paths(names):
        nb = _read_notebook(path)
        if nb is not None:
            return nb, "file"
    return _in_cwd(names)


# papermill names the notebook only when asked (``--inject-paths``, ``--inject-input-path``): as parameters in the
# notebook's namespace; the input (the student's cells, without papermill's injected parameters cell) first.
_PAPERMILL = ("PAPERMILL_INPUT_PATH", "PAPERMILL_OUTPUT_PATH")
_CWD_NOTEBOOKS = 20  # notebooks of the working folder looked at, at most


def _named_paths(names: dict[str, Any]) -> list[str]:
    """Where the session names its notebook: Jupyter's ``JPY_SESSION_NAME``, VS Code's ``__vsc_ipynb_file__``,
    papermill's injected paths."""
    return [os.environ.get("JPY_SESSION_NAME", ""), str(names.get("__vsc_ipynb_file__", "")),
            *(str(names.get(k) or os.environ.get(k) or "") for k in _PAPERMILL)]


def _read_notebook(path: str) -> dict | None:
    if not (path.endswith(".ipynb") and os.path.isfile(path)):
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            nb = json.load(fh)
    except (OSError, ValueError):
        return None
    return nb if isinstance(nb, dict) and isinstance(nb.get("cells"), list) else None


def _in_cwd(names: dict[str, Any]) -> tuple[dict | None, str]:
    """nbconvert/nbclient (and papermill without ``--inject-paths``) name no notebook; they run the kernel in the
    notebook's folder: its only notebook, else the one notebook there whose code holds every function and class
    the session defined. ``(None, "")`` when that is not one notebook (never a guess between several)."""
    try:
        paths = sorted(e.path for e in os.scandir(".") if e.name.endswith(".ipynb") and e.is_file())[:_CWD_NOTEBOOKS]
    except OSError:
        return None, ""
    found = [(p, nb) for p in paths if (nb := _read_notebook(p)) is not None]
    if len(found) == 1:
        return found[0][1], "file"
    defined = [n for n in names if not n.startswith("_")]
    if not defined:
        return None, ""
    holding = [nb for _, nb in found if not _ran_other_code(names, defined, "\n".join(
        "".join(c.get("source") or "") if isinstance(c.get("source"), list) else str(c.get("source") or "")
        for c in nb["cells"] if isinstance(c, dict) and c.get("cell_type") == "code"))]
    return (holding[0], "file") if len(holding) == 1 else (None, "")


def _squash(text: str) -> str:
    return " ".join(text.split())


def _ran_other_code(namespace: Any, names: list[str], notebook_code: str) -> bool:
    """Whether a contract function or class the session defined is not in the saved notebook (unsaved edits)."""
    import inspect

    code = _squash(notebook_code)
    for name in names:
        obj = dict(namespace).get(name) if isinstance(namespace, dict) else getattr(namespace, name, None)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)) or getattr(obj, "__module__", "") != "__main__":
            continue
        try:
            src = inspect.getsource(obj)
        except (OSError, TypeError):
            continue
        if _squash(src) not in code:
            return True
    return False


@dataclass
class GradedView:
    """What a check runs on: the graded module, or the session's names (``note`` says why)."""

    module: Any = None
    problem: str = ""  # a message: the section cannot stand as graded
    code: str = ""
    note: str = ""
    files: tuple[str, ...] = ()
    source: str = ""  # the graded module's text (read from the notebook): what a check run apart loads


def graded_module(exercise: str, source: str, names: tuple[str, ...], lang: str) -> GradedView:
    """Loads one exercise's graded module in a fresh module of this process, as the grader's worker does.

    Context first (its failures skipped, same budget), then the section: its failure is reported as
    the grader would report it.
    """
    from autograder.workers.worker import load_error, student_frame

    filename = f"<{exercise} as graded>"
    mod = types.ModuleType(f"_tapetrace_graded_{exercise}")
    mod.__file__ = filename
    sys.modules[mod.__name__] = mod
    finder = _standins.install_colab_standin()
    out = io.StringIO()
    try:
        prepared = _exec.prepare(source, filename, names)
        _exec.remember_source(filename, prepared.section)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            report = _exec.run(prepared, mod.__dict__, interrupts=True, load_timeout=LOAD_TIMEOUT,
                               section_guard=lambda: _time_limit(LOAD_TIMEOUT))
    except KeyboardInterrupt:
        raise
    except _CheckTimeout:
        msg = render("LOAD_TIMEOUT", lang, timeout=LOAD_TIMEOUT)
        return GradedView(problem=_text(lang, "as_graded", exercise=exercise, message=msg), code="LOAD_TIMEOUT")
    except BaseException as err:  # noqa: BLE001 - whatever the student's section raises
        files = StudentFiles((filename,))
        st = load_error(err, files)
        fields = dict(st["fields"])
        if "error" in fields:  # Python's own words, as code
            fields["error"] = f"`{fields['error']}`"
        if "where" in fields:
            where = student_frame(err.__traceback__, files)
            fields["where"] = _text(lang, "where", line=where[0], code=where[1][:120]) if where else ""
        msg = render(st["code"], lang, **fields)
        return GradedView(problem=_text(lang, "as_graded", exercise=exercise, message=msg.rstrip(".")),
                          code=st["code"])
    finally:
        _standins.remove_colab_standin(finder)
    cut = report.cut
    if cut is not None:  # a top-level statement stopped at its budget, as the grader's worker stops it
        fields = {**cut.fields(), "where": _text(lang, "where", line=cut.line, code=cut.code)}
        if cut.missing:  # a name of the contract is only defined past it: the grader's timeout
            msg = render("LOAD_CUT_MISSING", lang, **fields)
            return GradedView(problem=_text(lang, "as_graded", exercise=exercise, message=msg), code="LOAD_CUT_MISSING")
        return GradedView(module=mod, files=(filename,), note=render("LOAD_CUT", lang, **fields))
    return GradedView(module=mod, files=(filename,))


SAID: set[str] = set()  # notes said once per session (outside Jupyter every check would repeat "unread")


def said_once(key: str, lang: str) -> str:
    """The note ``public.<key>`` the first time this session asks for it, then ``""``."""
    if key in SAID:
        return ""
    SAID.add(key)
    return _text(lang, key)


def graded_view(exercise: str, namespace: Any, names: tuple[str, ...], lang: str) -> GradedView:
    """The exercise as the grader will see it in this notebook, or the session's names with a note.

    A notebook that cannot be read stays unreadable for the session: that note is said once (:func:`said_once`).
    """
    nb, where = notebook_json(namespace)
    if nb is None:
        return GradedView(module=as_module(namespace), note=said_once("unread", lang))
    exercises = tuple(snapshot()["exercises"])
    try:
        cells = _cells.notebook_cells(nb, exercises)
        sources = _cells.graded_sources(cells, exercises, contracts=contracts(exercises))
    except ValueError:
        return GradedView(module=as_module(namespace), note=said_once("unread", lang))
    source = sources.get(exercise)
    if where == "file":
        code = "\n".join([c.source for c in cells if c.kind == "code"]
                         + [_cells.split_graded(s)[0] for s in sources.values() if s])
        if _ran_other_code(namespace, list(names), code):
            return GradedView(module=as_module(namespace), note=_text(lang, "stale"))
    if source is None:
        return GradedView(problem=_text(lang, "no_section", exercise=exercise), code="MISSING_SECTION")
    view = graded_module(exercise, source, names, lang)
    view.source = source
    return view
