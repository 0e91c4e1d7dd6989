"""A warm fork server for workers.

Importing torch, jax, flax and optax costs ~4 s per process on CPU. The
zygote imports them once (single-threaded: BLAS pinned to one thread, no
backend initialised, no CUDA context), then forks one worker per request.
Each child initialises its own backend after the fork, so nothing
fork-unsafe is shared. Requests arrive over a SOCK_SEQPACKET socket with the
worker's two pipe ends attached (SCM_RIGHTS); exits are reported back.
"""

from __future__ import annotations

import importlib
import json
import os
import select
import signal
import socket
import sys

PRELOAD = ("numpy", "torch", "jax", "jax.numpy", "flax.linen", "optax")


def _preload(extra: list[str]) -> None:
    for name in (*PRELOAD, *extra):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a missing optional framework is fine
            pass


def _warm_torch() -> None:
    """Pays once what the first optimizer/backward costs in every worker (~800 modules).

    Stays fork-safe: CPU only, one thread, no CUDA context (checked by a test).
    """
    try:
        import torch
        import torch.func  # noqa: F401

        torch.set_num_threads(1)
        layer = torch.nn.Linear(2, 2)
        opt = torch.optim.Adam(layer.parameters(), lr=0.1)
        layer(torch.zeros(1, 2)).sum().backward()
        opt.step()
    except Exception:  # noqa: BLE001 - warming is an optimisation only
        pass


def serve(sock: socket.socket) -> None:
    """Serves fork requests until the grader closes its end."""
    from autograder._worker import worker_main

    children: set[int] = set()
    while True:
        ready = select.select([sock], [], [], 0.05)[0]
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            children.discard(pid)
            sock.send(json.dumps({"event": "exit", "pid": pid, "status": status}).encode())
        if not ready:
            continue
        try:
            msg, fds, _flags, _addr = socket.recv_fds(sock, 1 << 20, 2)
        except OSError:
            msg, fds = b"", []
        if not msg:
            for pid in children:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
            return
        req = json.loads(msg)
        pid = os.fork()
        if pid == 0:  # the worker
            try:
                sock.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                os.setsid()
                worker_main(fds[0], fds[1], req["spec"])
            finally:
                os._exit(0)
        children.add(pid)
        for fd in fds:
            os.close(fd)
        sock.send(json.dumps({"event": "spawned", "id": req["id"], "pid": pid}).encode())


def main() -> None:
    """Entry point: ``python -m autograder._zygote SOCKFD [MODULE...]``."""
    sock = socket.socket(fileno=int(sys.argv[1]))
    _preload(sys.argv[2:])
    _warm_torch()
    sock.send(json.dumps({"event": "ready"}).encode())
    serve(sock)


if __name__ == "__main__":
    main()
