"""An image of this machine for `docker run`, for the tests and the benchmark that grade inside Docker containers
(nothing can be pulled here: tests/test_envelope_container.py, tests/test_isolation.py, benchmarks/envelope.py). Its /proc is the container's own: a chroot into a bind of the host's / (the first such images) saw
the host's PIDs, so a worker's PID there named another process (its "children" a shell, dockerd: strays that stopped
an honest exercise as out of time)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def host_image(tmp_path: Path, image: str) -> list[str]:
    """An image of this machine for `docker run` (nothing can be pulled): its top-level links as they are, each
    top-level folder bound read-only at its own path, but /proc, /sys and /dev the container's own (a process
    inside sees its own PIDs), /tmp a tmpfs, and /root an empty tmpfs holding only what this Python lives in
    (entered by others once the container runs ``chmod o+x /root``, as the otter image's setup.sh does).

    Returns:
        The `docker run` arguments that mount it, before the image's name.
    """
    from autograder.sandbox.privileges import _python_dirs

    rootfs = tmp_path / "rootfs"
    rootfs.mkdir()
    mounts = ["--tmpfs", "/tmp:exec", "--tmpfs", "/root"]
    for entry in sorted(Path("/").iterdir()):
        if entry.is_symlink():
            (rootfs / entry.name).symlink_to(os.readlink(entry))
        elif entry.is_dir() and entry.name not in ("proc", "sys", "dev", "tmp", "run", "root", "lost+found"):
            (rootfs / entry.name).mkdir()
            mounts += ["-v", f"{entry}:{entry}:ro"]
    for d in sorted({"/" + "/".join(Path(d).parts[1:3]) for d in _python_dirs() if d.startswith("/root/")}):
        mounts += ["-v", f"{d}:{d}:ro"]
    for top in ("tmp", "root", "proc", "sys", "dev", "run"):
        (rootfs / top).mkdir(exist_ok=True)
    tar = subprocess.run(["tar", "-C", str(rootfs), "-c", "."], capture_output=True, check=True).stdout
    subprocess.run(["docker", "import", "-", image], input=tar, capture_output=True, check=True)
    return mounts
