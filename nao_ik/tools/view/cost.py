"""``nao-ik view-cost``: what the view costs the simulated robot's process, measured.

Three runs of ``nao-ik sim`` as a separate process, the same work in each:
a client (this process, which also serves NaoArmIK) reaches alternately two
targets per arm every ``--reach-every`` seconds, so the arms move most of
the time. The runs: without the view; with ``--view`` and no browser; with
``--view`` and one headless Chromium showing the page. For each, the sim
process's CPU time (user + system, ``/proc/PID/stat``) over ``--seconds``,
and the median ``reachTo`` round trip. The runs take turns for ``--rounds``
rounds, so a slow spell of a shared machine falls on all of them alike.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from typing import NamedTuple, Sequence

SCENARIOS = ("no view", "view, no browser", "view, one browser")
TARGETS = ((0.15, 0.12, 0.08), (0.10, 0.20, 0.12), (0.15, -0.12, 0.08), (0.10, -0.20, 0.12))


class Run(NamedTuple):
    """One measured run."""

    scenario: str
    seconds: float
    sim_cpu: float  # s of CPU time of the sim process over the window
    browser_cpu: float  # s of CPU time of the browser's processes (0 without one)
    reach_ms: float  # median reachTo round trip
    reaches: int


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux ``/proc``)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def group_cpu_seconds(pgid: int) -> float:
    """CPU time of every live process of a process group (the browser and its helpers)."""
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _line(proc: subprocess.Popen, prefix: str, timeout: float = 30.0) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if line.startswith(prefix):
            return line[len(prefix) :].strip()
        if not line and proc.poll() is not None:
            break
    raise RuntimeError(f"nao-ik sim did not print {prefix!r}")


def measure(scenario: str, seconds: float, reach_every: float) -> Run:
    """One run of ``scenario`` (one of :data:`SCENARIOS`)."""
    import qi

    from ...service import register
    from ...service.client import Session

    view = scenario != "no view"
    cmd = [sys.executable, "-m", "nao_ik.cli", "sim", "--listen", "tcp://127.0.0.1:0"]
    if view:
        cmd += ["--view", "--view-port", "0"]
    sim = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    browser = None
    server, user = qi.Session(), None
    try:
        url = _line(sim, "simulated robot listening at ")
        page = _line(sim, "view: ").split()[0] if view else None
        server.connect(url)
        server.listen("tcp://127.0.0.1:0")
        register(server)
        user = Session(url)
        ik = user.service("NaoArmIK")
        user.service("ALMotion").wakeUp()
        if scenario == "view, one browser":
            from .browser import Browser

            browser = Browser()
            browser.open(page)
            browser.wait_for_text("LArm hand")
        time.sleep(2.0)  # let start-up and page load settle
        cpu0, b0, t0 = cpu_seconds(sim.pid), _browser_cpu(browser), time.monotonic()
        times, k = [], 0
        while time.monotonic() - t0 < seconds:
            c = time.perf_counter()
            ik.reachTo(*TARGETS[k % len(TARGETS)], "dls")
            times.append((time.perf_counter() - c) * 1e3)
            k += 1
            time.sleep(max(0.0, min(reach_every, seconds - (time.monotonic() - t0))))
        elapsed = time.monotonic() - t0
        cpu = cpu_seconds(sim.pid) - cpu0
        bcpu = _browser_cpu(browser) - b0
        return Run(scenario, elapsed, cpu, bcpu, statistics.median(times), len(times))
    finally:
        if browser is not None:
            browser.close()
        for s in (user, server):
            if s is not None:
                s.close()
        sim.terminate()
        sim.wait(timeout=20)


def _browser_cpu(browser) -> float:
    return 0.0 if browser is None else group_cpu_seconds(browser.process.pid)


def format_table(runs: Sequence[Run]) -> str:
    """The markdown table: per scenario, CPU of the sim process (and the browser), reachTo round trip."""
    base = [r for r in runs if r.scenario == "no view"]
    base_pct = statistics.mean(100 * r.sim_cpu / r.seconds for r in base) if base else None
    lines = [
        "| scenario | window (s) | sim CPU (s) | sim CPU (% of one core) | added by the view (points of one core) "
        "| browser CPU (% of one core) | reachTo median (ms) | reaches |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        pct = 100 * r.sim_cpu / r.seconds
        added = "" if base_pct is None or r.scenario == "no view" else f"{pct - base_pct:+.2f}"
        browser = f"{100 * r.browser_cpu / r.seconds:.1f}" if r.browser_cpu else ""
        lines.append(
            f"| {r.scenario} | {r.seconds:.1f} | {r.sim_cpu:.2f} | {pct:.2f} | {added} | {browser} | "
            f"{r.reach_ms:.2f} | {r.reaches} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    """``nao-ik view-cost``."""
    p = argparse.ArgumentParser(
        prog="nao-ik view-cost",
        description="Measure the CPU the view costs the simulated robot's process: nao-ik sim without the view, "
        "with it and no browser, with it and one headless Chromium; the same reaches in each (markdown table).",
        epilog="example: nao-ik view-cost --seconds 30",
    )
    p.add_argument("--seconds", type=float, default=30.0, help="measured window per run (default 30)")
    p.add_argument("--reach-every", type=float, default=1.0, help="seconds between reaches (default 1)")
    p.add_argument("--rounds", type=int, default=1, help="rounds of the three runs, taking turns (default 1)")
    p.add_argument("--out", metavar="FILE", help="also write the table, with how it was made, to FILE (markdown)")
    a = p.parse_args(argv)
    if a.seconds <= 0 or a.reach_every <= 0 or a.rounds < 1:
        p.error("--seconds and --reach-every must be > 0, --rounds >= 1")
    runs = []
    for r in range(a.rounds):
        for scenario in SCENARIOS:
            run = measure(scenario, a.seconds, a.reach_every)
            print(f"round {r + 1}: {scenario}: sim CPU {run.sim_cpu:.2f} s over {run.seconds:.1f} s", flush=True)
            runs.append(run)
    table = format_table(runs)
    print()
    print(table)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as fh:
            fh.write(report(table, a.seconds, a.reach_every, a.rounds))
        print(f"written: {a.out}")
    return 0


def report(table: str, seconds: float, reach_every: float, rounds: int) -> str:
    """The markdown page: what was measured and how, then the table."""
    import platform

    return (
        "# What the live view costs the simulated robot\n\n"
        f"`nao-ik view-cost --seconds {seconds:g} --reach-every {reach_every:g} --rounds {rounds}` "
        f"(`make view-cost`) on {platform.machine()} with {os.cpu_count()} cores, shared with other work.\n\n"
        "Each run starts `nao-ik sim` as its own process; this process registers NaoArmIK on it and reaches "
        f"two targets per arm in turn (`dls`, one reach every {reach_every:g} s, speed 0.2), so the arms move "
        "most of the time. *sim CPU* is the sim process's user + system time over the window "
        "(`/proc/PID/stat`), which holds the stub ALMotion and, with `--view`, the view; *added* is its "
        "share of one core minus the mean share without the view. The browser is headless Chromium with "
        "software WebGL; its CPU is its own processes'.\n\n" + table + "\n"
    )
