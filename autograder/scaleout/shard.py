"""Shards of one grading run (``grade --shard I/N``) and their merge (``tapetrace merge``).

A course's submissions are cut into N deterministic slices of the *sorted* paths, so N
independent jobs (a Slurm job array, a Kubernetes Indexed Job) that are given the same
submission list grade disjoint slices that cover it. Each job writes a **part**; ``merge`` joins
the parts into exactly the JSON/CSV one unsharded run with the same seed would write.

Seed: a shard uses ``--seed`` when given; without it, it derives the seed from the sorted
submission list (SHA-256), so N jobs that never talk to each other still draw the same inputs,
and the seed is recorded in every part (regrade unsharded with ``--seed`` to check). A random
seed per shard would make the parts incomparable, and requiring ``--seed`` would only move that
derivation into every instructor's script.

Part file: a JSON object, never produced by an ordinary run (whose JSON stays docs/grading-contract.md's)::

    {"tapetrace_part": {"version": 1, "shard": [I, N],
                        "run": {"seed": ..., "exercises": [...], "public_only": ..., "lang": ...,
                                "timeout": ..., "device": "auto"},
                        "submissions": ["every path of the run, in the order given"]},
     "results": [result objects of this slice, exactly as an unsharded run writes them]}

The full submission list travels in every part (tens of bytes per submission), so ``merge`` can
name any submission no part holds, even when a whole part is lost, and refuse parts of another
run. ``_report.read_json`` reads a part's results, so ``--resume`` and ``tapetrace report`` work on
parts too.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.core.records import ResultRow

PART_KEY = "tapetrace_part"
PART_VERSION = 1
_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
SLURM_VARS = ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT")
K8S_VAR = "JOB_COMPLETION_INDEX"


class ShardError(Exception):
    """A shard cannot be chosen, or parts cannot be merged (one-line reason, exit 2)."""


# ----------------------------------------------------------------- selection
def parse_spec(text: str) -> tuple[int, int]:
    """``"I/N"`` (1-based) -> ``(I, N)``.

    Raises:
        ShardError: not of the form I/N with 1 <= I <= N.
    """
    m = _SPEC.match(text)
    if not m:
        raise ShardError(f"--shard {text!r}: expected I/N, e.g. --shard 2/8 (the 2nd of 8 slices)")
    i, n = int(m.group(1)), int(m.group(2))
    if n < 1 or not 1 <= i <= n:
        raise ShardError(f"--shard {text}: I must be between 1 and N (1-based)")
    return i, n


def _env_int(env: Mapping[str, str], name: str) -> int | None:
    value = env.get(name, "").strip()
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        raise ShardError(f"{name}={value!r} is not a number") from None


def from_environment(env: Mapping[str, str], shards: int | None = None) -> tuple[int, int]:
    """The shard named by a batch system's environment, as ``(I, N)`` (1-based).

    Slurm job arrays set ``SLURM_ARRAY_TASK_ID`` and ``SLURM_ARRAY_TASK_COUNT`` (and
    ``SLURM_ARRAY_TASK_MIN``/``_STEP``, so ``--array=0-7`` and ``--array=1-8`` both work);
    Kubernetes Indexed Jobs set ``JOB_COMPLETION_INDEX`` (0-based) but not the number of
    completions, which ``shards`` (``--shards N``) gives.

    Raises:
        ShardError: no variable set, both kinds set, or values out of range.
    """
    task = _env_int(env, "SLURM_ARRAY_TASK_ID")
    index = _env_int(env, K8S_VAR)
    if task is not None and index is not None:
        raise ShardError(f"both SLURM_ARRAY_TASK_ID and {K8S_VAR} are set: give --shard I/N")
    if task is not None:
        count = _env_int(env, "SLURM_ARRAY_TASK_COUNT")
        if count is None:
            raise ShardError("SLURM_ARRAY_TASK_ID is set but not SLURM_ARRAY_TASK_COUNT: give --shard I/N")
        low = _env_int(env, "SLURM_ARRAY_TASK_MIN")
        step = _env_int(env, "SLURM_ARRAY_TASK_STEP") or 1
        offset = task - (low if low is not None else 1)
        if offset < 0 or offset % step or offset // step >= count:
            raise ShardError(f"cannot tell the shard from SLURM_ARRAY_TASK_ID={task} "
                             f"(array of {count} tasks); use --array=1-N or --shard I/N")
        if shards is not None and shards != count:
            raise ShardError(f"--shards {shards} disagrees with SLURM_ARRAY_TASK_COUNT={count}")
        return offset // step + 1, count
    if index is not None:
        if shards is None:
            raise ShardError(f"{K8S_VAR} is set but not the number of shards: add --shards N (the Job's completions)")
        if shards < 1 or not 0 <= index < shards:
            raise ShardError(f"{K8S_VAR}={index} is outside 0..{shards - 1} (--shards {shards})")
        return index + 1, shards
    raise ShardError("--shard without I/N reads SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT or "
                     f"{K8S_VAR} (with --shards N); none is set here")


def slice_of(paths: Sequence[str], index: int, count: int) -> list[str]:
    """The ``index``-th (1-based) of ``count`` contiguous slices of the sorted distinct paths.

    Slices differ in size by at most one and cover every path exactly once, whatever order the
    paths were given in. Returns the slice in the order the paths were given.
    """
    ordered = sorted(set(paths))
    lo, hi = (index - 1) * len(ordered) // count, index * len(ordered) // count
    mine = set(ordered[lo:hi])
    return [p for p in dict.fromkeys(paths) if p in mine]


def derive_seed(paths: Sequence[str]) -> int:
    """The run's seed when shards are not given ``--seed``: a hash of the sorted paths."""
    digest = hashlib.sha256("\0".join(["tapetrace-shard-seed", *sorted(set(paths))]).encode()).digest()
    return int.from_bytes(digest[:4], "big") % (2**31)


