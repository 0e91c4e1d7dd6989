"""Programs as files: the templates in autograder/builders/templates/ are valid Python, and the builders render
exactly them (every slot filled, nothing else changed); the rendered programs run."""

from __future__ import annotations

import ast
import base64
import hashlib
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import builders
from autograder.builders import notebook as _notebook
from autograder.builders import otter_zip as _otter_zip
from autograder.builders import templates
from autograder.core.i18n import LANGS, section
from autograder.hidden import load_suite

PY_TEMPLATES = sorted(p.relative_to(templates.HERE).as_posix() for p in templates.HERE.rglob("*.py")
                      if "__pycache__" not in p.parts and p != templates.HERE / "__init__.py")
LEFTOVER = re.compile(r"__[A-Z][A-Z0-9]*__")


def _pattern(part: str) -> re.Pattern[str]:
    """A regex matching ``part`` with each slot standing for any text."""
    pieces = templates.SLOT.split(part)
    out = []
    for i, piece in enumerate(pieces):
        out.append(re.escape(piece) if i % 2 == 0 else "(?s:.*?)")
    return re.compile("".join(out), re.S)


@pytest.mark.parametrize("name", PY_TEMPLATES)
def test_every_template_is_python_and_every_part_parses_once_filled(name):
    source = templates.path(name).read_text(encoding="utf-8")
    ast.parse(source, filename=name)  # the file as it stands (what ruff lints)
    for part, text in templates.parts(name).items():
        assert text.endswith("\n") and not text.startswith("\n"), (name, part)
        filled = templates.SLOT.sub(lambda m: "x", text)
        ast.parse(filled, filename=f"{name}:{part}")  # every slot is at least an identifier's place


def test_render_fills_exactly_the_slots_of_a_part():
    with pytest.raises(templates.TemplateError, match="slots"):
        templates.render(builders.CHECK_PY, doc="d")  # __TEXT__ missing
    with pytest.raises(templates.TemplateError, match="slots"):
        templates.render(builders.RUNTIME_INIT, version="1", extra="x")
    with pytest.raises(templates.TemplateError, match="no part"):
        templates.render(_otter_zip.TEST_FILE, "main", exercise="x")
    assert templates.render(builders.RUNTIME_INIT, version="9.9").endswith('__version__ = "9.9"\n')
    assert templates.string('a "b" \\ c\nñ') == 'a \\"b\\" \\\\ c\\nñ'
    assert ast.literal_eval('"' + templates.string('a "b" \\ c\nñ') + '"') == 'a "b" \\ c\nñ'


@pytest.mark.parametrize("lang", LANGS)
def test_setup_cell_is_its_template_filled(lang):
    runtime = b"not a real zip"
    for self_study in (False, True):
        cell = _notebook.setup_source(runtime, lang, self_study)
        code = cell[cell.index("def _tapetrace_setup"):]
        part = templates.parts(_notebook.SETUP_TEMPLATE)["main"]
        assert _pattern(part).fullmatch(code), "the set-up cell is not its template"
        assert not LEFTOVER.search(code)
        names = "check, hint, figure, solution" if self_study else "check, hint, figure"
        assert f'{names} = _tapetrace_setup("{hashlib.sha256(runtime).hexdigest()}", ' \
               f'"{base64.b64encode(runtime).decode()}")' in code
        assert f'_public.set_language("{lang}")' in code
        compile(cell, "setup", "exec")
    # run it: a damaged runtime stops before anything is written or imported, with the catalogued message
    cell = _notebook.setup_source(runtime, lang).replace(hashlib.sha256(runtime).hexdigest(), "0" * 64)
    from autograder.core.i18n import render

    with pytest.raises(RuntimeError) as err:
        exec(compile(cell, "setup", "exec"), {"__name__": "__setup_test__"})
    assert str(err.value) == render("setup.damaged", lang)


@pytest.mark.parametrize("lang", LANGS)
def test_check_py_is_its_template_filled_and_runs(lang, tmp_path):
    text = builders.check_py(lang)
    assert _pattern(templates.parts(builders.CHECK_PY)["main"]).fullmatch(text)
    assert not LEFTOVER.search(text)
    ns: dict = {"__name__": "check", "__file__": str(tmp_path / "check.py")}
    exec(compile(text, "check.py", "exec"), ns)
    texts = dict(section("check_py")[lang])
    assert ast.get_docstring(ast.parse(text)) == texts.pop("doc").strip()
    assert ns["TEXT"] == texts
    (tmp_path / "check.py").write_text(text, encoding="utf-8")  # no notebook beside it: says so, exit 1
    done = subprocess.run([sys.executable, "-I", str(tmp_path / "check.py")], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60)
    assert done.returncode != 0 and "tapetrace.ipynb" in done.stderr


