"""tapetrace: autograded PyTorch-vs-JAX exercises ("the tape vs the trace").

Public surface, re-exported explicitly; internals live in ``_``-modules.
"""

from autograder._compare import first_difference as first_difference
from autograder._engine import GradingRun as GradingRun
from autograder._loader import load as load_submission
from autograder._paths import EXERCISES as EXERCISES
from autograder._suite import Ctx as Ctx
from autograder._suite import Fail as Fail
from autograder._suite import Suite as Suite
from autograder._tolerances import tolerance as tolerance

__version__ = "0.1.0"

__all__ = ["EXERCISES", "Ctx", "Fail", "GradingRun", "Suite", "first_difference", "load_submission", "tolerance"]