# ------------------------------------------------------------------ the part
@dataclass
class Shard:
    """One shard of a run: which slice, the run's settings, and how its part is written."""

    index: int
    count: int
    submissions: list[str]
    run: dict[str, Any]
    paths: list[str] = field(default_factory=list)

    @property
    def seed(self) -> int:
        return int(self.run["seed"])

    def manifest(self) -> dict[str, Any]:
        """What the part records beside its results (see the module docstring)."""
        return {"version": PART_VERSION, "shard": [self.index, self.count], "run": dict(self.run),
                "submissions": list(self.submissions)}

    def write_json(self, results: list[ResultRow], path: str) -> None:
        """Writes the part (also with no result yet: an empty slice is still a part)."""
        from autograder.reports import report as _report

        mine = set(self.paths)
        data = {PART_KEY: self.manifest(), "results": [r for r in results if r["submission"] in mine]}
        _report.atomic_write(path, json.dumps(data, indent=2), private=True)  # written while grading


def run_settings(args: argparse.Namespace, exercises: list[str], seed: int) -> dict[str, Any]:
    """The settings every part of one run must share (compared by ``merge``)."""
    from autograder.core.paths import EXERCISES

    ordered = [e for e in EXERCISES if e in exercises]  # as results list them, whatever --only's order
    return {"seed": int(seed), "exercises": ordered, "public_only": bool(args.public_only),
            "lang": args.lang, "timeout": float(args.timeout), "device": args.device}


def select(args: argparse.Namespace, exercises: list[str], env: Mapping[str, str] | None = None) -> Shard | None:
    """The shard a ``grade`` invocation asks for, or None (no ``--shard``/``--shards``).

    Sets nothing on ``args``; the caller grades ``shard.paths`` with ``shard.seed``.

    Raises:
        ShardError: a bad ``--shard``/``--shards``, or ``--resume`` on a part of another run.
    """
    if args.shard is None and args.shards is None:
        return None
    if args.shards is not None and args.shards < 1:
        raise ShardError("--shards must be >= 1")
    if args.shard:
        index, count = parse_spec(args.shard)
        if args.shards is not None and args.shards != count:
            raise ShardError(f"--shard {args.shard} disagrees with --shards {args.shards}")
    else:
        index, count = from_environment(os.environ if env is None else env, args.shards)
    submissions = list(dict.fromkeys(args.submissions))
    seed = args.seed if args.seed is not None else derive_seed(submissions)
    shard = Shard(index, count, submissions, run_settings(args, exercises, seed),
                  slice_of(submissions, index, count))
    if args.resume and args.json and Path(args.json).exists():
        try:
            earlier = read_part(args.json)
        except ShardError as err:
            raise ShardError(f"--resume: {err}") from None
        why = _differs(shard.manifest(), earlier[PART_KEY])
        if why:
            raise ShardError(f"--resume: {args.json} is a part of another run ({why})")
    return shard


def note(shard: Shard, seed_given: bool) -> str:
    """One line for stderr: which slice, how many, which seed."""
    how = "" if seed_given else " (derived from the submission list; pass --seed to choose it)"
    return (f"tapetrace: shard {shard.index}/{shard.count}: {len(shard.paths)} of {len(shard.submissions)} "
            f"submissions, seed {shard.seed}{how}")


