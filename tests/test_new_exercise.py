"""`tapetrace new exNN_name`: in a copy of the repository, a new exercise is its folders, its hidden file and
its mutants only, and it builds, grades and passes the outcome tests before any real content is written.

The copy holds the working tree's files (tracked and untracked, not ignored) as one commit, so
``git status`` there lists exactly what ``tapetrace new`` wrote; this venv runs it with the copy first on
``PYTHONPATH`` (each command checks that the copy's ``autograder`` is the one imported).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import cli
from autograder.builders import notebook as _notebook
from autograder.cli import new as _cmd_new
from autograder.core.paths import ROOT

TORCH_EX, JAX_EX = "ex14_demo", "ex15_jaxdemo"


def _files_of(name: str) -> set[str]:
    """What `tapetrace new NAME` must write (relative paths), and nothing else."""
    return {dest.format(name=name) for _, dest in _cmd_new.FILES} | {_cmd_new.STUB.format(name=name)}


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def _env(copy: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TAPETRACE_"))}
    env.update(PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1")
    return env


def _py(copy: Path, *args: str, timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, *args], cwd=copy, env=_env(copy), capture_output=True, text=True,
                          timeout=timeout)
    if check:
        assert done.returncode == 0, (args, done.stdout[-3000:], done.stderr[-3000:])
    return done


def _tapetrace(copy: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return _py(copy, "-m", "autograder.cli", *args, **kw)


def _changed(copy: Path) -> set[str]:
    out = _git(copy, "status", "--porcelain", "--untracked-files=all")
    return {line[3:] for line in out.splitlines() if line.strip()}


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """The repository's files in a fresh git repository (one commit), with both skeletons added."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout")
    files = _git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    dest = tmp_path_factory.mktemp("repo") / "tapetrace"
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file() and not src.is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "copy"]):
        _git(dest, *args)
    assert not _changed(dest)
    where = _py(dest, "-c", "import autograder; print(autograder.__file__)").stdout.strip()
    assert Path(where).resolve() == (dest / "autograder" / "__init__.py").resolve(), where
    return dest


@pytest.fixture(scope="module")
def added(copy) -> Path:
    """`tapetrace new` run twice (PyTorch, then JAX): each writes exactly its files."""
    before = set()
    for name, extra in ((TORCH_EX, []), (JAX_EX, ["--frameworks", "jax", "--title", "Standardise rows in JAX",
                                                  "--title-es", "Estandariza filas en JAX"])):
        done = _tapetrace(copy, "new", name, *extra)
        assert done.stdout.count("wrote ") == len(_files_of(name)), done.stdout
        now = _changed(copy)
        assert now - before == _files_of(name), sorted((now - before) ^ _files_of(name))
        before = now
    return copy


