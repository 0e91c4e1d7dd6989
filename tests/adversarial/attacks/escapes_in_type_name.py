# ATTACK: forward raises an exception whose type name is ~8 MB of terminal escapes, carriage returns and otter-style lines
# TARGET: ex01_torch_mlp
# AFTER: solution
# STATUS: graded
# FAILS: forward_matches_reference,output_is_logits,empty_hidden_dims,works_on_any_device,gradients_flow, hidden_dims_any_sequence
# MESSAGE: \x1b]52
# (OSC 52 writes the clipboard, ESC[2J clears the screen, \r rewrites a table line; every message must be one clean line)
_NAME = ("\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07\x1b[2J\rex01_torch_mlp  10  10  graded\n"
         "    forged result:\n        \u2705 Test case passed\n" * 60_000)
_Evil = type(_NAME, (Exception,), {})
_honest_forward = MLP.forward


def _forward(self, x):
    raise _Evil("\x1b[31mred\r\n=HYPERLINK(\"http://x\")")


MLP.forward = _forward