# --------------------------------------------------------------------- merge
def read_part(path: str) -> dict[str, Any]:
    """Reads and checks one part file.

    Raises:
        ShardError: unreadable, or not a part (e.g. the JSON of an unsharded run).
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise ShardError(f"cannot read {path}: {err.strerror or err}") from None
    except ValueError as err:
        raise ShardError(f"{path} is not valid JSON: {str(err).splitlines()[0]}") from None
    if not isinstance(data, dict) or not isinstance(data.get(PART_KEY), dict):
        raise ShardError(f"{path} is not a shard part (was it graded with --shard?)")
    man = data[PART_KEY]
    ok = (man.get("version") == PART_VERSION and isinstance(man.get("run"), dict)
          and isinstance(man.get("submissions"), list) and all(isinstance(s, str) for s in man["submissions"])
          and isinstance(man.get("shard"), list) and len(man["shard"]) == 2
          and all(isinstance(n, int) and not isinstance(n, bool) for n in man["shard"])
          and isinstance(data.get("results"), list))
    if not ok:
        raise ShardError(f"{path} is not a tapetrace part of version {PART_VERSION}")
    from autograder.reports.report import malformed

    for k, r in enumerate(data["results"]):  # a damaged part (truncated, edited): one line, never a traceback
        why = malformed(r)
        if why is not None:
            raise ShardError(f"{path}: result {k + 1} is not well formed ({why})")
    return data


def _differs(a: dict[str, Any], b: dict[str, Any]) -> str:
    """Why two manifests belong to different runs ('' when they are of the same run)."""
    for key in ("seed", "exercises", "public_only", "lang", "timeout", "device"):
        if a["run"].get(key) != b["run"].get(key):
            return f"{key} {json.dumps(a['run'].get(key))} vs {json.dumps(b['run'].get(key))}"
    if a["shard"][1] != b["shard"][1]:
        return f"{a['shard'][1]} vs {b['shard'][1]} shards"
    sa, sb = set(a["submissions"]), set(b["submissions"])
    if sa != sb:
        extra = sorted(sa ^ sb)[0]
        return f"submission lists differ, e.g. {extra} ({len(sa)} vs {len(sb)} submissions)"
    return ""


def merge(paths: Sequence[str]) -> list[ResultRow]:
    """Joins parts into the results of one run, in the run's order.

    Raises:
        ShardError: no part, a part of another run, a submission held twice or by none.
    """
    if not paths:
        raise ShardError("merge: no part given")
    parts = [(p, read_part(p)) for p in paths]
    first_path, first = parts[0]
    man0 = first[PART_KEY]
    for p, data in parts[1:]:
        why = _differs(man0, data[PART_KEY])
        if why:
            raise ShardError(f"{p} is a part of another run than {first_path} ({why})")
    order = list(dict.fromkeys(man0["submissions"]))
    known = set(order)
    count = man0["shard"][1]
    where: dict[str, str] = {}
    found: dict[str, ResultRow] = {}
    for p, data in parts:
        index = data[PART_KEY]["shard"][0]
        mine = set(slice_of(order, index, count)) if isinstance(index, int) and 1 <= index <= count else set()
        for res in data["results"]:
            sub = res["submission"]
            if sub not in known:
                raise ShardError(f"{p} holds {sub}, which is not in the run's submission list")
            if sub not in mine:
                raise ShardError(f"{p} (shard {index}/{count}) holds {sub}, which belongs to another shard")
            if sub in found:
                raise ShardError(f"duplicated submission: {sub} (in {where[sub]} and {p})")
            found[sub] = res
            where[sub] = p
    missing = [s for s in order if s not in found]
    if missing:
        present = {d[PART_KEY]["shard"][0] for _, d in parts}
        shard_of = next(i for i in range(1, count + 1) if missing[0] in set(slice_of(order, i, count)))
        why = "no part of it was given" if shard_of not in present else "its part does not hold it (interrupted?)"
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise ShardError(f"missing submission: {missing[0]}{more} (shard {shard_of}/{count}: {why})")
    return [found[s] for s in order]


class ShardAction(argparse.Action):
    """``--shard [I/N]``: a following token that is not I/N is a submission, not the shard.

    ``grade --shard subs/a subs/b`` would otherwise take ``subs/a`` as the shard's value.
    """

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if values and not _SPEC.match(values):
            namespace.shard_spill = [*getattr(namespace, "shard_spill", []), values]
            values = ""
        setattr(namespace, self.dest, values)


def add_grade_options(g: argparse.ArgumentParser) -> None:
    """Adds ``--shard [I/N]`` and ``--shards N`` to ``grade``."""
    g.add_argument("--shard", nargs="?", const="", default=None, metavar="I/N", action=ShardAction,
                   help="grade the I-th of N slices of the sorted submissions (1-based) and write a part for "
                        "`tapetrace merge`; without I/N: from SLURM_ARRAY_TASK_ID/_COUNT or JOB_COMPLETION_INDEX")
    g.add_argument("--shards", type=int, default=None, metavar="N",
                   help="the number of shards, with JOB_COMPLETION_INDEX (Kubernetes Indexed Job)")
