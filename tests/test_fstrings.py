"""Python 3.12's f-strings (PEP 701) on an older grader: rewritten with the same meaning, lines kept.

Two kinds of cases: f-strings Python 3.11 also accepts, whose rewrite must evaluate to what the original
does here; and 3.12-only ones, whose results are hard-coded from PEP 701 and the language reference
(no 3.12 interpreter decides them).
"""

from __future__ import annotations

import ast
import datetime
import sys
import textwrap
import traceback
from types import SimpleNamespace

import pytest

from autograder.submissions import execute as _exec
from autograder.submissions.fstrings import parse_source as parse
from autograder.submissions.fstrings import rewrite_fstrings as rewrite

OLD = sys.version_info < (3, 12)
SONGS = ["Take me back to Eden", "Alkaline", "Ascensionism"]


def _ns() -> dict:
    return {"x": 3, "w": 7, "p": 2, "y": ["p", "q"], "a": 1, "b": 2, "d": {"k": "v", "n": 1.5}, "songs": SONGS,
            "params": {"W": [SimpleNamespace(shape=(2, 3))]},
            "when": datetime.datetime(2026, 12, 5, 17, 38), "i": 0, "pi": 3.14159, "s": "héllo", "z": None}


def _eval(src: str) -> object:
    return eval(src, _ns())  # noqa: S307 - the test's own literals


SAME_IN_311 = [  # both forms evaluated here: the rewrite must agree with Python's own f-string
    'f"{x}"', "f'{x!r}'", 'f"{s!a}"', 'f"{s!s:>9}"', 'f"{pi:.2f}"', 'f"{pi:{w}.{p}f}"', 'f"{x:{w}}|"',
    'f"{x = }"', 'f"{x=}"', 'f"{ x = !s:>4}"', 'f"{pi=:.1f}"', 'f"{{x}} {{{x}}}"', 'f"}}{x}{{"',
    'f"a\\tb{x}\\n"', 'rf"\\d+{x}\\n"', 'fR"{x}\\{{"', 'F"{x}"', 'f"\\N{BULLET} {x}"', "f'{\"\"}'",
    'f"{x!=y}"', 'f"{x==3}"', 'f"{x<=w} {x>=w} {x<w}"', 'f"{(lambda q: q * 2)(x)}"', 'f"{(t := 5) + t}"',
    "f'{d[\"k\"]}'", 'f"{ {1: 2}[1] }"', 'f"{[v for v in y]}"', 'f"{a, b}"', 'f"{a,}"', 'f"{x if x else 0}"',
    '"pre" f"{x}" \'post\'', 'f"{x}" f"{w}"', '("a"\n f"{x}"  # note\n "c")', 'f""', 'f"plain"',
    'f"""\n{x}\n  {w}\n"""', "f'''{x}'''", 'f"{z!r:>6}"', 'f"{x:#x} {x:08b} {pi:e}"', 'f"{d[\'n\']:>{w}.{p}}"',
    'f"{when:%H:%M}"', 'f"{x:!<5}"', 'f"{\'a\' \'b\'}"', 'f"{x:}"', 'f"{x!r:^{w}}|"', 'f"{d}"',
    'f"{\'#\'}"', 'f"{x:{\'>\'}{w}}"', 'f"{s.upper()!r}"', 'f"{x:{w}{\'\'}}"', 'f"{x:\\x3e5}"',
]


@pytest.mark.parametrize("src", SAME_IN_311)
def test_a_311_f_string_means_the_same_rewritten(src):
    got = rewrite(src)
    assert got is not None and got.count("\n") == src.count("\n")
    assert _eval(got) == _eval(src)


ONLY_312 = [  # PEP 701's examples and the language reference's, results as 3.12 gives them
    ('f"{params["W"][i].shape}"', "(2, 3)"),
    ('f"This is the playlist: {", ".join(songs)}"', "This is the playlist: Take me back to Eden, Alkaline, Ascensionism"),
    ('f"{f"{f"{f"{f"{f"{1+1}"}"}"}"}"}"', "2"),
    ('f"This is the playlist: {"\\n".join(songs)}"', "This is the playlist: Take me back to Eden\nAlkaline\nAscensionism"),
    ('f"{"\\N{BLACK HEART SUIT}".join(songs)}"', "Take me back to Eden\u2665Alkaline\u2665Ascensionism"),
    ('f"This is the playlist: {", ".join([\n    \'Take me back to Eden\',  # My, my, those eyes like fire\n'
     '    \'Alkaline\',              # Not acid nor alkaline\n    \'Ascensionism\'           # Take to the broken skies\n])}"',
     "This is the playlist: Take me back to Eden, Alkaline, Ascensionism"),
    ('f"{d["k"] = }"', "d[\"k\"] = 'v'"),
    ('f"{d["n"]:{"^"}{w}}"', "  1.5  "),
    ('f"{x\n + 1}"', "4"),
    ('f"{x # a comment {"}\n}"', "3"),
    ('f"{"\\t".join(y)!r}"', "'p\\tq'"),
    ("f'{'a' + f'{x}'}'", "a3"),
    ('f"""{f"""{x}"""}"""', "3"),
    ('f"{x:{f"{w}"}}"', "      3"),
    ('f"{"{"}{x}{"}"}"', "{3}"),
]


