"""otter's submission folder before otter reads it: what stays, what goes, what comes back.

Run in otter's own process, as root, before anything of a submission reaches otter or its kernel: by
the zip's ``run_otter.py`` before otter is imported (Gradescope, ``otter grade``: :func:`before_otter`,
:func:`after_otter`), and by the plugin's hooks (:mod:`autograder.builders.otter`: :func:`quarantine`
into :func:`work_dir`; under ``otter run`` this is the first moment the folder is stripped).

Like :mod:`autograder.builders.otter`, this module is loaded by path from the zip's ``files/``
(``run_otter.py`` registers it as ``_tapetrace_otter_folder``, the name the bridge reuses): its top
level imports the standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
import sys
import zipfile
from typing import Any

WORK_DIR = "tapetrace"  # beside otter's source/submission/results folders; root-only
# run_otter.py (Gradescope, otter grade) calls before_otter/after_otter before otter is imported; the
# plugin's before_grading strips the folder again under `otter run` (see otter.plugin_before_grading).
METADATA = "submission_metadata.json"
MAX_SUBMISSION_BYTES = 100 * 1024 * 1024  # a file taken out of a zip submission (the loader's own cap)
PDF_REFUSED = ("tapetrace: this autograder makes no PDFs (otter grade --pdfs, or pdf/token in "
               "otter_config.json). otter would export them with pandoc and LaTeX over the submission's "
               "cells, as root and outside the sandbox that runs student code, where a LaTeX command in a "
               "Markdown cell can read the autograder's files. Grades are not affected. Grade without "
               "--pdfs; for a printable copy, export the notebooks yourself (jupyter nbconvert).")


def _remove(path: str) -> None:
    """Deletes a file, link or folder (a link itself, never what it points to)."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def quarantine(submission: str, work: str) -> None:
    """Moves everything of the submission folder but the submission, otter's ``tests/`` and its
    ``__init__.py`` out of it: the kernel runs there, and the folder is first on its import path.
    ``__init__.py`` is left empty (otter only appends to it: a submission's own would keep its code)."""
    folder = os.path.dirname(submission)
    keep = {os.path.basename(submission), "tests", "__init__.py"}
    aside = os.path.join(work, "quarantine")
    os.makedirs(aside, mode=0o700, exist_ok=True)
    for name in os.listdir(folder):
        if name not in keep:
            target = os.path.join(aside, name)
            if os.path.lexists(target):
                _remove(target)
            try:
                shutil.move(os.path.join(folder, name), target)
            except OSError:
                _remove(os.path.join(folder, name))
    init = os.path.join(folder, "__init__.py")
    if os.path.lexists(init):
        _remove(init)
        open(init, "w").close()


def work_dir(submission: str) -> str:
    """The root-only folder beside otter's ``source``/``submission``/``results`` (quarantine, result)."""
    agdir = os.path.dirname(os.path.dirname(submission))
    work = os.path.join(agdir, WORK_DIR)
    os.makedirs(work, mode=0o700, exist_ok=True)
    os.chmod(work, 0o700)
    return work


def gradable_names(names: list[str]) -> list[str]:
    """What otter's Python runner looks for among a folder's top-level names (its ``glob`` skips names
    starting with a dot): the notebooks, else the ``.py`` files but ``__init__.py``."""
    visible = sorted(n for n in names if not n.startswith("."))
    notebooks = [n for n in visible if n.endswith(".ipynb")]
    return notebooks or [n for n in visible if n.endswith(".py") and n != "__init__.py"]


