"""Text a student controls: cleaned once where it enters the grader's records, escaped per medium.

A submission controls many strings that end up in what an instructor or a student reads: file and
folder names, the type name and message of an exception its code raised, what a worker sends back.
They enter the grader's records through one function, :func:`clean` (the worker intake,
``autograder/workers/intake.py``; the loader's refusals; a check's message fields), which makes them
printable, one line and bounded:

- bytes, and names that are not UTF-8 (a file name's undecodable bytes reach Python as lone
  surrogates), are shown as ``\\xNN``;
- every code point that is not drawn as itself is shown as ``\\xNN``/``\\uNNNN``/``\\UNNNNNNNN``: one
  table (:func:`hidden`) from Unicode's own data -- control characters (ESC and every other C0/C1 code,
  DEL: terminal escapes, OSC clipboard writes, carriage returns), format characters (bidirectional
  overrides and isolates, zero-width spaces and joiners, the soft hyphen, word joiners, tags), line and
  paragraph separators, spaces other than the ASCII one, private-use and unassigned code points, and the
  rest of Unicode's default-ignorable ones (variation selectors, Hangul fillers); first, tabs, newlines
  and every other whitespace become spaces, runs of them one space;
- the length is capped (an ellipsis marks the cut).

Each output then escapes what its own medium gives meaning to: :func:`terminal` (the table, the
progress line, pytest's summary), :func:`csv_cell` (no live spreadsheet formula; numbers are passed as
numbers and stay numbers), :func:`markdown` (a Markdown line or table cell: no markup, no raw HTML, no
link), :func:`html_text` (HTML text or an attribute's value), :func:`html_code` (a student's code in a ``<pre>``,
its lines kept); plots draw with matplotlib's mathtext off (``$\\x$`` is text). Ships with the
students' runtime (the notebook's self-check reports exceptions too).
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Any

MESSAGE_CHARS = 300  # an exception's message, a worker's free text
NAME_CHARS = 120  # a type name, a function or file name
RECORD_CHARS = 590  # a whole message as a result records it (its fields are capped first)
ELLIPSIS = "…"

# What is shown as an escape, never as itself, on every medium: one table, from Unicode's own data (this Python's
# unicodedata). The general categories of code points not drawn as themselves -- those str.isprintable() refuses:
# Cc (controls: terminal escapes, carriage returns, DEL, C1), Cf (format: bidirectional controls, zero-width spaces
# and joiners, the soft hyphen, word joiners and invisible operators, the BOM, tags), Zl and Zp (line and paragraph
# separators), Zs but the ASCII space (a no-break, thin or ideographic space looks like " " and is not one), Co
# (private use: no agreed glyph, a font draws it as anything or nothing), Cn (unassigned in this Unicode: no known
# glyph; its reserved default-ignorable ranges are drawn as nothing), Cs (half a surrogate pair). A line first makes
# every run of whitespace one space; a code block keeps its tabs and newlines.
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Zs", "Co", "Cn", "Cs"})
# The rest of Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt: drawn as nothing), whose category is
# a mark or a letter: the variation selectors (by their Unicode names) and the assigned members of
# Other_Default_Ignorable_Code_Point (PropList.txt): the combining grapheme joiner, the Hangul fillers, the Khmer
# inherent vowels
_IGNORABLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0")
_MAYBE_HIDDEN = re.compile(r"[^\x20-\x7e]+")  # printable ASCII is drawn as itself: the rest is looked up
_SPACES = re.compile(r"[\s\u2028\u2029]+")


def hidden(char: str) -> bool:
    """Whether a code point is shown as an escape rather than as itself (the module's one table).

    >>> hidden("\\u200b"), hidden("\\x1b"), hidden("\\ufe0f"), hidden("\\xa0"), hidden("é"), hidden(" ")
    (True, True, True, True, False, False)
    """
    category = unicodedata.category(char)
    return char != " " and (category in HIDDEN_CATEGORIES or char in _IGNORABLE
                            or (category == "Mn" and "VARIATION SELECTOR" in unicodedata.name(char, "")))


def _escape_char(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _escaped(text: str, keep: str = "") -> str:
    """``text`` with every :func:`hidden` code point but those in ``keep`` shown as its escape."""
    return _MAYBE_HIDDEN.sub(lambda m: "".join(_escape_char(c) if c not in keep and hidden(c) else c
                                               for c in m.group(0)), text)


def _printable(value: Any) -> str:
    """Any value as a str with every code point encodable in UTF-8 (undecodable bytes as ``\\xNN``)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "backslashreplace")
    try:
        text = value if isinstance(value, str) else str(value)
    except Exception:  # noqa: BLE001 - a hostile __str__
        return "<unprintable>"
    if not isinstance(text, str):  # a str subclass is fine; anything else is not text
        return "<unprintable>"
    try:
        text.encode("utf-8")
        return str(text)
    except UnicodeEncodeError:  # lone surrogates: os.fsdecode's stand-ins for undecodable bytes, or forged
        return to_bytes(text).decode("utf-8", "backslashreplace")


def to_bytes(text: str) -> bytes:
    """``text`` as UTF-8, lone surrogates included: a name ``os.fsdecode`` made from undecodable bytes gets
    those bytes back; any other lone surrogate is encoded as such (never an error)."""
    undecoded = all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in text)
    return text.encode("utf-8", "surrogateescape" if undecoded else "surrogatepass")


