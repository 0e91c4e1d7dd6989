"""The catalogue's modules: the engine's messages (``common``) and UI text (``notebook``, ``student``,
``report``), each with ``EN`` and ``ES`` dicts sharing keys; each exercise adds its own
``autograder/exercises/<exercise>/messages.py``. Merged and rendered by :mod:`autograder._i18n`.

Messages are constants that show the bug and the fix. Checks raise
``Fail(KEY, **fields)``; the engine renders the key in the grading language.
"""

from __future__ import annotations

from autograder._i18n import LANGS as LANGS
from autograder._i18n import catalogue as catalogue
from autograder._i18n import catalogue_modules as catalogue_modules
from autograder._i18n import placeholders as placeholders
from autograder._i18n import render as render
