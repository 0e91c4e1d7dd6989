"""The JAX compilation cache of a grading run: where it lives (``TAPETRACE_JAX_CACHE``: per run, shared,
or off) and keeping a shared one under its size; and the grader's caches folder every student worker is kept
from (:func:`cache_places`).
"""

from __future__ import annotations

import os
import re
import tempfile

CACHE_ENV = "TAPETRACE_JAX_CACHE"


CACHE_MAX_BYTES = 1 << 30  # pruned (oldest first) to half of this when a run starts above it


def jax_cache_dir(tmp: str) -> tuple[str | None, bool]:
    """The JAX compilation cache of a run: (directory or None, whether it is the run's own).

    By default it persists across runs in ``~/.cache/tapetrace/jax-compile``: programs that do not
    depend on the seed (dataset training, Flax inits, probe helpers) and every program of a re-run
    with the same ``--seed`` (``--resume``, a regrade) load instead of compiling. JAX keys entries by
    the program, its compile options, the XLA flags and the jax/jaxlib versions, so one directory
    serves every version and device. Only reference workers read and write it (trusted code); no
    student's worker can read it (0700, hidden by the sandbox): the grader lends it, one program at
    a time, only the programs it names by key (``_compile_cache``), and nothing a student sends is
    ever written there. Outside /tmp on purpose: a student's worker covers /tmp with a private tmpfs.

    ``TAPETRACE_JAX_CACHE=run`` gives each run a fresh directory (deleted at the end);
    ``TAPETRACE_JAX_CACHE=/some/dir`` puts the persistent one elsewhere; ``TAPETRACE_JAX_CACHE=off``
    keeps none (every worker compiles all it runs, and nothing is lent).
    """
    choice = os.environ.get(CACHE_ENV, "")
    if choice == "off":
        return None, False
    base = os.path.join(os.path.expanduser("~"), ".cache", "tapetrace")
    if choice != "run":
        path = choice or os.path.join(base, "jax-compile")
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
            prune(path, CACHE_MAX_BYTES)
            return path, False
        except OSError:
            pass
    try:
        os.makedirs(base, exist_ok=True)
        return tempfile.mkdtemp(prefix="jax-", dir=base), True
    except OSError:
        return os.path.join(tmp, "jax-cache"), True


def caches_root() -> str:
    """``~/.cache/tapetrace``: the grader's own caches (compiled programs, the reference's kept answers, each
    run's compile cache), whatever this run is configured to use."""
    return os.path.join(os.path.expanduser("~"), ".cache", "tapetrace")


# the grader's private caches among caches_root()'s entries: the reference's kept answers (engine.refstore), the
# persistent compile cache and each run's own ("jax-XXXXXXXX"); never the stacks' virtual environments beside them
_PRIVATE_CACHES = re.compile(r"reference|jax-compile|jax-\w+")


def cache_places() -> list[str]:
    """The grader's private caches in :func:`caches_root` a student's worker must not see, whatever this run is
    configured to use (the defaults hold answers and programs of earlier runs): its ``reference`` store,
    ``jax-compile`` and each run's ``jax-*`` folder. The root itself stays visible (0755: only names in it; a hidden
    path others can read would cost a uid-only worker its guarantee), as do the ``stacks`` venvs beside them."""
    root = caches_root()
    try:
        names = os.listdir(root)
    except OSError:
        return []
    return sorted(os.path.join(root, n) for n in names if _PRIVATE_CACHES.fullmatch(n))


def prune(path: str, max_bytes: int, keep: tuple[str, ...] = ()) -> None:
    """Keeps a cache folder's files under ``max_bytes``: above it, the oldest (by modification time) go until half
    is left. ``keep``: names never removed (a store's key). Raises ``OSError`` where the folder cannot be listed."""
    entries = []
    with os.scandir(path) as it:
        for e in it:
            if e.name not in keep and e.is_file(follow_symlinks=False):
                st = e.stat(follow_symlinks=False)
                entries.append((st.st_mtime, st.st_size, e.path))
    total = sum(size for _, size, _ in entries)
    if total <= max_bytes:
        return
    for _, size, p in sorted(entries):
        if total <= max_bytes // 2:
            break
        try:
            os.unlink(p)
            total -= size
        except OSError:
            pass
