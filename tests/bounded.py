"""A call that must answer in time: the fuzz suites' guard against a hang (SIGALRM, main thread)."""

from __future__ import annotations

import signal


class Hang(Exception):
    pass


def bounded(fn, seconds: int = 10):
    def on_alarm(*_):
        raise Hang(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        return fn()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
