"""Per-student feedback files: each exercise's tests with points and safe messages, as Markdown or HTML.

Owns :func:`feedback_markdown`, :func:`feedback_html` (a standalone page), the file name a submission's
feedback gets (:func:`safe_stem`: harmless characters, one file per submission; :func:`feedback_names`:
the path's differing part where file names repeat) and writing them
(:func:`write_feedback`), with the feedback's fixed words and the statuses' names by language
(:data:`LABELS`, :data:`STATUS_WORDS`). Markdown and HTML escape markup; the records' text was cleaned
where it entered them (``autograder/core/text.py``).
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from autograder.core.i18n import section
from autograder.core.records import ResultRow
from autograder.core.text import clean, html_name, to_bytes
from autograder.reports.report import _fmt, atomic_write

# The feedback's fixed words and the statuses' names, by language (UI text: autograder/messages/report.py).
LABELS: dict[str, dict[str, str]] = section("report")
STATUS_WORDS: dict[str, dict[str, str]] = section("status")

# -------------------------------------------------------------------- feedback
_WORD = re.compile(r"\w+", re.ASCII)  # a check or exercise name as the suites write them: shown as it is


def _md(text: Any) -> str:
    """Markdown-safe text: cleaned, escaped only where a character would be markup (:func:`_md_escape`)."""
    return _md_escape(clean(text, 0))


# Markdown escapes only where a character would mean something, so that the raw .md stays readable as text
# (``shape (4, 10) - got [4, 3]`` unchanged) while nothing a student wrote becomes markup: no link, image, emphasis,
# code span, HTML tag or entity, autolink, cell break, heading, list or quote. A backslash shows each as written.
_MD_ALWAYS = frozenset("`|~${")  # code spans, the cell's bar, strikethrough, math, attribute lists
_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_MD_START = re.compile(r"^(\s*)(?:([#>+\-=*\[])|(\d+)([.)]))")  # what would start a block at the text's start
_SCHEME = re.compile(r"(?i)\b(?:https?|ftp|mailto|xmpp|file|javascript|data):")
_WWW = re.compile(r"(?i)(?<![\w.])(www)\.")
_ENTITY = re.compile(r"&(?=#?\w+;)")
_TAG = re.compile(r"<(?=[A-Za-z/!?])")


def _md_char(text: str, i: int) -> str:
    """The ``i``-th character of ``text`` as Markdown shows it written: escaped only where it has a meaning."""
    c, prev, nxt = text[i], text[i - 1] if i else " ", text[i + 1] if i + 1 < len(text) else ""
    if c in _MD_ALWAYS:
        return "\\" + c
    if c == "\\":  # a backslash escapes the punctuation after it (or, at the end, what follows the text)
        return "\\\\" if not nxt or nxt in _PUNCT else c
    if c == "*":  # emphasis unless it stands alone between spaces
        return c if prev.isspace() and nxt.isspace() else "\\*"
    if c == "_":  # emphasis unless inside a word (snake_case stays as written)
        return c if prev.isalnum() and nxt.isalnum() else "\\_"
    if c == "]":  # a link, an image or a reference needs "](" or "]["
        return "\\]" if nxt in ("(", "[") else c
    if c == "@":  # an e-mail autolink needs a word on both sides
        return "\\@" if (prev.isalnum() or prev in "._+-") and (nxt.isalnum() or nxt in "_-") else c
    return c


def _md_escape(text: str) -> str:
    out = "".join(_md_char(text, i) for i in range(len(text)))
    out = _TAG.sub("&lt;", _ENTITY.sub("&amp;", out))  # an HTML tag, comment or <autolink>; an entity
    out = _WWW.sub(r"\1\\.", _SCHEME.sub(lambda m: m.group(0)[:-1] + "\\:", out))
    m = _MD_START.match(out)
    if m:  # a heading, quote, list, setext line, reference definition or numbered list at the start
        out = (m.group(1) + "\\" + m.group(2) + out[m.end():] if m.group(2)
               else m.group(1) + m.group(3) + "\\" + m.group(4) + out[m.end():])
    return out


def md_code_span(text: Any, cell: bool = False) -> str:
    """``text`` as one Markdown code span, shown exactly as written (``""`` for no text): fenced by more backticks
    than any run of them inside, with a space inside each end where the text starts or ends with a backtick, or
    with a space at both ends (which CommonMark would strip); in a table ``cell`` each ``|`` as ``\\|`` (a table
    unescapes it, even inside code). Nothing inside a code span is markup: no link, tag, entity or emphasis."""
    code = clean(text, 0)
    if not code:
        return ""
    if cell:
        code = code.replace("|", "\\|")
    fence = "`" * (1 + max((len(run) for run in re.findall(r"`+", code)), default=0))
    pad = code.startswith("`") or code.endswith("`") or (code[0] == code[-1] == " " and code.strip(" ") != "")
    return f"{fence} {code} {fence}" if pad else f"{fence}{code}{fence}"


def _md_inline_code(text: str, cell: bool = False) -> str:
    """A message with the catalogue's `code` spans kept as code spans (:func:`md_code_span`) and everything around
    them escaped (:func:`_md_escape`): one form of code in Markdown, backticks, never an HTML tag."""
    out = []
    for i, part in enumerate(clean(text, 0).split("`")):
        out.append(md_code_span(part, cell) if i % 2 else _md_escape(part))
    return "".join(out).strip()


def _status_word(status: str, lang: str) -> str:
    return STATUS_WORDS.get(lang, {}).get(status, status)


def _override_words(rec: Mapping[str, Any], lab: dict[str, str]) -> list[str]:
    """A record's manual overrides in words (autograder/reports/overrides.py), the autograder's score kept."""
    from autograder.reports.overrides import words

    return words(rec, lab.get("by", "by"), lab.get("autograder", "autograder"))


def lost_points(res: ResultRow) -> list[tuple[str, Mapping[str, Any], float]]:
    """The exercises of a result that lost points, most lost first (then in the result's order): ``(exercise,
    its record, points lost)``."""
    found = [(ex, e, float(e.get("max_score") or 0.0) - float(e.get("score") or 0.0))
             for ex, e in res["exercises"].items()]
    return sorted([f for f in found if f[2] > 1e-9], key=lambda f: -f[2])


def _lost_why(e: Mapping[str, Any], lang: str, lab: dict[str, str]) -> str:
    """Why an exercise lost points, first thing: its own message (it did not load...), else its first failed test's,
    else a manual override's words, else its status."""
    if e.get("message"):
        return str(e["message"])
    failed = next((str(t["message"]) for t in e.get("tests") or [] if not t.get("passed") and t.get("message")), "")
    return failed or next(iter(_override_words(e, lab)), "") or _status_word(str(e.get("status")), lang)