@pytest.mark.parametrize("src,want", ONLY_312)
def test_a_312_f_string_is_rewritten_with_its_312_meaning(src, want):
    if OLD:
        with pytest.raises(SyntaxError):
            ast.parse(src)
    got = rewrite(src)
    assert got is not None and got.count("\n") == src.count("\n")
    assert _eval(got) == want


def test_the_rewrite_looks_up_no_name_a_student_may_have_shadowed():
    ns = {"format": None, "str": None, "repr": None, "ascii": None, "x": 3}
    assert eval(rewrite('f"{x!r}{x!s}{x!a}{x:>3}{x=}"'), ns) == "333  3x=3"  # noqa: S307


def test_every_line_keeps_its_number():
    src = textwrap.dedent('''\
        d = {"k": [1, 2]}
        msg = f"""first {d["k"]}
        second {len(
            d["k"]  # a comment in the braces
        )} third"""
        other = ("x" f"{d["k"]!r}"
                 'y')
        def boom():
            return f"{d["missing"]}"
        boom()
        ''')
    tree = parse(src, "/student/ex.py")
    assert [n.lineno for n in tree.body] == [1, 2, 6, 8, 10]
    ns: dict = {}
    with pytest.raises(KeyError) as info:
        exec(compile(tree, "/student/ex.py", "exec"), ns)  # noqa: S102
    assert ns["msg"] == "first [1, 2]\nsecond 2 third" and ns["other"] == "x[1, 2]y"
    frames = [f for f in traceback.extract_tb(info.value.__traceback__) if f.filename == "/student/ex.py"]
    assert [f.lineno for f in frames] == [10, 9]


def test_a_source_that_compiles_is_never_changed():
    src = 'x = 1\ny = f"{x!r:>3}" "a"\n'
    assert ast.dump(parse(src)) == ast.dump(ast.parse(src))


@pytest.mark.parametrize("src,line", [
    ('x = f"{d["k"]}"\ny = (\n', 1),  # an error elsewhere: the rewrite does not parse either, the first error stands
    ('x = f"{}"\n', 1),                # an empty field is an error in 3.12 too
    ('x = f"{x!z}"\n', 1),            # so is an unknown conversion
    ('x = "never closed\n', 1),
])
def test_the_original_syntax_error_stands_when_the_rewrite_does_not_help(src, line):
    with pytest.raises(SyntaxError) as info:
        parse(src, "/student/ex.py")
    want = None
    try:
        ast.parse(src, "/student/ex.py")
    except SyntaxError as err:
        want = err
    assert want is not None and (info.value.msg, info.value.lineno) == (want.msg, want.lineno) == (want.msg, line)


def test_strings_comments_and_bytes_around_are_left_alone():
    src = 'b = b"{not a field}"  # f"{a["b"]}" in a comment\nc = r"\\{" + u"}" + f"{b!r}"\n'
    out = rewrite(src)
    assert out is not None and out.startswith('b = b"{not a field}"  # f"{a["b"]}" in a comment\nc = r"\\{" + u"}" + (')
    ns: dict = {}
    exec(out, ns)  # noqa: S102
    assert ns["c"] == "\\{}b'{not a field}'"


@pytest.mark.skipif(not OLD, reason="Python 3.12 parses these itself")
def test_a_notebooks_context_and_section_load_with_312_f_strings():
    """The loader's one path (a section and the earlier cells it reads) compiles 3.12 f-strings."""
    prepared = _exec.prepare('def show(cfg):\n    return f"{cfg["name"]}: {cfg["n"]:>{3}}"\n'
                             'RESULT = show({"name": "net", "n": 7})\n', "/graded/section.py")
    ns: dict = {"__name__": "graded"}
    exec(prepared.code, ns)  # noqa: S102
    assert ns["RESULT"] == "net:   7"


def test_deep_nesting_fails_closed_with_the_original_error():
    src = "x = " + 'f"{' * 400 + "1" + '}"' * 400 + "\n"
    with pytest.raises(SyntaxError):
        parse(src)
    nested = 'f"{' * 40 + "1" + '}"' * 40  # deep but within the parser's limits: the 3.12 value
    assert _eval(rewrite(nested)) == "1"


def test_a_line_continuation_inside_an_f_string_keeps_the_lines():
    src = 'f"a\\\nb{d["k"]}"'
    out = rewrite(src)
    assert out is not None and out.count("\n") == 1 and _eval(out) == "abv"
