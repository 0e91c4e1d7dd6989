"""Python 3.12's f-strings (PEP 701) for an older grader: rewritten into code Python 3.11 compiles.

Colab runs Python 3.12, where an f-string may reuse its own quotes inside its braces
(``f"{params["W"].shape}"``), hold backslashes, comments and line breaks there, and nest f-strings
with the same quotes. A grader on Python 3.11 rejects such code, which is right on the student's
Python. :func:`parse_source` is ``ast.parse`` that, on an older Python and only when the source does not
parse, tries the source with each f-string rewritten by :func:`rewrite_fstrings` into an expression of the
same meaning::

    f"a{x!r:>{w}}b"   ->   ('a' + '{0!r:{1}}'.format((x), ('>' + '{0}'.format((w)))) + 'b')

Every line keeps its number (literal text is cut at the source's own line breaks, expressions keep
theirs), so tracebacks and messages still point at the student's lines. ``str.format`` on a literal
looks up no name, so a student's own ``format``, ``str`` or ``repr`` changes nothing. When the
rewritten source does not parse either, the original ``SyntaxError`` stands. Nothing here runs
student code.
"""

from __future__ import annotations

import ast
import sys
import warnings

from autograder.core import syntax as _syntax

_PREFIXES = frozenset({"", "r", "u", "b", "br", "rb", "f", "fr", "rf"})
_NEWEST_FSTRINGS = (3, 12)


class _Unreadable(Exception):
    """The source is not a well-formed 3.12 source as far as strings go: no rewrite."""


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_" or ord(c) > 127


def _literal(piece: str, raw: bool) -> str:
    """A literal part's value as Python literals, one per source line (joined by the source's line breaks)."""
    if not piece:
        return ""
    segs = piece.split("\n")
    lits = []
    for i, seg in enumerate(segs):
        text = seg if i == len(segs) - 1 else seg + "\n"
        lits.append(repr(text if raw else _unescape(text)))
    return "\n".join(lits)


def _unescape(seg: str) -> str:
    """The value of a non-raw literal segment (its escapes applied), through Python's own literal parser."""
    buf = []
    i = 0
    while i < len(seg):
        c = seg[i]
        if c == "\\":
            nxt = seg[i + 1:i + 2]
            if nxt == "\n":  # a line continuation inside the string: no character
                i += 2
                continue
            if nxt == "":  # a backslash before a replacement field: itself
                buf.append("\\\\")
                i += 1
                continue
            buf.append(seg[i:i + 2])
            i += 2
            continue
        buf.append({'"': '\\"', "\n": "\\n"}.get(c, c))
        i += 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an invalid escape keeps its backslash, as in the f-string
        try:
            value = _syntax.literal('"' + "".join(buf) + '"')
        except (SyntaxError, ValueError) as err:
            raise _Unreadable(str(err)) from err
    if not isinstance(value, str):
        raise _Unreadable("not a text literal")
    return value


