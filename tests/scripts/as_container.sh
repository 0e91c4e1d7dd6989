#!/bin/sh
# Runs a command as in a container with Docker's default privileges: root without CAP_SYS_ADMIN or CAP_SYS_PTRACE.
# With --open-root (root only), first, in a private mount namespace, lets other users enter /root
# (an overlay, so the real /root is untouched): Python installed under /root becomes usable by the
# unprivileged uid a student's worker drops to, as setup.sh arranges in the otter grading image.
set -eu
if [ "${1:-}" = "--open-root" ]; then
    shift
    work=$(mktemp -d)
    mkdir "$work/up" "$work/work"
    exec unshare -m --propagation private sh -c '
        mount -t overlay overlay -o "lowerdir=/root,upperdir=$0/up,workdir=$0/work" /root &&
        chmod o+x /root &&
        exec setpriv --bounding-set=-sys_admin,-sys_ptrace --inh-caps=-sys_admin,-sys_ptrace -- "$@"' "$work" "$@"
fi
exec setpriv --bounding-set=-sys_admin,-sys_ptrace --inh-caps=-sys_admin,-sys_ptrace -- "$@"