def _unzip_gradable(archive: str, folder: str) -> None:
    """Writes the zip's top-level gradable files (by :func:`gradable_names`) into ``folder``; nothing else of it."""
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = {i.filename: i for i in zf.infolist() if not i.is_dir() and "/" not in i.filename
                     and "\\" not in i.filename and i.filename not in ("", ".", "..")}
            for name in gradable_names(list(infos)):
                info = infos[name]
                if info.file_size > MAX_SUBMISSION_BYTES:
                    continue
                with zf.open(info) as src:
                    data = src.read(MAX_SUBMISSION_BYTES + 1)
                if len(data) <= MAX_SUBMISSION_BYTES:
                    fd = os.open(os.path.join(folder, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                                 0o644)
                    with os.fdopen(fd, "wb") as fh:
                        fh.write(data)
    except (OSError, zipfile.BadZipFile, RuntimeError, ValueError, NotImplementedError):
        return  # nothing gradable comes out of it: otter reports "No gradable files found in submission"


def strip_submission(folder: str, unzip: bool = False, aside: str | None = None) -> list[str]:
    """Leaves in otter's submission folder only what otter's runner grades, before otter reads it.

    Everything else a submission brings (hidden files such as a ``.OTTER_LOG`` that otter would
    unpickle as root, folders, links, other files) is deleted. Several notebooks are all kept, so that
    otter refuses them with its own message ("More than one .ipynb file found in submission").

    Args:
        folder: ``AUTOGRADER/submission`` as Gradescope or ``otter grade`` filled it.
        unzip: a zip submission (``otter grade --ext zip``): its one ``*.zip`` gives its top-level
            notebook (else ``.py``) and nothing else; the zip goes too (into ``aside`` when given).
        aside: a private folder for that zip (``otter grade`` copies it back out of the container
            afterwards, and loses the row when it is gone; :func:`after_otter` puts it back).

    Returns:
        The names left, sorted.
    """
    names = os.listdir(folder)
    archives = [n for n in names if n.endswith(".zip") and not n.startswith(".") and _regular(os.path.join(folder, n))]
    if unzip and len(archives) == 1 and not gradable_names(names):
        _unzip_gradable(os.path.join(folder, archives[0]), folder)
        if aside is not None:
            os.makedirs(aside, mode=0o700, exist_ok=True)
            shutil.move(os.path.join(folder, archives[0]), os.path.join(aside, archives[0]))
        names = os.listdir(folder)
    keep = {n for n in gradable_names(names) if _regular(os.path.join(folder, n))}
    for name in names:
        if name not in keep:
            _remove(os.path.join(folder, name))
    return sorted(keep)


def ensure_metadata(path: str) -> bool:
    """Makes otter's ``submission_metadata.json`` a JSON object (``{}``) when it is missing, empty or not one.

    ``otter grade``'s Dockerfile ``touch``es an empty file, and otter's runner ``json.load``s it whenever
    ``otter_config.json`` names a plugin: every submission would fail with ``JSONDecodeError``.

    Returns:
        Whether the file was (re)written.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            if isinstance(json.load(fh), dict):
                return False
    except (OSError, ValueError):
        pass
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("{}\n")
    return True


def wants_pdf(config: dict[str, Any]) -> bool:
    """Whether an otter config asks its runner for PDFs (the condition otter's runner uses)."""
    return bool(config.get("pdf")) or config.get("token") is not None


def before_otter(agdir: str) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """``run_otter.py``, before otter is imported: metadata made valid, the submission folder stripped, PDFs off.

    Args:
        agdir: the autograder folder (``/autograder``) holding ``source/``, ``submission/``, ``results/``.

    Returns:
        ``(overrides, after)``: settings for otter's runner (``zips`` off once this unzipped the
        submission; ``pdf``/``token`` off), and what :func:`after_otter` restores for ``otter grade``,
        which copies the submission file and ``<name>.pdf`` back out of each container and loses the
        row when one is missing: ``notes`` (PDF paths that get the refusal) and ``restore`` (the zip
        submission, kept aside while otter runs).
    """
    ensure_metadata(os.path.join(agdir, METADATA))
    try:
        with open(os.path.join(agdir, "source", "otter_config.json"), encoding="utf-8") as fh:
            config = json.load(fh)
    except (OSError, ValueError):
        config = {}
    config = config if isinstance(config, dict) else {}
    folder = os.path.join(agdir, "submission")
    overrides: dict[str, Any] = {}
    after: dict[str, list[str]] = {"notes": [], "restore": []}
    if wants_pdf(config):
        after["notes"] = [os.path.join(folder, n) for n in sorted(os.listdir(folder))
                          if n.endswith(".pdf") and not n.startswith(".")]
        overrides.update(pdf=False, token=None)
        print(PDF_REFUSED, file=sys.stderr)
    aside = os.path.join(agdir, WORK_DIR, "arrived")
    if config.get("zips"):
        overrides["zips"] = False
    strip_submission(folder, unzip=bool(config.get("zips")), aside=aside)
    if os.path.isdir(aside):
        after["restore"] = [os.path.join(folder, n) for n in sorted(os.listdir(aside))]
    return overrides, after


def after_otter(after: dict[str, list[str]]) -> None:
    """``run_otter.py``, after otter's runner: the zip submission is back where otter grade copies it from,
    and each PDF otter would copy out is a one-page refusal note."""
    for path in after.get("restore", []):
        src = os.path.join(os.path.dirname(os.path.dirname(path)), WORK_DIR, "arrived", os.path.basename(path))
        _remove(path)
        shutil.move(src, path)
    for path in after.get("notes", []):
        _remove(path)
        with open(path, "wb") as fh:
            fh.write(note_pdf(PDF_REFUSED))


def note_pdf(text: str, width: int = 88) -> bytes:
    """A one-page PDF (US letter, Helvetica 10 pt) holding ``text`` wrapped at ``width`` characters."""
    import textwrap

    lines = textwrap.wrap(text.encode("latin-1", "replace").decode("latin-1"), width)
    body = "".join("(" + re.sub(r"([\\()])", r"\\\1", line) + ") Tj T* " for line in lines)
    content = f"BT /F1 10 Tf 14 TL 54 738 Td {body}ET".encode("latin-1")
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> "
               b"/Contents 5 0 R >>", b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
               b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content)]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (i, obj)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)