class _Rewriter:
    """One pass over a source: Python code copied, every f-string (with the strings beside it) rewritten."""

    def __init__(self, src: str) -> None:
        self.s = src
        self.pos = 0

    def peek(self, k: int = 0, n: int = 1) -> str:
        return self.s[self.pos + k:self.pos + k + n]

    # ------------------------------------------------------------------ code
    def code(self, field: bool) -> str:
        """Python code up to the end (or, in a replacement field, to its ``=``, ``!``, ``:`` or ``}``)."""
        s, out, depth = self.s, [], 0
        while self.pos < len(s):
            c = s[self.pos]
            if field and depth == 0:
                if c in "<>=!" and self.peek(1) == "=":
                    out.append(s[self.pos:self.pos + 2])
                    self.pos += 2
                    continue
                if c in "}:=!":
                    break
            if c == "#":
                end = s.find("\n", self.pos)
                end = len(s) if end < 0 else end
                out.append(s[self.pos:end])
                self.pos = end
            elif c in "'\"" or (_word_char(c) and self._prefixed_string()):
                out.append(self.strings(field or depth > 0))
            elif _word_char(c):
                start = self.pos
                while self.pos < len(s) and _word_char(s[self.pos]):
                    self.pos += 1
                out.append(s[start:self.pos])
            else:
                depth += 1 if c in "([{" else -1 if c in ")]}" else 0
                out.append(c)
                self.pos += 1
        return "".join(out)

    def _prefixed_string(self) -> bool:
        """Whether a string literal starts here (a prefix such as ``rb`` or ``F``, then a quote)."""
        s, i = self.s, self.pos
        if i > 0 and _word_char(s[i - 1]):
            return False
        j = i
        while j < len(s) and _word_char(s[j]):
            j += 1
        return j < len(s) and s[j] in "'\"" and s[i:j].lower() in _PREFIXES

    def _string_starts(self) -> bool:
        c = self.peek()
        return c in ("'", '"') or (c != "" and _word_char(c) and self._prefixed_string())

    def strings(self, nested: bool) -> str:
        """Adjacent string literals (implicitly joined); with an f-string among them, one expression."""
        start = self.pos
        items = [self.string()]
        gaps = []
        while True:
            back = self.pos
            gap = self.gap(nested)
            if gap is None or not self._string_starts():
                self.pos = back
                break
            gaps.append(gap)
            items.append(self.string())
        if not any(is_f for _text, is_f in items):
            return self.s[start:self.pos]
        if len(items) == 1:
            return items[0][0]  # already one parenthesised expression
        out = ["(", items[0][0]]
        for gap, (text, _is_f) in zip(gaps, items[1:]):
            out += [gap, "+ ", text]
        return "".join(out + [")"])

    def gap(self, nested: bool) -> str | None:
        """Blanks between two adjacent literals (line breaks and comments only inside brackets)."""
        s, start = self.s, self.pos
        while self.pos < len(s):
            c = s[self.pos]
            if c in " \t\f":
                self.pos += 1
            elif c == "\\" and self.peek(1) == "\n":
                self.pos += 2
            elif nested and c == "\n":
                self.pos += 1
            elif nested and c == "#":
                end = s.find("\n", self.pos)
                self.pos = len(s) if end < 0 else end
            else:
                break
        return s[start:self.pos]

    # ------------------------------------------------------------------ literals
    def string(self) -> tuple[str, bool]:
        """One string literal: ``(its rewritten text, whether it was an f-string)``."""
        s, start = self.s, self.pos
        while s[self.pos] not in "'\"":
            self.pos += 1
        prefix = s[start:self.pos].lower()
        q = s[self.pos]
        quote = q * 3 if self.peek(0, 3) == q * 3 else q
        self.pos += len(quote)
        if "f" in prefix:
            return self.fstring("r" in prefix, quote), True
        while True:
            if self.pos >= len(s):
                raise _Unreadable("unterminated string")
            if s[self.pos] == "\\":
                self.pos += 2
            elif s.startswith(quote, self.pos):
                self.pos += len(quote)
                return s[start:self.pos], False
            elif s[self.pos] == "\n" and len(quote) == 1:
                raise _Unreadable("unterminated string")
            else:
                self.pos += 1

    def _escape(self, raw: bool, piece: list[str]) -> None:
        """A backslash in an f-string's literal text (``\\N{...}`` whole; before a brace, itself)."""
        s, nxt = self.s, self.peek(1)
        if not raw and nxt == "N" and self.peek(2) == "{":
            end = s.find("}", self.pos)
            if end < 0:
                raise _Unreadable("unterminated \\N{...}")
            piece.append(s[self.pos:end + 1])
            self.pos = end + 1
        elif nxt in ("{", "}", ""):
            piece.append("\\")
            self.pos += 1
        else:
            piece.append(s[self.pos:self.pos + 2])
            self.pos += 2

    def fstring(self, raw: bool, quote: str) -> str:
        """An f-string's body (after its opening quote) as a parenthesised expression."""
        s, parts, piece = self.s, [], []

        def flush() -> None:
            if piece:
                parts.append(_literal("".join(piece), raw))
                piece.clear()

        while True:
            if self.pos >= len(s):
                raise _Unreadable("unterminated f-string")
            c = s[self.pos]
            if s.startswith(quote, self.pos):
                self.pos += len(quote)
                break
            if c == "\n" and len(quote) == 1:
                raise _Unreadable("unterminated f-string")
            if c == "\\":
                self._escape(raw, piece)
            elif c in "{}" and self.peek(1) == c:
                piece.append(c)
                self.pos += 2
            elif c == "{":
                flush()
                self.pos += 1
                parts.append(self.field(raw, quote))
            elif c == "}":
                raise _Unreadable("single '}' in an f-string")
            else:
                piece.append(c)
                self.pos += 1
        flush()
        return "(" + " + ".join(parts) + ")" if parts else "''"

    def field(self, raw: bool, quote: str) -> str:
        """A replacement field (after its ``{``): ``expr[=][!conv][:spec]}`` as an expression."""
        s, start = self.s, self.pos
        expr = self.code(field=True)
        if not expr.strip() or self.pos >= len(s):
            raise _Unreadable("empty or unterminated replacement field")
        label = ""
        if self.peek() == "=":
            self.pos += 1
            while self.peek() in (" ", "\t"):
                self.pos += 1
            label = repr(s[start:self.pos])
        conv = ""
        if self.peek() == "!":
            conv = self.peek(1)
            if conv not in ("r", "s", "a"):
                raise _Unreadable("bad conversion")
            self.pos += 2
        spec = None
        if self.peek() == ":":
            self.pos += 1
            spec = self.spec(raw, quote)
        if self.peek() != "}":
            raise _Unreadable("replacement field not closed")
        self.pos += 1
        if label and not conv and spec is None:
            conv = "r"  # f"{x=}" shows repr(x)
        fmt = "{0" + ("!" + conv if conv else "") + (":{1}" if spec is not None else "") + "}"
        call = f"{fmt!r}.format(({expr})" + (f", {spec})" if spec is not None else ")")
        return f"{label} + {call}" if label else call

    def spec(self, raw: bool, quote: str) -> str:
        """A format spec (after its ``:``, up to the field's ``}``), nested fields included, as an expression."""
        s, parts, piece = self.s, [], []
        while True:
            if self.pos >= len(s) or s.startswith(quote, self.pos) or (s[self.pos] == "\n" and len(quote) == 1):
                raise _Unreadable("unterminated format spec")
            c = s[self.pos]
            if c == "}":
                break
            if c == "\\":
                self._escape(raw, piece)
            elif c == "{":
                if piece:
                    parts.append(_literal("".join(piece), raw))
                    piece.clear()
                self.pos += 1
                parts.append(self.field(raw, quote))
            else:
                piece.append(c)
                self.pos += 1
        if piece:
            parts.append(_literal("".join(piece), raw))
        return "(" + " + ".join(parts) + ")" if parts else "''"