@pytest.mark.slow
def test_new_exercise_builds_grades_and_passes_its_tests(added, tmp_path):
    copy = added
    meta = _py(copy, "-c", "import json; from autograder.core.registry import REGISTRY as R; "
                           f"print(json.dumps({{n: list(R[n].frameworks) for n in ({TORCH_EX!r}, {JAX_EX!r})}}))")
    assert json.loads(meta.stdout) == {TORCH_EX: ["torch"], JAX_EX: ["jax"]}
    assert "import jax" in (copy / "solutions" / f"{JAX_EX}.py").read_text()
    ruff = Path(sys.executable).with_name("ruff")
    if ruff.exists():  # what it wrote is as clean as the rest of the repository
        done = subprocess.run([str(ruff), "check", *sorted(_files_of(TORCH_EX) | _files_of(JAX_EX))], cwd=copy,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-3000:]
    assert _tapetrace(copy, "new", TORCH_EX, check=False).returncode == 2  # exists: nothing overwritten

    # build: the notebook (template) and the otter zip both carry the new exercises
    _tapetrace(copy, "build", "--out", str(tmp_path / "dist"), "--no-verify")  # the check: tests/test_build_verify.py
    assert _tapetrace(copy, "build", "--check", "--lang", "en").returncode == 0
    nb = json.loads((copy / "student_template" / _notebook.NOTEBOOK).read_text(encoding="utf-8"))
    for ex in (TORCH_EX, JAX_EX):
        sources = [_notebook.source_of(c) for c in nb["cells"]]
        assert any(s.startswith(f"## {ex} — ") for s in sources), f"no heading for {ex}"
        assert f'check("{ex}")\n' in sources and ex in nb["metadata"]["tapetrace"]["exercises"]
    import zipfile

    with zipfile.ZipFile(tmp_path / "dist" / "tapetrace-autograder.zip") as zf:
        names = set(zf.namelist())
        test_file = zf.read(f"tests/{TORCH_EX}.py").decode()
    assert {f"tests/{TORCH_EX}.py", f"tests/{JAX_EX}.py", f"files/autograder/hidden/{JAX_EX}.py"} <= names
    assert '@test_case(name="any_leading_axes", points=6.0, hidden=True)' in test_file
    changed = _changed(copy) - _files_of(TORCH_EX) - _files_of(JAX_EX)
    assert changed and all(p.startswith("student_template/") for p in changed), sorted(changed)

    # grade: solutions 10/10, the stubs 0 "not attempted", a notebook built there and filled with the solutions
    filled = _notebook.fill_with(nb, {ex: (copy / "solutions" / f"{ex}.py").read_text() for ex in (TORCH_EX, JAX_EX)})
    (tmp_path / "filled.ipynb").write_text(_notebook.dumps(filled), encoding="utf-8")
    out = tmp_path / "grades.json"
    _tapetrace(copy, "grade", "solutions", "exercises", str(tmp_path / "filled.ipynb"),
               str(copy / "student_template" / _notebook.NOTEBOOK), "--only", "ex14,ex15", "--json", str(out),
               "--quiet", "--jobs", "2")
    by_name = {Path(r["submission"]).name: r["exercises"] for r in json.loads(out.read_text())}  # a list: several
    for ex in (TORCH_EX, JAX_EX):
        for sub in ("solutions", "filled.ipynb"):
            got = by_name[sub][ex]
            assert got["status"] == "graded" and got["score"] == got["max_score"] == 10, (sub, got)
        for sub in ("exercises", _notebook.NOTEBOOK):
            got = by_name[sub][ex]
            assert got["score"] == 0 and got["message"].startswith("not attempted"), (sub, got)
        stub = by_name["exercises"][ex]  # what the outcome tests ask of a stub (test_stub_is_not_attempted)
        assert stub["status"] == "graded" and all(t["code"] == "NOT_ATTEMPTED" for t in stub["tests"]), stub

    # the hidden suites as pytest items, exNN_name::check, through the copy's plugin
    done = _py(copy, "-m", "pytest", "--tapetrace-submission=solutions", "autograder/hidden", "-k", "ex14 or ex15",
               "-v", "-p", "no:cacheprovider", check=False)
    items = set(re.findall(r"(ex1[45]_\w+::\w+) PASSED", done.stdout))
    assert items == {f"{TORCH_EX}::matches_reference", f"{TORCH_EX}::any_leading_axes",
                     f"{JAX_EX}::matches_reference", f"{JAX_EX}::any_leading_axes"}, done.stdout[-3000:]
    assert done.returncode == 0, done.stdout[-3000:]

    # the copy's own outcome tests: every check has a mutant, each mutant fails exactly its checks, VALID full
    # marks (the solution's full marks and the stub's "not attempted" are the grading above: their two outcome
    # tests read a session grading of every exercise's solution and stub, which would grade all 15 again)
    done = _py(copy, "-m", "pytest", "tests/test_outcomes.py", "-k", "(ex14 or ex15) and not "
               "test_solution_gets_full_marks and not test_stub_is_not_attempted", "-q", "-p", "no:cacheprovider",
               check=False)
    assert done.returncode == 0, done.stdout[-3000:]
    passed = int(re.search(r"(\d+) passed", done.stdout).group(1))
    assert passed >= 2 * (1 + 3), done.stdout[-2000:]  # per exercise: every-check; 2 mutants, 1 VALID


# --------------------------------------------------------------------------- in-process: names and files
@pytest.mark.parametrize("bad", ["ex14", "ex1_x", "Ex14_demo", "ex14-demo", "ex14_Demo", "exer14_x", "ex14_"])
def test_a_bad_name_is_a_one_line_error(tmp_path, bad):
    with pytest.raises(_cmd_new.NewError, match="not an exercise name"):
        _cmd_new.plan(tmp_path, bad)


