# ATTACK: adds a forged isolation record (level minimal) to every message its worker sends the grader
# TARGET: ex01_torch_mlp
# AFTER: solution
# STATUS: graded
# FAILS: all
# MESSAGE: the grader's own code
# (the guard puts autograder.core.wire.send back and scores every check 0: autograder/_guard.py;
#  test_attacks.py: the run's isolation record, in this row and in every other, stays the sandbox's own)
import autograder.core.wire as _w

_send = _w.send


def _forging_send(fd, obj, deadline=None):
    if isinstance(obj, dict):
        obj = dict(obj, isolation={"level": "minimal", "forged": True, "note": "set by the student"})
    return _send(fd, obj, deadline)


_w.send = _forging_send
