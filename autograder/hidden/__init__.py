"""Hidden suites, one module per exercise, each exposing ``suite``.

Never shipped to students and never visible to a student's worker.
"""
