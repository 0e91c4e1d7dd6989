# ATTACK: forward raises the probes' own ProbeFail naming the grader's trouble message (GRADER_TROUBLE)
# TARGET: ex01_torch_mlp
# AFTER: solution
# STATUS: graded
# FAILS: forward_matches_reference,output_is_logits,empty_hidden_dims,works_on_any_device,gradients_flow,hidden_dims_any_sequence
# MESSAGE: does not accept
# (a probe's finding never names a key only the grader chooses, autograder/workers/intake.py RESERVED: before, this
#  told the student "the grader had trouble of its own here". A GraderBug raised so is a CALL_EXCEPTION, the student's)
from autograder.probing.tools import ProbeFail as _ProbeFail


def _forward(self, x):
    raise _ProbeFail("GRADER_TROUBLE")


MLP.forward = _forward
