"""The catalogue's modules: the engine's messages (``common``) and UI text (``notebook``, ``student``,
``report``), each with ``EN`` and ``ES`` dicts sharing keys; each exercise adds its own
``autograder/exercises/<exercise>/messages.py``. Merged and rendered by :mod:`autograder.core.i18n`
(``render``, ``catalogue``, ``placeholders``; re-exported by :mod:`autograder.core`). Plain data: this
package imports nothing of the engine, so the core can import it (no cycle).

Messages are constants that show the bug and the fix. Checks raise
``Fail(KEY, **fields)``; the engine renders the key in the grading language.
"""
