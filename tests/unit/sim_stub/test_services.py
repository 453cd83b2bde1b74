"""sim_stub.services: the simulated ServiceManager starts a package's autorun services and restarts one that crashes,
as NAOqi's does (not one that keeps crashing, nor one stopped or ending well)."""

import sys
import time

from sim_stub.services import CRASHES, StubServiceManager

MANIFEST = """<?xml version="1.0" encoding="UTF-8" ?>
<package uuid="pkg" version="1.0">
    <services>
        <service name="svc" execStart="/usr/bin/python2 svc.py" autorun="true" />
    </services>
</package>
"""
#: The service: counts its starts in a file, then exits with the status written in another (none: runs on).
SERVICE = """import os, sys, time
open("starts", "a").write("x")
if os.path.exists("status"):
    sys.exit(int(open("status").read()))
time.sleep(60)
"""


def _starts(folder) -> int:
    path = folder / "starts"
    return len(path.read_text()) if path.exists() else 0


def _until(check, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end
        time.sleep(0.05)


def _installed(tmp_path, status: str | None):
    (tmp_path / "manifest.xml").write_text(MANIFEST)
    (tmp_path / "svc.py").write_text(SERVICE)
    if status is not None:
        (tmp_path / "status").write_text(status)
    manager = StubServiceManager("tcp://127.0.0.1:1", python2=sys.executable)
    manager.installed("pkg", str(tmp_path))
    return manager


def test_a_crashed_autorun_service_is_started_again_until_it_keeps_crashing(tmp_path):
    manager = _installed(tmp_path, "1")  # exits 1 at once, each time
    try:
        _until(lambda: _starts(tmp_path) == CRASHES + 1)
        time.sleep(1.0)
        assert _starts(tmp_path) == CRASHES + 1 and not manager.isServiceRunning("pkg.svc")
    finally:
        manager.close()


def test_a_killed_service_is_started_again_and_a_stopped_or_finished_one_is_not(tmp_path):
    manager = _installed(tmp_path, None)  # runs on
    try:
        _until(lambda: manager.isServiceRunning("pkg.svc") and _starts(tmp_path) == 1)
        first = manager.process("pkg.svc")
        first.kill()
        _until(lambda: manager.process("pkg.svc") is not first and _starts(tmp_path) == 2)
        assert manager.stop("pkg.svc")
        (tmp_path / "status").write_text("0")
        assert manager.start("pkg.svc")  # ends well at once
        _until(lambda: _starts(tmp_path) == 3 and not manager.isServiceRunning("pkg.svc"))
        time.sleep(1.0)  # and is not started again
        assert _starts(tmp_path) == 3 and not manager.isServiceRunning("pkg.svc")
    finally:
        manager.close()
