# ATTACK: kills its parent, its process group and every pid it can see, then loops (it can only kill itself)
# TARGET: ex01_torch_mlp
# STATUS: crashed|timeout
# FAILS: all
# MESSAGE: process died|did not finish
import os
import signal
for _pid in [os.getppid(), *range(2, 4096)]:
    if _pid != os.getpid():
        try:
            os.kill(_pid, signal.SIGKILL)
        except OSError:
            pass
while True:
    pass