def clean(value: Any, limit: int = MESSAGE_CHARS, strip: bool = True) -> str:
    """A student-controlled value as one printable line of at most ``limit`` characters.

    Args:
        value: a str (possibly with undecodable bytes as surrogates), bytes, or anything with a ``str``.
        limit: the most characters kept (the cut is marked with an ellipsis); 0 keeps them all.
        strip: drop leading and trailing spaces (False for names: ``" alice"`` is not ``"alice"``).

    Returns:
        The text with control and invisible characters shown as escapes, whitespace runs as one
        space, stripped, capped.

    >>> clean("evil\\x1b]52;c;aGk=\\x07 name\\r\\nok")
    'evil\\\\x1b]52;c;aGk=\\\\x07 name ok'
    """
    text = _printable(value)
    if limit and len(text) > 4 * limit + 64:  # never scan a huge string: cut first (escapes only lengthen it)
        text = text[: 4 * limit + 64]
    text = _escaped(_SPACES.sub(" ", text))
    text = text.strip() if strip else text
    if limit and len(text) > limit:
        text = text[: limit - 1].rstrip() + ELLIPSIS
    return text


def clean_tree(value: Any, limit: int = MESSAGE_CHARS, depth: int = 4) -> Any:
    """:func:`clean` on every string of a small tree of dicts and lists (numbers and bools kept).

    Deeper than ``depth``, or anything that is not plain data, becomes its cleaned ``str``.
    """
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return clean(value, limit)
    if depth > 0 and isinstance(value, dict):
        return {clean(k, NAME_CHARS): clean_tree(v, limit, depth - 1) for k, v in list(value.items())[:64]}
    if depth > 0 and isinstance(value, (list, tuple)):
        return [clean_tree(v, limit, depth - 1) for v in list(value)[:64]]
    return clean(value, limit)


def terminal(value: Any, limit: int = 0) -> str:
    """Text for a terminal line (the table, the progress line): nothing a terminal would interpret (a
    leading or trailing space is kept: two names may differ by it)."""
    return clean(value, limit, strip=False)


_FORMULA = ("=", "+", "-", "@", "\t", "\r", "\n", "|", "%")


def shorten(text: Any, limit: int = 240) -> str:
    """``text`` on one line, cut at a word boundary with " …" when longer than ``limit`` (never mid-word).

    Where a table has room for part of a message (the report's cells, the grade table): the cut text is
    a prefix of the whole, whole words only, and says it was cut.
    """
    flat = " ".join(str(text).split())
    if len(flat) <= limit:
        return flat
    cut = flat.rfind(" ", 0, limit)
    return flat if cut <= 0 else flat[:cut].rstrip(" ,;:—-") + " …"


def csv_cell(value: Any) -> Any:
    """A spreadsheet cell that is never a live formula (numbers stay numbers).

    Text is cleaned (:func:`clean`, uncapped) and prefixed with ``'`` when it starts like a formula
    (``=``, ``+``, ``-``, ``@``, a control character, ``|``, ``%``), also after leading spaces.
    """
    if value is None or isinstance(value, (bool, int, float)):
        return value
    text = clean(value, 0, strip=False)
    if text.lstrip()[:1] in _FORMULA:
        return "'" + text
    return text


# every ASCII punctuation CommonMark lets a backslash escape and that means something in a line or a table
# cell: emphasis, code, links and images (``:`` and ``.`` too: no autolink), raw HTML and entities, headings,
# lists, the cell's bar
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~&:])")


def markdown(value: Any, limit: int = 0) -> str:
    """Text for one Markdown line or table cell: cleaned (:func:`clean`: one line, ``limit`` characters)
    and every character Markdown or inline HTML gives meaning to escaped with a backslash, so that it is
    shown as written (``<img src=x>`` stays text, ``|`` does not end the cell, ``[a](b)`` is no link).

    >>> markdown("<b>x</b> | *y*")
    '\\\\<b\\\\>x\\\\</b\\\\> \\\\| \\\\*y\\\\*'
    """
    return _MARKDOWN.sub(r"\\\1", clean(value, limit))


def html_text(value: Any, limit: int = 0) -> str:
    """Text for an HTML page (an element's text or a quoted attribute's value): cleaned (:func:`clean`)
    and ``& < > " '`` escaped."""
    return html.escape(clean(value, limit, strip=False), quote=True)


def html_name(value: Any, limit: int = 0) -> str:
    """A name for an HTML page's text (a check, an exercise, a submission): :func:`html_text` with a line-break
    opportunity (``<wbr>``) after each ``_ / . -``, so that a long name wraps between its parts, never inside one.
    Element text only (never an attribute's value)."""
    return re.sub(r"([_/.-])(?=\S)", r"\1<wbr>", html_text(value, limit))


def html_code(value: Any) -> str:
    """A student's code for an HTML ``<pre>``, its lines and indentation kept: every :func:`hidden` code point but
    tab and newline shown as an escape (a bidirectional override cannot reorder what the instructor reads, a
    carriage return cannot hide a line, a zero-width space cannot make ``"ok"`` of what is not), then
    ``& < > " '`` escaped."""
    text = _printable(value).replace("\r\n", "\n")
    return html.escape(_escaped(text, keep="\t\n"), quote=True)
