"""The student notebook on students' library stacks: one venv per stack, the notebook run headless in each.

Each stack (``STACKS``) is a Python version and exact versions of the libraries the notebook touches
(torch, jax/jaxlib, flax, optax, numpy, matplotlib, IPython). For each, a venv is built once under
``~/.cache/tapetrace/stacks/<name>-<key>`` (``TAPETRACE_STACKS`` moves it; the key hashes what the venv is
built from, so every checkout and fresh clone of this machine reuses it, and a changed pin builds another;
pip from the registry, one build at a time per venv; torch either pinned there or borrowed, through
a ``.pth`` line placed after the venv's own site-packages, from the running interpreter's site-packages
or another stack's venv: one multi-GB torch serves several stacks). Then, per language, one kernel of
that venv runs the student notebook (``student_template/``) in an empty folder, as a student would:
filled with the reference solutions (every check and figure cell), then put back untouched (every
exercise's stub, then ``check()`` of each). The notebook's checks read the saved notebook
(``JPY_SESSION_NAME``), as Jupyter gives it.

    python scripts/stack_matrix.py                      # every stack, EN and ES, prints the matrix
    python scripts/stack_matrix.py --stacks floor newest --langs en
    python scripts/stack_matrix.py --write docs/supported-versions.md   # the docs' matrix, between markers

tests/test_stacks.py runs the CI stacks (``CI_STACKS``) with this module; the floor's (English) run is
tests/test_colab.py's English Colab run, whose kernel is the ``ci-floor`` venv.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("TAPETRACE_STACKS") or Path.home() / ".cache" / "tapetrace" / "stacks")
LIBS = ("torch", "jax", "jaxlib", "flax", "optax", "numpy", "matplotlib", "ipython")
MARK = "TAPETRACE-STACK="
BEGIN, END = "<!-- stack-matrix:begin -->", "<!-- stack-matrix:end -->"


@dataclass(frozen=True)
class Stack:
    """One student stack.

    Attributes:
        python: the interpreter's ``major.minor`` ("" means the running interpreter).
        pins: exact versions pip installs into the venv (``{"jax": "0.5.2", ...}``).
        torch_from: where torch comes from when ``pins`` has none: "main" (the running interpreter's
            site-packages) or another stack's name (its venv's site-packages).
        note: what the stack stands for (shown in the matrix).
    """

    python: str
    pins: dict[str, str]
    torch_from: str = ""
    note: str = ""
    extra: tuple[str, ...] = field(default=("ipykernel",))


_FLOOR = {"jax": "0.5.2", "jaxlib": "0.5.1", "flax": "0.10.4", "optax": "0.2.4", "numpy": "1.26.4",
          "matplotlib": "3.7.5", "ipython": "8.0.1"}
_NEWEST = {"jax": "0.10.2", "jaxlib": "0.10.2", "flax": "0.12.8", "optax": "0.2.8", "numpy": "2.4.6",
           "matplotlib": "3.11.2", "ipython": "9.18.1"}

STACKS: dict[str, Stack] = {
    "floor": Stack("3.11", _FLOOR, torch_from="colab-2025-06", note="the lowest supported torch, jax, flax, optax, numpy, matplotlib; IPython 7.34: the Colab rows"),
    "colab-2025-06": Stack("3.11", {"torch": "2.6.0", "jax": "0.5.2", "jaxlib": "0.5.1", "flax": "0.10.4",
                                    "optax": "0.2.4", "numpy": "2.0.2", "matplotlib": "3.10.0",
                                    "ipython": "7.34.0"}, extra=("ipykernel==6.17.1",), note="Colab, mid-2025"),
    "colab-2025-12": Stack("3.12", {"torch": "2.8.0", "jax": "0.7.2", "jaxlib": "0.7.2", "flax": "0.11.2",
                                    "optax": "0.2.5", "numpy": "2.0.2", "matplotlib": "3.10.0",
                                    "ipython": "7.34.0"}, extra=("ipykernel==6.17.1",), note="Colab, late 2025"),
    "pinned": Stack("", {}, torch_from="main", note="constraints.txt, the grader's"),
    "newest": Stack("3.13", {"torch": "2.14.1", **_NEWEST}, note="the newest releases allowed"),
    "outside": Stack("3.11", {"jax": "0.4.30", "jaxlib": "0.4.30", "flax": "0.8.5", "optax": "0.2.0",
                              "numpy": "1.26.4", "matplotlib": "3.7.5", "ipython": "8.0.1"}, torch_from="main",
                     note="below the ranges: the set-up cell says what to install"),
    # CI (tests/test_stacks.py): the jax/flax/optax/numpy floor and newest, torch borrowed from the main venv
    "ci-floor": Stack("", _FLOOR, torch_from="main", note="CI: the floor, the main venv's torch"),
    "ci-newest": Stack("", _NEWEST, torch_from="main", note="CI: the newest, the main venv's torch"),
}
CI_STACKS = ("ci-floor", "ci-newest")
MATRIX_STACKS = ("floor", "colab-2025-06", "colab-2025-12", "pinned", "newest", "outside")


class Unavailable(RuntimeError):
    """The stack's venv cannot be built here (no interpreter of its version, the registry unreachable)."""


