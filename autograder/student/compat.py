"""Shims for APIs that a supported library version lacks (docs/supported-versions.md).

The notebook teaches the newest APIs; a supported older version that lacks one gets a shim here,
added by the set-up cell (:func:`add_missing`) so that the student's code, the reference's and the
checks call the same thing on every supported stack. A library is imported only where its package
metadata says the shim is needed (the set-up cell stays fast on current stacks).

- ``jax.shard_map`` (JAX >= 0.6.1): on older JAX, :func:`shard_map` over
  ``jax.experimental.shard_map.shard_map`` (same keywords: ``mesh``, ``in_specs``, ``out_specs``,
  ``axis_names``, ``check_vma`` as ``check_rep``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

JAX_SHARD_MAP = (0, 6, 1)  # the first JAX with jax.shard_map


def shard_map(f: Callable[..., Any] | None = None, /, *, out_specs: Any, in_specs: Any = None, mesh: Any = None,
              axis_names: Any = frozenset(), check_vma: bool = True) -> Any:
    """``jax.shard_map`` on a JAX that only has ``jax.experimental.shard_map.shard_map``.

    Args:
        f: the per-shard function (None: returns a decorator, as ``jax.shard_map`` does).
        out_specs: the outputs' partition specs.
        in_specs: the inputs' partition specs.
        mesh: the mesh (required here: this JAX has no mesh context for shard_map).
        axis_names: the mesh axes ``f`` is manual over (default: all of them).
        check_vma: checks replication of the outputs (the older ``check_rep``).

    Returns:
        The mapped function.

    Raises:
        TypeError: ``mesh`` or ``in_specs`` is missing.
    """
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                 axis_names=axis_names, check_vma=check_vma)
    if mesh is None or in_specs is None:
        raise TypeError("jax.shard_map on this JAX needs mesh= and in_specs=")
    from jax.experimental.shard_map import shard_map as legacy

    extra = {}
    if axis_names:
        extra["auto"] = frozenset(mesh.axis_names) - frozenset(axis_names)
    return legacy(f, mesh, in_specs, out_specs, check_rep=check_vma, **extra)


def add_missing(versions: dict[str, str | None] | None = None) -> list[str]:
    """Adds the shims this session's libraries need; returns the names added (e.g. ``["jax.shard_map"]``).

    Args:
        versions: ``{dist: version}`` (default: package metadata, :func:`autograder.student.stack.installed`).
    """
    from autograder.student import stack

    versions = stack.installed(("jax",)) if versions is None else versions
    added = []
    have = versions.get("jax")
    if have and stack.parse(have) < JAX_SHARD_MAP:
        import jax

        if not hasattr(jax, "shard_map"):
            jax.shard_map = shard_map
            added.append("jax.shard_map")
    return added