def rewrite_fstrings(source: str) -> str | None:
    """The source with every f-string rewritten as an expression Python 3.11 compiles, lines kept.

    Args:
        source: Python source (Python 3.12's f-string grammar, PEP 701).

    Returns:
        The rewritten source (as many lines as ``source``, each statement on its line), or ``None``
        when its strings are not well formed (an unterminated one, a bad replacement field).
    """
    text = source.replace("\r\n", "\n").replace("\r", "\n")
    try:
        return _Rewriter(text).code(field=False)
    except (_Unreadable, IndexError, RecursionError):
        return None


def parse_source(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse``, which on Python older than 3.12 also accepts Python 3.12's f-strings (:func:`rewrite_fstrings`).

    A source that parses is parsed as it is; one that does not is rewritten, and the rewrite's tree
    is used only if it parses (its line numbers are the source's).

    Args:
        source: A module's source.
        filename: The name messages and tracebacks give it.

    Returns:
        The module's tree.

    Raises:
        SyntaxError: the source does not parse, rewritten or not (the original error).
        ValueError: the source holds a null byte.
    """
    try:
        return _syntax.parse(source, filename)
    except SyntaxError as err:
        if sys.version_info >= _NEWEST_FSTRINGS:
            raise
        rewritten = rewrite_fstrings(source)
        if rewritten is None:
            raise
        try:
            return _syntax.parse(rewritten, filename)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            raise err from None