def interpreter(version: str) -> str:
    """A Python executable of ``major.minor`` ``version`` ("" : the running one)."""
    if not version or version == f"{sys.version_info.major}.{sys.version_info.minor}":
        return sys.executable
    found = shutil.which(f"python{version}")
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = ([found] if found else []) + sorted(str(p) for p in pyenv.glob(f"{version}.*/bin/python{version}"))
    for exe in candidates:
        ok = subprocess.run([exe, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True)
        if ok.returncode == 0 and ok.stdout.strip() == str(tuple(int(x) for x in version.split("."))):
            return exe
    raise Unavailable(f"no Python {version} on this machine")


def venv_dir(name: str, root: Path = CACHE) -> Path:
    """The venv folder of stack ``name``: its name and a hash of what it is built from (Python, pins,
    extras, where torch comes from), so venvs of different pins never replace one another."""
    spec = STACKS[name]
    python = spec.python or f"{sys.version_info.major}.{sys.version_info.minor}"
    what = json.dumps([python, sorted(spec.pins.items()), list(spec.extra), spec.torch_from])
    return root / f"{name}-{hashlib.sha256(what.encode()).hexdigest()[:12]}"


def venv_python(name: str, root: Path = CACHE) -> Path:
    """The venv interpreter of stack ``name``."""
    return venv_dir(name, root) / "bin" / "python"


def site_packages(python: Path | str) -> str:
    """The purelib site-packages directory of ``python``."""
    return subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()


def installed(python: Path | str) -> dict[str, str]:
    """``{library: version}`` of LIBS as ``python`` sees them (package metadata; nothing imported)."""
    code = ("import json, importlib.metadata as m\nout = {}\nfor d in " + repr(LIBS) + ":\n    try:\n"
            "        out[d] = m.version(d)\n    except m.PackageNotFoundError:\n        pass\nprint(json.dumps(out))")
    proc = subprocess.run([str(python), "-c", code], capture_output=True, text=True)
    return json.loads(proc.stdout) if proc.returncode == 0 else {}


def _matches(have: dict[str, str], pins: dict[str, str]) -> bool:
    return all(have.get(k, "").split("+")[0] == v for k, v in pins.items())


def registry_reachable(name: str) -> bool:
    """Whether pip can download one of stack ``name``'s pins (else its venv cannot be built: offline)."""
    dist, version = next((d, v) for d, v in STACKS[name].pins.items() if d != "torch")
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-cache-dir", "-d", tmp,
                               f"{dist}=={version}"], capture_output=True, text=True, timeout=300)
    return proc.returncode == 0


def ensure(name: str, root: Path = CACHE) -> Path:
    """Builds (once) the venv of stack ``name``; returns its interpreter.

    Raises:
        Unavailable: no interpreter of the stack's Python, or pip could not install its pins (offline).
    """
    spec = STACKS[name]
    if spec.torch_from == "main" and _matches(installed(sys.executable), spec.pins):
        return Path(sys.executable)  # the running interpreter is this stack already
    folder, python = venv_dir(name, root), venv_python(name, root)
    if spec.torch_from:
        donor = Path(sys.executable) if spec.torch_from == "main" else ensure(spec.torch_from, root)
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{folder.name}.lock", "w") as lock:  # another checkout may build or use it at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (python.exists() and _matches(installed(python), spec.pins)):
            exe = interpreter(spec.python)
            if spec.torch_from == "main":
                exe = getattr(sys, "_base_executable", exe) or exe
            shutil.rmtree(folder, ignore_errors=True)
            subprocess.run([exe, "-m", "venv", str(folder)], check=True, capture_output=True)
            pins = [f"{k}=={v}" for k, v in spec.pins.items()] + list(spec.extra)
            proc = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *pins],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                shutil.rmtree(folder, ignore_errors=True)
                raise Unavailable(f"pip could not install {name}'s stack: {proc.stderr.strip()[-600:]}")
        if spec.torch_from:  # after its own site-packages: the venv's versions win, torch comes from the donor
            pth, line = Path(site_packages(python), "zz_stack_torch.pth"), site_packages(donor) + "\n"
            if not pth.exists() or pth.read_text() != line:  # the last caller's torch (one version: constraints.txt)
                pth.write_text(line)
    return python


KERNEL_SETUP = """\
import os, sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f)]
sys.path[:] = [p for p in sys.path if os.path.abspath(str(p) or ".") != {root!r}]
"""

