"""The exercises: one sub-package per exercise, named ``exNN_name``; nothing else lists them.

An exercise package holds everything of the exercise that ships to students::

    autograder/exercises/exNN_name/
        __init__.py   META = Exercise(...): title, frameworks, cost, contract names (plain data only)
        probes.py     what runs beside the student's code in a worker (measures, never judges)
        public.py     the public checks (``suite``), shown in the notebook's self-check
        messages.py   the exercise's message catalogue (``EN`` and ``ES``)

Its hidden suite is ``autograder/hidden/exNN_name.py`` (never shipped), its reference solution
``solutions/exNN_name.py``, its mutants ``tests/mutants/exNN_name/``. The registry
(:mod:`autograder.core.registry`, from
:mod:`autograder.core.exercise`'s discovery) is built from the packages found here, in name order; this module
imports neither torch nor JAX, and importing an exercise package imports only its metadata.
"""

from __future__ import annotations

from autograder.core.exercise import FRAMEWORKS as FRAMEWORKS
from autograder.core.exercise import PACKAGE_NAME as PACKAGE_NAME
from autograder.core.exercise import Exercise as Exercise
from autograder.core.exercise import discover as discover
from autograder.core.exercise import package_names as package_names
