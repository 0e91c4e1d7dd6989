# tapetrace: a student's worker may drop to an unprivileged user, who must be able to read the
# Python installed under /root (enter only: /root stays unlistable)
chmod o+x /root || true
