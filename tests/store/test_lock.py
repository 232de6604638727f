"""The vault lock: exclusive across processes, waits without polling, gives up plainly, and
reports its wait and hold times when asked."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest

from epimem.store.files import LockTimeout, VaultLock


def _holder(path, seconds: float) -> subprocess.Popen:
    code = ("import sys, time; from epimem.store.files import VaultLock; l = VaultLock(sys.argv[1]); "
            "l.acquire(); print('held', flush=True); time.sleep(float(sys.argv[2]))")
    p = subprocess.Popen([sys.executable, "-c", code, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def test_a_waiter_gets_the_lock_the_moment_the_holder_lets_go(tmp_path):
    path = tmp_path / ".epimem" / "lock"
    p = _holder(path, 0.5)
    t = time.monotonic()
    with VaultLock(path, timeout=10):
        waited = time.monotonic() - t
    p.wait()
    assert 0.2 < waited < 3


@pytest.mark.parametrize("in_thread", [False, True])
def test_a_lock_held_too_long_is_a_busy_error_in_time(tmp_path, in_thread):
    path = tmp_path / ".epimem" / "lock"
    p = _holder(path, 5)
    out: dict = {}

    def attempt():
        t = time.monotonic()
        try:
            with VaultLock(path, timeout=0.5):
                out["got"] = True
        except LockTimeout as e:
            out["error"], out["after"] = e, time.monotonic() - t

    try:
        if in_thread:  # a server's worker thread cannot take SIGALRM: it polls
            th = threading.Thread(target=attempt)
            th.start()
            th.join()
        else:
            attempt()
    finally:
        p.kill()
        p.wait()
    assert "got" not in out and out["error"].exit_code == 75
    assert 0.4 < out["after"] < 3
    # The alarm is put away: nothing fires later in this process.
    time.sleep(0.7)


def test_wait_and_hold_times_are_recorded_when_asked(tmp_path, monkeypatch):
    stats = tmp_path / "stats.jsonl"
    monkeypatch.setenv("EPIMEM_LOCK_STATS", str(stats))
    lock = VaultLock(tmp_path / ".epimem" / "lock")
    with lock:
        with lock:  # reentrant: one hold, not two
            time.sleep(0.05)
    rows = [json.loads(x) for x in stats.read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["hold"] >= 0.05 and rows[0]["wait"] >= 0


@pytest.mark.parametrize("value", ["1", "true", "yes"])
def test_a_lock_stats_switch_that_is_not_a_path_is_refused_and_writes_nothing(tmp_path, monkeypatch, capsys, value):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EPIMEM_LOCK_STATS", value)
    with VaultLock(tmp_path / ".epimem" / "lock"):
        pass
    assert not (tmp_path / value).exists()
    assert f"EPIMEM_LOCK_STATS='{value}' is not a path" in capsys.readouterr().err


def test_a_zero_timeout_answers_busy_at_once(tmp_path):
    path = tmp_path / ".epimem" / "lock"
    p = _holder(path, 5)
    try:
        t = time.monotonic()
        with pytest.raises(LockTimeout):
            VaultLock(path, timeout=0).acquire()
        assert time.monotonic() - t < 1
    finally:
        p.kill()
        p.wait()
