# ATTACK: tries to unmount the tmpfs hiding the solutions, then import them
# TARGET: ex01_torch_mlp
# STATUS: error
# FAILS: all
# MESSAGE: ModuleNotFoundError
import ctypes
import pathlib
import autograder
_root = pathlib.Path(autograder.__file__).parent.parent
ctypes.CDLL(None).umount2(str(_root / "solutions").encode(), 2)
from solutions.ex01_torch_mlp import MLP  # noqa