def feedback_markdown(res: ResultRow, lang: str = "en", title: str | None = None) -> str:
    """Per-student feedback: each exercise's tests with points and safe messages.

    ``title`` names the submission in the heading (default: its file name; :func:`feedback_names`
    gives the path's differing part where several submissions share a file name).
    """
    lab = LABELS.get(lang, LABELS["en"])
    out = [f"# {lab['feedback']}: {_md(title or Path(str(res['submission'])).name)}", "",
           f"**{lab['total']}: {_fmt(res['total'])} / {_fmt(res['max_total'])}**", ""]
    if not res["exercises"]:
        out.append(lab["no_exercises"])
    elif lost_points(res):  # what lost points first: the rest is every exercise in order
        out += [f"## {lab['lost']}", ""]
        for ex, e, n in lost_points(res):
            name = ex if _WORD.fullmatch(str(ex)) else _md(ex)
            why = _md_inline_code(_lost_why(e, lang, lab))
            out.append(f"- {name} — {_fmt(e['score'])} / {_fmt(e['max_score'])} (−{_fmt(n)})" + (f": {why}" if why else ""))
        out.append("")
    else:
        out += [lab["lost_none"], ""]
    for ex, e in res["exercises"].items():
        heading = ex if _WORD.fullmatch(str(ex)) else _md(ex)
        out.append(f"## {heading} — {_fmt(e['score'])} / {_fmt(e['max_score'])} "
                   f"({_md(_status_word(e['status'], lang))})")
        out.append("")
        if e.get("message"):
            out.append(f"> {_md_inline_code(e['message'])}")
            out.append("")
        out += [*(f"- {_md(w)}" for w in _override_words(e, lab)), *([""] if _override_words(e, lab) else [])]
        out.append(f"| | {lab['test']} | {lab['points']} | |")
        out.append("|---|---|---|---|")
        for t in e["tests"]:
            mark = "✅" if t["passed"] else "❌"
            kind = lab["hidden"] if t.get("hidden") else lab["public"]
            msg = _md_inline_code(t["message"], cell=True) if t.get("message") and not t["passed"] else ""
            msg = " · ".join([msg, *(_md(w) for w in _override_words(t, lab))]).strip(" ·")
            name = md_code_span(t["name"], cell=True)
            out.append(f"| {mark} | {name} ({kind}) | {_fmt(t['score'])} / {_fmt(t['max_score'])} | {msg} |")
        out.append("")
    return "\n".join(out)