def test_template_modules_import_as_they_stand():
    """The templates are modules (their preamble binds the code slots): tests and tools can import them."""
    check = importlib.import_module("autograder.builders.templates.check")
    assert callable(check.main) and callable(check._set_up) and check.TEXT == {}
    init = importlib.import_module("autograder.builders.templates.runtime_init")
    assert init.__version__ == "__VERSION__"
    pytest.importorskip("otter")
    otter_test = importlib.import_module("autograder.builders.templates.otter_test")
    assert otter_test.OK_FORMAT is False and otter_test.name == "__EXERCISE__" and callable(otter_test._bridge)


def test_runtime_init_is_its_template_filled():
    from autograder import __version__

    members = builders.runtime_members(builders.present()[:1])
    init = members["autograder/__init__.py"].decode()
    assert init == templates.path(builders.RUNTIME_INIT).read_text().replace("__VERSION__", __version__)
    ns: dict = {}
    exec(init, ns)
    assert ns["__version__"] == __version__


def test_otter_test_file_is_its_template_filled_and_loads_in_otter(tmp_path):
    pytest.importorskip("otter")
    from otter.test_files.exception_test import ExceptionTestFile

    ex = builders.present()[0]
    checks = [(c.name, c.points, c.hidden) for c in load_suite(ex).checks]
    text = _otter_zip.test_file_source(ex, checks)
    head, *cases = text.split("\n\n\n@test_case")
    assert _pattern(templates.parts(_otter_zip.TEST_FILE)["file"]).fullmatch(head + "\n")
    case = _pattern(templates.parts(_otter_zip.TEST_FILE)["case"])
    assert len(cases) == len(checks) and all(case.fullmatch("@test_case" + c.rstrip("\n") + "\n") for c in cases)
    assert not LEFTOVER.search(text)
    path = tmp_path / f"{ex}.py"
    path.write_text(text)
    loaded = ExceptionTestFile.from_file(str(path))
    assert loaded.name == ex
    assert [(t.name, t.points, t.hidden) for t in loaded.test_cases] == [(n, p, h) for n, p, h in checks]


def test_otter_zip_scripts_come_from_the_template_files(tmp_path):
    import zipfile

    import otter.generate

    otter_setup = (Path(otter.generate.__file__).parent / "templates" / "python" / "setup.sh").read_text()
    values = {"autograder_dir": "/autograder", "otter_env_name": "otter-env", "miniforge_version": "25.3.1-0"}
    otter_setup = re.sub(r"\{\{ (\w+) \}\}", lambda m: values[m.group(1)], otter_setup)  # as otter renders it
    zpath = tmp_path / "z.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr("run_otter.py", "print('otter')\n")
        zf.writestr("setup.sh", otter_setup)
        zf.writestr("other.txt", "same")
    _otter_zip._adjust_zip(zpath)
    with zipfile.ZipFile(zpath) as zf:
        run_otter, setup, other = (zf.read(n).decode() for n in ("run_otter.py", "setup.sh", "other.txt"))
    assert run_otter == templates.path(_otter_zip.RUN_OTTER).read_text()
    assert setup.endswith("\n\n" + templates.path(_otter_zip.SETUP_TAIL).read_text())
    assert setup.startswith(otter_setup.split("# install PDF generation")[0])  # otter's own up to the PDF block
    assert other == "same"
    ns: dict = {"__file__": str(tmp_path / "run_otter.py"), "__name__": "not_main"}
    before = list(sys.path)
    try:
        exec(templates.path(_otter_zip.RUN_OTTER).read_text(), ns)
        assert sys.path[0] == str(tmp_path / "files")
    finally:
        sys.path[:] = before


def test_device_detection_program_is_a_file():
    done = subprocess.run([sys.executable, "-c", (builders.PKG / "core" / "detect_devices.py").read_text()],
                          capture_output=True, text=True, timeout=300)
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(got) == {"torch", "jax"} and got["torch"] in ("cpu", "cuda")