def test_an_existing_exercise_or_number_is_refused(tmp_path):
    from autograder.core.registry import EXERCISES

    first = EXERCISES[0]
    with pytest.raises(_cmd_new.NewError, match="already exists"):
        _cmd_new.plan(tmp_path, first)
    with pytest.raises(_cmd_new.NewError, match=f"{first[:4]} is taken by {first}"):
        _cmd_new.plan(tmp_path, f"{first[:4]}_other", force=True)


def test_nothing_is_overwritten_unless_forced(tmp_path):
    files = _cmd_new.plan(tmp_path, "ex98_zz")
    assert {p.relative_to(tmp_path).as_posix() for p in files} == _files_of("ex98_zz")
    target = tmp_path / "solutions" / "ex98_zz.py"
    target.parent.mkdir(parents=True)
    target.write_text("mine\n")
    with pytest.raises(_cmd_new.NewError, match="exists"):
        _cmd_new.write(files)
    assert target.read_text() == "mine\n" and not (tmp_path / "autograder").exists()
    _cmd_new.write(files, force=True)
    assert target.read_text() == files[target]


def test_the_skeleton_is_filled_and_consistent(tmp_path):
    from autograder.builders import stubs as _stubs
    from autograder.student.instructions_es import english_sha

    for fw, code in ((("torch",), "torch"), (("jax",), "jax"), (("torch", "jax"), "torch")):
        files = {p.relative_to(tmp_path).as_posix(): t for p, t in _cmd_new.plan(tmp_path, "ex97_row_norm",
                                                                                 frameworks=fw).items()}
        assert not any(re.search(r"__[A-Z][A-Z0-9]*__", t) for t in files.values())
        solution = files["solutions/ex97_row_norm.py"]
        assert f"import {code}" in solution and "def row_norm(" in solution
        assert files["exercises/ex97_row_norm.py"] == _stubs.stub_source(solution, "ex97_row_norm")
        assert f"frameworks={tuple(fw)!r}".replace("'", '"') in files["autograder/exercises/ex97_row_norm/__init__.py"]
        assert f'SOURCE_SHA = "{english_sha(solution)}"' in files["autograder/exercises/ex97_row_norm/es.py"]
        for text in files.values():
            compile(text, "skeleton", "exec")
    assert _cmd_new.function_name("ex97_sum", set()) == "ex97_sum"  # a built-in: the full name
    assert _cmd_new.function_name("ex97_mlp", {"mlp"}) == "ex97_mlp"  # another exercise's name
    assert _cmd_new.function_name("ex97_2d", set()) == "ex97_2d"


def test_cli_parses_new_and_says_what_is_wrong_in_one_line():
    args = cli.build_parser().parse_args(["new", "ex14_demo", "--frameworks", "jax,torch", "--title", "T"])
    assert args.frameworks == ("torch", "jax") and args.title == "T" and not args.force
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "new", "ex14"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "not an exercise name" in done.stderr
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "new", "ex14_x", "--frameworks", "tf"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_every_command_the_authoring_guide_quotes_parses():
    import shlex

    guide = (ROOT / "docs" / "authors.md").read_text(encoding="utf-8")  # the authoring guide (docs site)
    assert "tapetrace new exNN_name" in guide and "## Step by step" in guide
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", guide, re.S):
        for line in block.splitlines():
            for part in line.split("#", 1)[0].split("&&"):
                if part.strip().startswith("tapetrace "):
                    commands.append(shlex.split(part)[1:])
    assert len(commands) >= 6
    parser = cli.build_parser()
    for argv in commands:
        args = parser.parse_args(argv)  # SystemExit(2) on an option the command does not have
        assert callable(args.func), argv
    for name in re.findall(r"`(\w+\.py)`", guide):  # the files it names exist somewhere in the package
        assert name in {"__init__.py"} or any(ROOT.glob(f"autograder/**/{name}")) or (ROOT / "tests" / name).exists() \
            or name.startswith("test_exNN"), name
