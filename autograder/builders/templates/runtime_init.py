"""tapetrace public checks (built by `tapetrace build`; runs inside the student notebook).

Holds the public checks, their probes and messages and a snapshot of the reference's outputs on
the public inputs: no reference solution and no hidden test. Use `autograder.builders.public.check`.
"""

__version__ = "__VERSION__"
