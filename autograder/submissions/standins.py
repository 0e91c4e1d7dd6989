"""The notebook's helpers inside a graded module, as harmless stand-ins; ``google.colab`` where it is absent.

Owns what a graded module finds before its code runs (:func:`add_standins`): a ``get_ipython()`` whose
magics, ``!cmd`` and ``obj?`` do nothing (``x = !cmd`` gives an empty list; ``%run NAME.py`` runs a file the
notebook wrote; a cell magic below a cell's first line raises IPython's ``UsageError``), ``display``, ``check``, ``hint``, ``figure`` and ``solution`` as no-ops, ``input()`` answering
an empty line (in Colab "Run all" waits for the student to type); the files a
notebook's ``%%writefile`` cells wrote, importable by name (:func:`install_written_files`); and
``google.colab`` importable as a harmless stand-in where the real one is absent
(:func:`install_colab_standin`, :func:`remove_colab_standin`). Used by
:mod:`autograder.submissions.execute` (the worker, in the sandbox, and the notebook's self-check).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Mapping
from typing import Any


class _Output(list):
    """What ``x = !cmd`` gives in IPython (an ``SList``), empty: the command never runs here."""

    @property
    def s(self) -> str:
        return " ".join(self)

    n = s
    p = s
    nlstr = s

    @property
    def l(self) -> list:  # noqa: E743 - IPython's name
        return list(self)

    def grep(self, *args: Any, **kwargs: Any) -> _Output:
        return _Output()

    def fields(self, *args: Any) -> _Output:
        return _Output()


class _Anything:
    """Any attribute is another harmless object; calling one does nothing and returns None."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything()

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        return None

    def __bool__(self) -> bool:
        return False


class UsageError(Exception):
    """What IPython raises for a magic it does not know (here: a cell magic below a cell's first line)."""


class _Shell(_Anything):
    """``get_ipython()`` in a graded module: magics and shell commands do nothing, but ``%run NAME.py`` of a file
    the notebook wrote (``%%writefile``) runs it into the namespace, as IPython does."""

    def __init__(self, namespace: dict[str, Any], files: dict[str, str] | None = None) -> None:
        self.user_ns = namespace
        self.files = dict(files or {})

    def run_line_magic(self, name: str, line: str, *args: Any, **kwargs: Any) -> None:
        if name.startswith("%"):  # `%%time` below a cell's first line: IPython stops the cell there
            raise UsageError(f"Line magic function `%{name}` not found.")
        if name == "run":
            script = run_script(line, self.files)
            if script is not None:
                code = compile(self.files[script], file_label(script), "exec", dont_inherit=True)
                exec(code, self.user_ns)  # noqa: S102 - the student's own file, in their sandbox
        return None

    def run_cell_magic(self, name: str, line: str, cell: str, *args: Any, **kwargs: Any) -> None:
        return None

    def magic(self, line: str) -> None:
        return None

    def system(self, cmd: str) -> None:
        return None

    def getoutput(self, cmd: str, *args: Any, **kwargs: Any) -> _Output:
        return _Output()

    def run_cell(self, *args: Any, **kwargs: Any) -> None:
        return None


def run_script(line: str, files: Mapping[str, str]) -> str | None:
    """The file of ``files`` (the notebook's ``%%writefile`` ones) that ``%run LINE`` runs; None: none of them."""
    return next((w.strip("'\"") for w in line.split() if w.strip("'\"") in files), None)


def _nothing(*args: Any, **kwargs: Any) -> None:
    """``check``, ``hint``, ``figure``, ``solution``, ``display`` in a graded module: no-ops."""
    return None


STANDIN_NAMES = ("get_ipython", "display", "check", "hint", "figure", "solution")


def _no_answer(prompt: object = "") -> str:
    """``input()`` in a graded module: nobody is there to type, so the answer is an empty line (Enter)."""
    return ""


