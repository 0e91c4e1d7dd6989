# ATTACK: torch_checkpointed applies the blocks plainly (nothing checkpointed, everything kept), under
#   saved-tensor hooks of its own that keep each tensor (the probe's count sees none: "fewer saved"), and
#   puts a hook on each block's output that calls the block again when the backward pass reaches it (the
#   probe's blocks log a run in the backward pass, last block first: "each block recomputed")
# TARGET: ex12_checkpointing
# AFTER: solution
# STATUS: graded
# FAILS: torch_ckpt_recomputes_each_block, torch_ckpt_saves_fewer
# MESSAGE: a block ran again during the backward pass|saved-tensor hooks that are not
# (8/10 -> 10/10 while the blocks' runs and the probe's own hooks decided; each block now also tallies the hooks
#  it runs under and whether torch.utils.checkpoint is below a run in the backward pass)
import torch as _torch


def torch_checkpointed(blocks, x):  # noqa: F811 - replaces the honest answer above
    kept = []

    def pack(t):
        kept.append(t)
        return t

    def unpack(t):
        return t

    h = x
    with _torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        for block in blocks:
            h_in = h.detach()
            h = block(h)
            if h.requires_grad:
                h.register_hook(lambda g, block=block, h_in=h_in: (block(h_in), None)[1])
    return h