DUMP = f"""\
import json, importlib.metadata as _md
from autograder.builders import public as _public
print({MARK!r} + json.dumps({{k: {{"status": v.status, "codes": sorted({{t["code"] for t in v.tests if not t["passed"]}}),
    "message": next((t["message"] for t in v.tests if not t["passed"]), "")}} for k, v in _public.RESULTS.items()}}))
_public.RESULTS.clear()
"""

UNTOUCH = """\
import json
with open({pristine!r}, encoding="utf-8") as _fh:
    _nb = json.load(_fh)
with open({saved!r}, "w", encoding="utf-8") as _fh:
    json.dump(_nb, _fh)
for _c in _nb["cells"]:
    if (_c["metadata"].get("tapetrace") or {{}}).get("role") == "answer":
        exec("".join(_c["source"]), globals())
for _ex in {exercises!r}:
    check(_ex)
"""


def _outputs(cell: Any) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        elif out.get("output_type") == "error":
            parts.append(f"{out.get('ename')}: {out.get('evalue')}")
        elif "data" in out:
            parts.append(str(out["data"].get("text/plain", "")))
    return "".join(parts)


def run_notebook(python: Path | str, lang: str, workdir: Path, *, timeout: int = 1800) -> dict[str, Any]:
    """Runs the student notebook (``lang``) with ``python``'s kernel: filled, then untouched.

    Returns:
        ``{"filled": {ex: result}, "untouched": {ex: result}, "setup": the set-up cell's output,
        "errors": [cells that raised]}``; a result is ``{"status", "codes", "message"}``.
    """
    import nbclient
    import nbformat

    sys.path.insert(0, str(ROOT))
    from autograder import builders
    from autograder.builders import notebook as _notebook
    from autograder.core.paths import SOLUTIONS

    template_nb = builders.TEMPLATES[lang] / _notebook.NOTEBOOK
    src = json.loads(template_nb.read_text(encoding="utf-8"))
    exercises = src["metadata"]["tapetrace"]["exercises"]
    filled = _notebook.fill_with(src, {ex: (SOLUTIONS / f"{ex}.py").read_text() for ex in exercises})
    folder, home, tmp, kernels = (workdir / d for d in ("nb", "home", "tmp", "jupyter"))
    for d in (folder, home, tmp, kernels / "kernels" / "stack"):
        d.mkdir(parents=True, exist_ok=True)
    saved = folder / _notebook.NOTEBOOK
    saved.write_text(_notebook.dumps(filled), encoding="utf-8")
    pristine = workdir / "pristine.ipynb"
    shutil.copy(template_nb, pristine)
    (kernels / "kernels" / "stack" / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "stack", "language": "python"}))

    nb = nbformat.reads(_notebook.dumps(filled), as_version=4)
    new = nbformat.v4.new_code_cell
    nb.cells.insert(0, new(KERNEL_SETUP.format(root=str(ROOT))))
    n_filled = len(nb.cells)
    nb.cells += [new(DUMP), new(UNTOUCH.format(pristine=str(pristine), saved=str(saved), exercises=exercises)),
                 new(DUMP)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "JUPYTER", "XDG_", "MPL", "JPY_"))}
    env.update(HOME=str(home), TMPDIR=str(tmp), IPYTHONDIR=str(workdir / "ipython"), JPY_SESSION_NAME=str(saved),
               TORCHINDUCTOR_CACHE_DIR=str(workdir / "torchinductor"), MPLCONFIGDIR=str(workdir / "mpl"),
               PYTHONDONTWRITEBYTECODE="1", PYTHONNOUSERSITE="1")
    old = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = str(kernels)  # the kernel spec is looked up here, in this process
    try:
        client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="stack", allow_errors=True,
                                         resources={"metadata": {"path": str(folder)}})
        client.execute(env=env)
    finally:
        if old is None:
            os.environ.pop("JUPYTER_PATH", None)
        else:
            os.environ["JUPYTER_PATH"] = old

    def dump(cell: Any) -> dict[str, Any]:
        text = _outputs(cell)
        return json.loads(text.split(MARK, 1)[1].strip().splitlines()[0]) if MARK in text else {}

    setup = next((c for c in nb.cells if (c.metadata.get("tapetrace") or {}).get("role") == "setup"), None)
    errors = [(i, _outputs(c)[-800:]) for i, c in enumerate(nb.cells) if c.cell_type == "code"
              and any(o.get("output_type") == "error" for o in c.get("outputs", []))]
    return {"exercises": exercises, "filled": dump(nb.cells[n_filled]), "untouched": dump(nb.cells[-1]),
            "setup": _outputs(setup) if setup is not None else "", "errors": errors}


