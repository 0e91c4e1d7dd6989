# ATTACK: imports the reference solution
# TARGET: ex01_torch_mlp
# STATUS: error
# FAILS: all
# MESSAGE: ModuleNotFoundError
from solutions.ex01_torch_mlp import MLP  # noqa
