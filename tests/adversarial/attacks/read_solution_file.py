# ATTACK: reads the reference solution file next to the engine and execs it
# TARGET: ex01_torch_mlp
# STATUS: error
# FAILS: all
# MESSAGE: raised
import pathlib
import autograder
_src = (pathlib.Path(autograder.__file__).parent.parent / "solutions" / "ex01_torch_mlp.py").read_text()
exec(compile(_src, "ref", "exec"))
