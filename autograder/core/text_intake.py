"""A submission's code at intake: decoded and made safe once, where it enters the grader.

Every text a submission yields (a ``.py`` file's bytes, a notebook's or a jupytext script's cell) passes
through :func:`normalise_source` once, in the loader and its cells (``autograder/submissions/``), before
anything else reads it. What comes out is safe everywhere downstream: it encodes as UTF-8 (the scratch
file the worker loads, hashes, JSON rows, CSV, HTML and Markdown outputs, similarity's fingerprints) and
holds no NUL.

The rule (docs/how-it-works.md, "A submission's text"):

- **bytes** (a ``.py`` file) are decoded as Python reads a source file: a UTF-8, UTF-16 or UTF-32 byte order
  mark, else a PEP 263 ``coding:`` line (one the bytes do not match is ignored, whatever its codec raises; a
  domain-name encoding, ``idna`` or ``punycode``, is no file's encoding and is ignored too), else UTF-8. A file
  that is not valid UTF-8 and says nothing (an editor's Latin-1 / Windows-1252 "ANSI" file) is read as
  Windows-1252 (Latin-1 where that fails) when none of it is UTF-8, else as UTF-8 with U+FFFD for the bytes
  that are not; the grader reads what the student wrote, it does not judge the file's encoding (``python
  file.py`` would refuse such a file).
- **characters Python cannot read** -- a lone surrogate (half of a character: a notebook's JSON can hold
  ``"\\ud83d"``, half an emoji a paste left) and NUL -- become U+FFFD and are recorded as
  :class:`TextFault`\\ s. IPython cannot run a cell that holds one (``run_cell`` fails it before any of its
  code runs: ``UnicodeEncodeError``, ``source code string cannot contain null bytes``; a kernel client cannot
  even send it), and Python cannot compile such a file: the cells layer keeps the faults, and the exercise
  whose code holds one fails to load as the student's own error (``LOAD_SURROGATE``, ``LOAD_NULL_CHAR``), as
  "Run all" fails that cell; a cell outside the exercise's section that holds one fails in "Run all" too, so
  it is left out of the context.

Pure and total: any ``str`` or ``bytes`` gives a result, never an exception; the same input, the same result.
Ships with the students' runtime (the notebook's self-check reads its cells through it).
"""

from __future__ import annotations

import codecs
import io
import re
import tokenize
from dataclasses import dataclass

REPLACEMENT = "\ufffd"
MAX_FAULTS = 16  # faults recorded per text (every one is replaced; the first is the one reported)

_UNREADABLE = re.compile("[\x00\ud800-\udfff]")
_LINE_END = re.compile(r"\r\n|\r|\n")  # Python's line ends (its tokenizer's line numbers)
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))
_UTF8 = frozenset({"utf-8", "utf-8-sig"})
# codecs of domain names (RFC 3490, RFC 3492), not of files: no editor saves a file in them, and Python's decoder of
# them is quadratic in a label's length (a 1.6 MB file: 90 s of the grader's time before it fails)
_NOT_FILE_ENCODINGS = frozenset({"idna", "punycode"})


@dataclass(frozen=True)
class TextFault:
    """One character Python cannot read, where it was.

    Attributes:
        line: 1-based line of the text (``\\n``, ``\\r\\n`` and ``\\r`` end a line, as for Python).
        column: 1-based column (characters) in that line.
        char: the code point: 0 (NUL) or 0xD800..0xDFFF (a lone surrogate).
    """

    line: int
    column: int
    char: int

    @property
    def kind(self) -> str:
        """``"nul"`` or ``"surrogate"``."""
        return "nul" if self.char == 0 else "surrogate"


@dataclass(frozen=True)
class SourceText:
    """A text after intake.

    Attributes:
        text: the text, safe: every code point encodes as UTF-8, no NUL, no lone surrogate.
        faults: the first :data:`MAX_FAULTS` characters Python cannot read (each now U+FFFD), in order.
        encoding: what the bytes were read as (``"str"``: the input was already text).
    """

    text: str
    faults: tuple[TextFault, ...] = ()
    encoding: str = "str"


def _declared(data: bytes) -> str | None:
    """The codec a PEP 263 ``coding:`` line names, where Python could read a file with it; else None (no line, an
    unknown codec, one that is no text encoding such as rot13, one that is not ASCII-compatible such as UTF-16, a
    domain-name encoding, a UTF-8 BOM against it)."""
    try:
        name, _lines = tokenize.detect_encoding(io.BytesIO(data).readline)
        name = codecs.lookup(name).name
        if name in _NOT_FILE_ENCODINGS or b"# coding".decode(name) != "# coding":
            return None
    except Exception:  # noqa: BLE001 - SyntaxError, LookupError (no such codec, no text encoding), ValueError...
        return None
    return name


def decode_source(data: bytes) -> tuple[str, str]:
    """A source file's bytes as text (see the module's rule), and the encoding they were read as.

    Args:
        data: the file's bytes.

    Returns:
        ``(text, encoding)``; the text may still hold NUL (:func:`normalise_source` replaces it), never a
        byte order mark. A ``coding:`` line the bytes do not match is read as if it were not there.
    """
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return data.decode(codec, "replace"), codec
    declared = _declared(data)
    if declared is not None and declared not in _UTF8:
        try:
            return data.decode(declared), declared
        except Exception:  # noqa: BLE001 - the codec refuses the bytes, however it says so: the line lies
            pass
    codec = "utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8"
    try:
        return data.decode(codec), codec
    except UnicodeDecodeError:
        pass
    loose = data.decode(codec, "replace")
    if any(ord(c) > 0x7F and c != REPLACEMENT for c in loose):  # some of it is UTF-8: keep that, mark the rest
        return loose, codec
    try:
        return data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def _faults(text: str) -> tuple[str, tuple[TextFault, ...]]:
    faults: list[TextFault] = []
    line, line_start, scanned = 1, 0, 0
    for m in _UNREADABLE.finditer(text):
        if len(faults) >= MAX_FAULTS:
            break
        for end in _LINE_END.finditer(text, scanned, m.start()):
            line, line_start = line + 1, end.end()
        scanned = m.start()
        faults.append(TextFault(line, m.start() - line_start + 1, ord(m.group(0))))
    return _UNREADABLE.sub(REPLACEMENT, text), tuple(faults)


def normalise_source(data: str | bytes) -> SourceText:
    """A submission's text as the grader keeps it: decoded, every character Python cannot read replaced.

    Args:
        data: a ``.py`` file's bytes (decoded with :func:`decode_source`), or a text (a notebook cell's
            source, as JSON gave it: it may hold lone surrogates and NUL).

    Returns:
        A :class:`SourceText`: its ``text`` encodes as UTF-8 and holds no NUL; its ``faults`` say where a lone
        surrogate or a NUL was (the text's own lines and columns), each now U+FFFD.

    >>> normalise_source("# half \\ud83d\\nx = 1\\n").faults
    (TextFault(line=1, column=8, char=55357),)
    >>> normalise_source(b"\\xef\\xbb\\xbfs = 'caf\\xc3\\xa9'\\n").text
    "s = 'café'\\n"
    """
    if isinstance(data, str):
        text, encoding = str(data), "str"
    else:
        text, encoding = decode_source(bytes(data))
    clean, faults = _faults(text)
    return SourceText(clean, faults, encoding)