VIEWPORT = "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"  # reads on a phone (390 px)
_FEEDBACK_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;
color:#1d2330;line-height:1.45}
h1{font-size:1.5rem;margin-bottom:.2rem;overflow-wrap:anywhere} h2{font-size:1.15rem;margin:1.6rem 0 .4rem;
display:flex;flex-wrap:wrap;gap:0 .6rem;align-items:baseline;overflow-wrap:anywhere} .total{font-size:1.2rem;
font-weight:600} .meta{color:#667;font-size:.85rem}
.score{margin-left:auto;font-variant-numeric:tabular-nums;white-space:nowrap} .bar{height:6px;background:#e6e8ef;
border-radius:3px} .bar>span{display:block;height:6px;border-radius:3px;background:#2f9e44}
.status{font-size:.8rem;color:#667;white-space:nowrap}
table{border-collapse:collapse;width:100%;font-size:.92rem} td,th{padding:.3rem .5rem;border-bottom:1px solid #eee;
text-align:left;vertical-align:top} td.pts{white-space:nowrap;font-variant-numeric:tabular-nums}
td.msg{overflow-wrap:anywhere;min-width:12rem}
tr.fail td:first-child{color:#c92a2a} tr.pass td:first-child{color:#2f9e44} .note{background:#fff4e6;
border-left:3px solid #f08c00;padding:.4rem .7rem;margin:.3rem 0 .6rem;overflow-wrap:anywhere} code{background:#f1f3f5;
padding:0 .2rem;border-radius:3px} .kind{color:#889;font-size:.8rem;white-space:nowrap}
.lost{background:#f8f9fa;border-radius:6px;padding:.3rem .9rem .5rem;margin:1rem 0} .lost h2{margin:.3rem 0}
.lost ul{margin:0;padding-left:1.2rem} .lost li{margin:.3rem 0;overflow-wrap:anywhere} .lost .pts{white-space:nowrap;
font-variant-numeric:tabular-nums} .lost .why{color:#495057;font-size:.9rem}
@media (max-width:40rem){table,tbody,tr{display:block} tr{border-bottom:1px solid #eee;padding:.2rem 0}
td{display:inline-block;border:0;padding:.1rem .4rem} td.msg{display:block;min-width:0}}
"""


def _html_msg(text: str) -> str:
    out = []
    for i, part in enumerate(clean(text, 0).split("`")):
        out.append(f"<code>{html.escape(part)}</code>" if i % 2 and part else html.escape(part))
    return "".join(out)


def _lost_html(res: ResultRow, lang: str, lab: dict[str, str]) -> list[str]:
    """The top of a feedback page: the exercises that lost points, most first, each linked to its section with the
    first reason (on a phone the page is long); or that none did, or that nothing was graded."""
    if not res["exercises"]:
        return [f"<p>{lab['no_exercises']}</p>"]
    lost = lost_points(res)
    if not lost:
        return [f"<p class=\"lost none\">{html.escape(lab['lost_none'])}</p>"]
    items = []
    for ex, e, n in lost:
        why = _lost_why(e, lang, lab)
        name = html.escape(clean(ex, 0))
        items.append(f"<li><a href=\"#{name}\">{name}</a> <span class=\"pts\">{_fmt(e['score'])} / "
                     f"{_fmt(e['max_score'])} (−{_fmt(n)})</span>"
                     + (f"<div class=\"why\">{_html_msg(why)}</div>" if why else "") + "</li>")
    return [f"<nav class=\"lost\" aria-labelledby=\"lost-points\"><h2 id=\"lost-points\">{html.escape(lab['lost'])}"
            f"</h2><ul>{''.join(items)}</ul></nav>"]


def feedback_html(res: ResultRow, lang: str = "en", title: str | None = None) -> str:
    """The same feedback as :func:`feedback_markdown` (``title`` as there), as a standalone HTML page."""
    lab = LABELS.get(lang, LABELS["en"])
    def esc(value: Any) -> str:
        return html.escape(clean(value, 0))

    name = esc(title or Path(str(res["submission"])).name)
    dev = res.get("device") or {}
    parts = [f"<!DOCTYPE html><html lang=\"{esc(lang)}\"><head><meta charset=\"utf-8\">{VIEWPORT}",
             f"<title>{lab['feedback']}: {name}</title><style>{_FEEDBACK_CSS}</style></head><body>",
             f"<h1>{lab['feedback']}: {name}</h1>",
             f"<div class=\"total\">{lab['total']}: {_fmt(res['total'])} / {_fmt(res['max_total'])}</div>",
             f"<div class=\"meta\">{lab['device']}: torch {esc(str(dev.get('torch', '?')))}, "
             f"jax {esc(str(dev.get('jax', '?')))}</div>"]
    parts += _lost_html(res, lang, lab)
    for ex, e in res["exercises"].items():
        frac = float(e["score"]) / float(e["max_score"]) if float(e["max_score"] or 0) else 0.0
        parts.append(f"<h2 id=\"{esc(ex)}\">{esc(ex)} <span class=\"status\">{esc(_status_word(e['status'], lang))}"
                     f"</span><span class=\"score\">{_fmt(e['score'])} / {_fmt(e['max_score'])}</span></h2>")
        parts.append(f"<div class=\"bar\"><span style=\"width:{100 * frac:.0f}%\"></span></div>")
        if e.get("message"):
            parts.append(f"<div class=\"note\">{_html_msg(e['message'])}</div>")
        parts += [f"<div class=\"note override\">{esc(w)}</div>" for w in _override_words(e, lab)]
        parts.append("<table>")
        for t in e["tests"]:
            ok = bool(t["passed"])
            kind = lab["hidden"] if t.get("hidden") else lab["public"]
            msg = _html_msg(t["message"]) if t.get("message") and not ok else ""
            msg = "<br>".join([msg, *(f"<span class=\"override\">{esc(w)}</span>" for w in _override_words(t, lab))])
            msg = msg.removeprefix("<br>")
            parts.append(f"<tr class=\"{'pass' if ok else 'fail'}\"><td>{'✔' if ok else '✘'}</td>"
                         f"<td><code>{html_name(str(t['name']))}</code> <span class=\"kind\">{kind}</span></td>"
                         f"<td class=\"pts\">{_fmt(t['score'])} / {_fmt(t['max_score'])}</td>"
                         f"<td class=\"msg\">{msg}</td></tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def safe_stem(submission: str) -> str:
    """A file name for a submission's feedback: its base name, harmless characters only.

    A name that had to change (spaces, other scripts, bytes that are not UTF-8, a leading ``-``, too
    long) gets a short hash of the original: ``" alice"`` and ``"alice"`` never share a file.
    """
    base = Path(str(submission).rstrip("/\\")).name or "submission"
    for suffix in (".ipynb", ".zip", ".py"):
        if base.endswith(suffix) and len(base) > len(suffix):
            base = base[: -len(suffix)]
            break
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", base).strip("._-") or "submission"
    if stem != base or len(stem) > 100:
        stem = f"{stem[:100]}-{hashlib.sha256(to_bytes(base)).hexdigest()[:8]}"
    return stem


def _parts(submission: str) -> list[str]:
    """A submission's path as its parts (either separator), the last one its file or folder name."""
    return [p for p in re.split(r"[/\\]+", str(submission).rstrip("/\\")) if p not in ("", ".")] or ["submission"]


def feedback_names(submissions: list[str]) -> list[tuple[str, str]]:
    """Per submission, its feedback file's stem and the name its heading shows.

    A file name alone where it is the only one with its stem; where several submissions share one (a
    folder-per-student export: ``alice/work.ipynb``, ``bob/work.ipynb``), the path's last parts, as
    few as tell them apart: ``alice-work`` titled ``alice/work.ipynb``. Order never changes a name.
    """
    parts = [_parts(s) for s in submissions]
    stems = [safe_stem(s) for s in submissions]
    out = []
    for i, stem in enumerate(stems):
        group = {tuple(parts[j]) for j in range(len(stems)) if stems[j].lower() == stem.lower()}
        k = 1
        while len({g[-k:] for g in group}) < len(group) and k < max(len(g) for g in group):
            k += 1
        tail = parts[i][-k:]
        out.append((safe_stem("-".join(tail)) if k > 1 else stem, "/".join(tail)))
    return out


def write_feedback(results: Sequence[ResultRow], folder: str, lang: str = "en", fmt: str = "md") -> list[Path]:
    """Writes one feedback file per submission: ``<folder>/<name>.md`` and/or ``.html``.

    Args:
        results: result objects.
        folder: output directory (created).
        lang: ``en`` or ``es`` for the headings (messages are in the grading language).
        fmt: ``md``, ``html`` or ``both``.

    Returns:
        The paths written.
    """
    Path(folder).mkdir(parents=True, exist_ok=True)
    used: set[str] = set()
    written = []
    for res, (base, title) in zip(results, feedback_names([str(r["submission"]) for r in results]), strict=True):
        name, k = base, 2
        while name.lower() in used:
            name, k = f"{base}-{k}", k + 1
        used.add(name.lower())
        if fmt in ("md", "both"):
            p = Path(folder) / f"{name}.md"
            atomic_write(p, feedback_markdown(res, lang, title))
            written.append(p)
        if fmt in ("html", "both"):
            p = Path(folder) / f"{name}.html"
            atomic_write(p, feedback_html(res, lang, title))
            written.append(p)
    return written
