"""`nao-ik serve` in a process of its own, on a simulated robot, and what it costs: its memory and CPU time read from
/proc (the supervisor and its worker together), apart from the test's own."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

from nao_ik.service.supervisor import process_tree


@contextlib.contextmanager
def serving(url: str, *args: str):
    """``nao-ik serve --qi-url url`` running and registered while the block runs: yields its process."""
    serve = subprocess.Popen([sys.executable, "-m", "nao_ik.cli", "serve", "--qi-url", url, *args],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert "registered" in serve.stdout.readline()
        yield serve
    finally:
        serve.terminate()
        serve.communicate(timeout=20)


def _status_mb(pid: int, key: str) -> float:
    total = 0.0
    for p in process_tree(pid):
        with open(f"/proc/{p}/status") as fh:
            total += next(int(line.split()[1]) / 1024 for line in fh if line.startswith(f"{key}:"))
    return total


def rss_mb(pid: int) -> float:
    """Resident memory now, MB."""
    return _status_mb(pid, "VmRSS")


def peak_mb(pid: int) -> float:
    """The most resident memory since :func:`reset_peak` (or since the start), MB."""
    return _status_mb(pid, "VmHWM")


def reset_peak(pid: int) -> None:
    """Start :func:`peak_mb` again from the memory resident now (where Linux lets the caller: else it stays the
    peak since the start, no lower than the peak from now)."""
    for p in process_tree(pid):
        with contextlib.suppress(OSError), open(f"/proc/{p}/clear_refs", "w") as fh:
            fh.write("5")


def cpu_s(pid: int) -> float:
    """CPU time used so far (user and system), s."""
    total = 0.0
    for p in process_tree(pid):
        with open(f"/proc/{p}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total
