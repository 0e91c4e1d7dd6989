"""What a hidden check may draw: each family of inputs it draws from, and the words that promise it.

A check may only draw what the stub's words promise (docs/curriculum.md, ex13's meshes): where a hidden
check calls the student's code with optimizers that need the params, meshes with Auto axes, models
that are not an ``nn.Sequential`` or gradients already on the parameters, the stub says so, in every
language the stub is shown in. Each :class:`Family` names the identifiers whose use in a hidden suite
or an exercise's probes draws from it (``markers``) and the patterns its stub text must match, one
tuple per language (each pattern must match somewhere, case-insensitively, line breaks read as
spaces). :func:`unpromised` is
what the tests hold (tests/test_family_promises.py): a family drawn whose words the text lacks.
Grader side only; plain data and :mod:`ast`, no torch or JAX.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from autograder.core import syntax as _syntax


@dataclass(frozen=True)
class Family:
    """One family of inputs a check draws from.

    Attributes:
        name: short identifier (in test output).
        what: what the stub must say, in words (for the failure message).
        markers: identifiers (names or attributes) whose use in a suite's or probes' code draws from it.
        words: per language (``"en"``, ``"es"``), the regular expressions the stub text must all match.
    """

    name: str
    what: str
    markers: tuple[str, ...]
    words: dict[str, tuple[str, ...]]


FAMILIES: tuple[Family, ...] = (
    Family("optax_needing_params", "any optax optimizer, also those whose update needs params (optax.adamw)",
           ("optax_needing_params",),
           {"en": (r"adamw", r"needs? (?:the )?`?params"), "es": (r"adamw", r"necesitan? (?:los )?`?params")}),
    Family("torch_optimizers", "any torch.optim optimizer, not only SGD",
           ("torch_optimizers",),
           {"en": (r"any `?torch\.optim`? optimizer",), "es": (r"cualquier optimizador de `?torch\.optim",)}),
    Family("gradients_present", "gradients may already be on the parameters when the step is called",
           ("put_gradients",),
           {"en": (r"gradients? (?:\w+ ){0,2}already",), "es": (r"gradientes? (?:\w+ ){0,2}ya\b",)}),
    Family("class_counts", "the number of classes is an argument (num_classes), not always 10",
           ("num_classes", "_other_num_classes"),
           {"en": (r"num_classes",), "es": (r"num_classes",)}),
    Family("model_kinds", "any module holding the nn.Linear layers, not only an nn.Sequential",
           ("MODEL_KINDS",),
           {"en": (r"not only (?:an? )?`?nn\.Sequential",), "es": (r"no solo (?:un )?`?nn\.Sequential",)}),
    Family("mesh_kinds", "meshes with Auto axes and with Explicit axes",
           ("AUTO_MESH",),
           {"en": (r"\bAuto\b", r"\bExplicit\b"), "es": (r"\bAuto\b", r"\bExplicit\b")}),
    Family("output_widths", "models with several outputs, of which the loss and accuracy read the first logit ([:, 0])",
           ("several_outputs",),
           {"en": (r"first logit", r"\[:, 0\]"), "es": (r"primer logit", r"\[:, 0\]")}),
)


def identifiers(source: str) -> set[str]:
    """Every name read and every attribute used in ``source`` (not keyword-argument or parameter names)."""
    out: set[str] = set()
    for node in ast.walk(_syntax.parse(source)):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
    return out


def drawn(source: str) -> list[Family]:
    """The families that code drawing inputs (a hidden suite, an exercise's probes) draws from."""
    names = identifiers(source)
    return [f for f in FAMILIES if names.intersection(f.markers)]


def unpromised(source: str, texts: dict[str, str]) -> list[str]:
    """Families ``source`` draws from that a stub text does not name.

    Args:
        source: the code that draws (the hidden suite and the exercise's probes, joined).
        texts: the stub's words per language (``{"en": ..., "es": ...}``).

    Returns:
        One line per family and language whose patterns the text misses (empty: every draw promised).
    """
    out = []
    for family in drawn(source):
        for lang, patterns in family.words.items():
            words = " ".join(texts.get(lang, "").split())  # a phrase may wrap across lines
            missing = [p for p in patterns if not re.search(p, words, re.IGNORECASE)]
            if missing:
                out.append(f"{family.name} [{lang}]: the stub must say {family.what} (no match for {missing})")
    return out
