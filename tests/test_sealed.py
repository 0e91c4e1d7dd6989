"""What a probe keeps from before a student's call (autograder.probing.tools.sealed): equal to what it copied, and
nothing the student's code can reach through the probe's frame can change it in place."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from autograder.probing.tools import sealed


@pytest.mark.parametrize("a", [np.arange(12, dtype=np.float32).reshape(3, 4), np.zeros((0, 3)), np.array(2.5),
                               np.array([[1, 2]], dtype=np.int64), np.array([np.nan, 1.0])],
                         ids=["2d", "empty", "0d", "int", "nan"])
def test_a_sealed_copy_is_equal_and_cannot_be_written(a):
    s = sealed(a)
    assert s.shape == a.shape and s.dtype == a.dtype
    np.testing.assert_array_equal(s, a)
    a[...] = 7  # the original changes; the copy does not
    assert not s.flags.writeable
    with pytest.raises(ValueError):
        s.setflags(write=True)
    if s.size:
        with pytest.raises(ValueError):
            s[...] = 0
        with pytest.raises(ValueError):
            np.copyto(s, np.ones_like(s))


def test_what_the_callers_frame_hands_out_cannot_be_rewritten():
    """The way forge_ex04_snapshot_rewritten_through_frames went: a callee reads its caller's locals."""

    def student(x):
        x += 1  # changed in place, then hidden
        caller = sys._getframe(1)
        for value in list(caller.f_locals.values()):
            if isinstance(value, np.ndarray) and value is not x:
                try:
                    value[...] = x
                except ValueError:
                    pass

    def probe(with_seal):
        x = np.zeros(3)
        before = sealed(x) if with_seal else x.copy()
        student(x)
        return bool(np.array_equal(x, before))

    assert probe(with_seal=False)  # a plain copy is rewritten: the change is hidden
    assert not probe(with_seal=True)


def test_objects_are_copied_as_they_are():
    a = np.array([{"k": 1}, None], dtype=object)
    s = sealed(a)
    assert s is not a and s[0] is a[0]
