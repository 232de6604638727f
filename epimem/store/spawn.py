"""Starting a detached helper process (`python -m ...`) that outlives its parent."""

from __future__ import annotations

import os
import sys


def spawn_detached(log_path: str | os.PathLike, args: list[str]) -> None:
    """Start `python ARGS` detached, its stdin/stdout on /dev/null and stderr appended to `log_path`.

    The child must not inherit the parent's stdout: Claude Code, for one, waits
    for a hook's stdout to close. `setsid` keeps it alive after the parent exits.
    """
    argv = [sys.executable, *args]
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        logfd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError:
        logfd = devnull
    try:
        try:
            os.posix_spawn(sys.executable, argv, dict(os.environ), setsid=True, file_actions=[
                (os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, devnull, 1),
                (os.POSIX_SPAWN_DUP2, logfd, 2)])
        except (AttributeError, NotImplementedError, TypeError):
            import subprocess  # platforms without posix_spawn(setsid=...)

            subprocess.Popen(argv, stdin=devnull, stdout=devnull, stderr=logfd,
                             start_new_session=True, close_fds=True)
    finally:
        if logfd != devnull:
            os.close(logfd)
        os.close(devnull)
