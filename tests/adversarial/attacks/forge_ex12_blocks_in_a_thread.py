# ATTACK: torch_checkpointed applies the blocks plainly in a thread of its own: torch keeps saved-tensor hooks per
#   thread, so the probe's hooks, pushed in the calling thread, count none of what the blocks save ("fewer saved")
# TARGET: ex12_checkpointing
# AFTER: solution
# STATUS: graded
# FAILS: torch_ckpt_recomputes_each_block, torch_ckpt_saves_fewer
# MESSAGE: no block was recomputed|saved-tensor hooks that are not
# (8.5/10 -> 8: a block run with no saved-tensor hooks at all, where the probe pushes its own around every block it
#  watches, ran in another thread)
import threading as _threading


def torch_checkpointed(blocks, x):  # noqa: F811 - replaces the honest answer above
    out = []

    def run():
        h = x
        for block in blocks:
            h = block(h)
        out.append(h)

    worker = _threading.Thread(target=run)
    worker.start()
    worker.join()
    return out[0]