def summarize(run: dict[str, Any]) -> tuple[str, str]:
    """``("13/13", "13/13")``-style counts: solutions passed, stubs not attempted (with what went wrong)."""
    n = len(run["exercises"])
    passed = [ex for ex in run["exercises"] if run["filled"].get(ex, {}).get("status") == "passed"]
    fresh = [ex for ex in run["exercises"] if run["untouched"].get(ex, {}).get("status") == "not attempted"]

    def cell(ok: list[str], results: dict[str, Any]) -> str:
        bad: dict[str, list[str]] = {}
        for ex in run["exercises"]:
            if ex not in ok:
                bad.setdefault(results.get(ex, {}).get("status", "no result"), []).append(ex[:4])
        said = "; ".join(f"{status}: {', '.join(exs) if len(exs) < n else 'all'}" for status, exs in bad.items())
        return f"{len(ok)}/{n}" + (f" ({said})" if said else "")

    return cell(passed, run["filled"]), cell(fresh, run["untouched"])


def flagged(row: dict[str, Any]) -> str:
    """What the set-up cell named as unsupported (its "  - " lines, first language), or "nothing"."""
    setup = row["runs"][row["langs"][0]]["setup"] if row.get("runs") else ""
    items = [line.strip()[2:].split(" (")[0] for line in setup.splitlines() if line.startswith("  - ")]
    return ", ".join(items) or "nothing"


def matrix(rows: list[dict[str, Any]]) -> str:
    """The Markdown table of measured stacks."""
    head = ("| stack | Python | torch | jax / jaxlib | flax | optax | numpy | matplotlib | IPython "
            "| set-up cell flags | solutions pass (EN / ES) | stub not attempted (EN / ES) |")
    lines = [head, "|" + "---|" * 12]
    for r in rows:
        v = r["versions"]
        sol = " / ".join(r["solutions"][lang] for lang in r["langs"])
        stub = " / ".join(r["stubs"][lang] for lang in r["langs"])
        note = STACKS[r["name"]].note if r["name"] in STACKS else r["note"]
        lines.append(f"| {r['name']} ({note}) | {r['python']} | {v.get('torch', '-')} | {v.get('jax', '-')} / "
                     f"{v.get('jaxlib', '-')} | {v.get('flax', '-')} | {v.get('optax', '-')} | {v.get('numpy', '-')} "
                     f"| {v.get('matplotlib', '-')} | {v.get('ipython', '-')} | {flagged(r)} | {sol} | {stub} |")
    return "\n".join(lines)


def measure(name: str, langs: tuple[str, ...], root: Path = CACHE) -> dict[str, Any]:
    """Builds stack ``name`` and runs the notebook in each language; one matrix row."""
    python = ensure(name, root)
    versions = installed(python)
    pyver = subprocess.run([str(python), "-c", "import platform; print(platform.python_version())"],
                           capture_output=True, text=True, check=True).stdout.strip()
    row: dict[str, Any] = {"name": name, "note": STACKS[name].note, "python": pyver, "versions": versions,
                           "langs": langs, "solutions": {}, "stubs": {}, "runs": {}}
    for lang in langs:
        with tempfile.TemporaryDirectory(prefix=f"stack-{name}-{lang}-") as tmp:
            run = run_notebook(python, lang, Path(tmp))
        row["runs"][lang] = run
        row["solutions"][lang], row["stubs"][lang] = summarize(run)
        print(f"{name} [{lang}]: solutions {row['solutions'][lang]}, stubs {row['stubs'][lang]}"
              + (f", errors in cells {[i for i, _ in run['errors']]}" if run["errors"] else ""), flush=True)
    return row


def write_docs(path: Path, table: str) -> None:
    """Puts ``table`` between the stack-matrix markers of ``path``."""
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    path.write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Command line: build the stacks, run the notebook, print (and write) the matrix."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stacks", nargs="+", default=list(MATRIX_STACKS), choices=sorted(STACKS))
    ap.add_argument("--langs", nargs="+", default=["en", "es"], choices=["en", "es"])
    ap.add_argument("--write", type=Path, help="a docs page holding the stack-matrix markers")
    ap.add_argument("--json", type=Path, help="also save every run's results here")
    ap.add_argument("--from-json", type=Path, nargs="+", default=[],
                    help="rows saved by --json (runs in parallel): the matrix of these, in STACKS' order; runs nothing")
    args = ap.parse_args(argv)
    rows = [row for path in args.from_json for row in json.loads(path.read_text())]
    order = [n for n in STACKS]
    rows.sort(key=lambda row: order.index(row["name"]) if row["name"] in order else len(order))
    for name in args.stacks if not args.from_json else []:
        try:
            rows.append(measure(name, tuple(args.langs)))
        except Unavailable as err:
            print(f"{name}: skipped: {err}", file=sys.stderr)
    table = matrix(rows)
    print(table)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, default=str))
    if args.write:
        write_docs(args.write, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