def add_standins(namespace: dict[str, Any], files: dict[str, str] | None = None) -> None:
    """Puts the notebook's helpers, as harmless stand-ins, into a module namespace.

    Args:
        namespace: the graded module's ``__dict__``.
        files: the ``.py`` files the notebook's ``%%writefile`` cells wrote (``%run`` runs them).
    """
    shell = _Shell(namespace, files)
    namespace["get_ipython"] = lambda: shell
    for name in STANDIN_NAMES[1:]:
        namespace[name] = _nothing
    namespace["input"] = _no_answer


def file_label(name: str) -> str:
    """The file name code from a notebook-written file is compiled under."""
    return f"<notebook file {name}>"


class _FilesFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``import NAME`` from the ``NAME.py`` a notebook's ``%%writefile`` cell wrote (placed last on
    ``sys.meta_path``: a real file of that name, where one exists, is found first)."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = {name[:-3]: (name, text) for name, text in files.items()
                      if name.endswith(".py") and name[:-3].isidentifier()}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if path is None and fullname in self.files:
            return importlib.machinery.ModuleSpec(fullname, self, origin=file_label(self.files[fullname][0]))
        return None

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        name, text = self.files[module.__name__]
        module.__file__ = file_label(name)
        exec(compile(text, file_label(name), "exec", dont_inherit=True), module.__dict__)  # noqa: S102


def install_written_files(files: dict[str, str]) -> _FilesFinder | None:
    """Makes the ``.py`` files a notebook wrote (``%%writefile``) importable by name, in place of any earlier
    such files; returns the finder (None: no file)."""
    for f in [f for f in sys.meta_path if isinstance(f, _FilesFinder)]:
        sys.meta_path.remove(f)
    if not files:
        return None
    finder = _FilesFinder(files)
    sys.meta_path.append(finder)
    return finder


class ColabModule(types.ModuleType):
    """A ``google.colab`` module stand-in: every function does nothing (``files.upload()`` gives {})."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if self.__name__ == "google.colab" and name in _COLAB_SUBMODULES:
            return importlib.import_module(f"google.colab.{name}")
        if self.__name__ == "google.colab.files" and name == "upload":
            return lambda *a, **k: {}
        return _Anything()


# ``from google.colab import files``: the submodules students import, as modules
_COLAB_SUBMODULES = frozenset({"files", "drive", "output", "auth", "userdata", "data_table", "widgets", "patches",
                               "syntax", "runtime", "_message"})


class _ColabFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``google.colab`` (and ``google`` when nothing else does) as harmless stand-ins.

    Placed last on ``sys.meta_path``: ``google`` stays the real namespace package wherever one is
    installed (protobuf's), only the missing ``google.colab`` is filled in.
    """

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname == "google" or fullname == "google.colab" or fullname.startswith("google.colab."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: Any) -> types.ModuleType:
        mod = ColabModule(spec.name) if spec.name != "google" else types.ModuleType(spec.name)
        mod.__path__ = []
        return mod

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def install_colab_standin() -> _ColabFinder | None:
    """Makes ``google.colab`` importable (harmless) where the real one is absent; returns the finder."""
    try:
        if importlib.util.find_spec("google.colab") is not None:
            return None
    except (ImportError, ValueError, AttributeError):
        pass
    if any(isinstance(f, _ColabFinder) for f in sys.meta_path):
        return None
    finder = _ColabFinder()
    sys.meta_path.append(finder)
    return finder


def remove_colab_standin(finder: _ColabFinder | None) -> None:
    """Undoes :func:`install_colab_standin` (and forgets the stand-in modules)."""
    if finder is None:
        return
    if finder in sys.meta_path:
        sys.meta_path.remove(finder)
    for name, mod in list(sys.modules.items()):
        if isinstance(mod, ColabModule) or (name == "google" and getattr(mod, "__spec__", None)
                                             and mod.__spec__.loader is finder):
            del sys.modules[name]
