"""Public checks, one module per exercise, each exposing ``suite`` (all ``hidden=False``).

These ship to students (notebook self-check) together with the probes; the
hidden suites include them first and add the hidden checks. Nothing here may
import from ``autograder.hidden`` or reveal a reference value.
"""
