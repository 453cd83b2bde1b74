"""``nao-ik loadtest``: several client processes calling ``reachTo`` at once, against a simulated robot.

It starts ``nao-ik sim`` and ``nao-ik serve`` as their own processes (so the
service's memory can be read from /proc), wakes the robot, runs the clients
for a fixed time, then checks what the stub ALMotion received: every
``setAngles`` must be exactly one answer that a client got back (nothing
lost, nothing interleaved), and none may be out of limits or non-finite.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from typing import Any, NamedTuple, Sequence

import numpy as np

from ..model.arm import ARMS
from ..service.client import Session
from ..service.supervisor import process_tree
from .latency import format_costs, measure
from .protocol import sample_targets

METHODS = ("dls", "fabrik", "jacobian-pinv", "sdls")
#: A safety answer: "<what>: motion: ..." or "collision: ...", nothing sent.
SAFETY = re.compile(r": (motion|collision): .*nothing (more )?sent")


class LoadReport(NamedTuple):
    """What a load run measured."""

    clients: int
    seconds: float
    calls: int
    failures: int
    failure_examples: list
    calls_per_s: float
    p50_ms: float
    p99_ms: float
    max_ms: float
    commands: int
    unmatched: int
    violations: int
    rss_start_mb: float
    rss_warm_mb: float
    rss_end_mb: float
    latency_ms: float = 0.0
    costs: list = []  # a NamedTuple default, never mutated
    #: Of the failures, the safety answers: nothing sent because the motion (from where the arm may be, while
    #: other clients keep sending it elsewhere) could meet the body, or the call waiting for that was preempted.
    refused: int = 0


def quiet() -> None:
    """libqi's log at errors only, without its notice that no qi.Application was created."""
    import qi

    qi.logging.setLevel(qi.logging.ERROR)
    qi.logging.setFilters("qi.path.sdklayout=silent")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rss_mb(pid: int) -> float:
    """The resident memory of ``pid`` and its children (``nao-ik serve``: the supervisor and its worker), MB."""
    total = 0.0
    for p in process_tree(pid):
        with open(f"/proc/{p}/status", encoding="ascii") as fh:
            total += next((int(line.split()[1]) / 1024.0 for line in fh if line.startswith("VmRSS:")), 0.0)
    return total


NAO_IK = (sys.executable, "-m", "nao_ik.cli")


def start(args: list[str], ready: str, command: Sequence[str] = NAO_IK, lines: list | None = None) -> subprocess.Popen:
    """Start ``command + args`` and wait for ``ready`` on its stdout; then keep reading its stdout. With ``lines``,
    its stderr's lines go there (else nowhere).

    libqi logs to stdout: a pipe nobody reads fills up (64 kB) and the
    process freezes at its next log line, so a thread drains it for as long
    as the process runs.
    """
    stderr = subprocess.DEVNULL if lines is None else subprocess.PIPE
    proc = subprocess.Popen([*command, *args], stdout=subprocess.PIPE, stderr=stderr, text=True)
    if lines is not None:
        threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True).start()
    end = time.monotonic() + 30
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if ready in line:
            threading.Thread(target=_drain, args=(proc.stdout,), daemon=True).start()
            return proc
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError(f"{args[0]} did not start{': ' + ''.join((lines or [])[-5:]) if lines else ''}")


def _drain(stream: Any) -> None:
    for _ in stream:
        pass


def _targets(n: int, seed: int) -> list[tuple[float, float, float]]:
    """n reachable targets per arm (the benchmark's kind), shuffled."""
    out = [tuple(t) for k, arm in enumerate(ARMS) for t in sample_targets(arm, n, seed + 7919 * k).tolist()]
    np.random.default_rng(seed).shuffle(out)
    return out


def _client(url: str, seconds: float, seed: int, queue: mp.Queue) -> None:
    quiet()
    session = Session(url)
    ik = session.service("NaoArmIK")
    targets = _targets(200, seed)
    latencies, answers, failures = [], [], []
    end = time.monotonic() + seconds
    k = 0
    while time.monotonic() < end:
        target = targets[k % len(targets)]
        method = METHODS[k % len(METHODS)]
        k += 1
        t0 = time.perf_counter()
        try:
            r = ik.reachTo(*target, method)
        except Exception as e:  # every failure is reported
            failures.append(str(e).strip().splitlines()[0])
            continue
        latencies.append((time.perf_counter() - t0) * 1e3)
        names = tuple(r["names"])
        # Where the direct motion would cross the body the arm is first swung out (the answer's "via"); a later
        # call on the arm may end that sequence before its last command (then fewer commands than via + 1).
        answers.extend((names, tuple(v)) for v in r.get("via", []))
        if r.get("commands", 1) == len(r.get("via", [])) + 1:
            answers.append((names, tuple(r["angles"])))
    session.close()
    queue.put((latencies, answers, failures))


def run_load(
    clients: int = 4, seconds: float = 10.0, seed: int = 0, latency_ms: float = 0.0, rounds: int = 0
) -> LoadReport:
    """Run the load test and return its figures.

    Args:
        clients: client processes calling at once.
        seconds: how long they call.
        seed: their targets' seed.
        latency_ms: the simulated robot's latency (``nao-ik sim --latency-ms``).
        rounds: if > 0, first measure the cost of single calls (:func:`nao_ik.evidence.latency.measure`) over so
            many rounds.
    """
    url = f"tcp://127.0.0.1:{free_port()}"
    sim = start(["sim", "--listen", url, "--latency-ms", f"{latency_ms:g}"], "listening")
    serve = None
    try:
        serve = start(["serve", "--qi-url", url], "registered")
        quiet()
        session = Session(url)
        motion = session.service("ALMotion")
        motion.wakeUp()
        costs = measure(session.service("NaoArmIK"), motion, rounds) if rounds > 0 else []
        motion.clearRecordedCommands()
        rss_start = _rss_mb(serve.pid)
        ctx = mp.get_context("spawn")
        queue = ctx.Queue()
        procs = [ctx.Process(target=_client, args=(url, seconds, seed + i, queue)) for i in range(clients)]
        t0 = time.monotonic()
        for p in procs:
            p.start()
        # Warm at half time: by then the service has loaded what it loads once (planners, caches, one malloc
        # arena per qi thread that served a call), so growth in the second half is what the calls keep taking.
        time.sleep(seconds / 2)
        rss_warm = _rss_mb(serve.pid)
        results = [queue.get(timeout=seconds + 60) for _ in procs]
        elapsed = time.monotonic() - t0
        for p in procs:
            p.join(timeout=10)
        rss_end = _rss_mb(serve.pid)
        commands = [c for c in motion.getRecordedCommands() if c["method"] == "setAngles"]
        violations = len(motion.getViolations())
        session.close()
    finally:
        for proc in (serve, sim):
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=10)
    latencies = np.array([x for r in results for x in r[0]])
    answers = Counter(a for r in results for a in r[1])
    failures = [f for r in results for f in r[2]]
    refused = sum(1 for f in failures if SAFETY.search(f))
    sent = Counter((tuple(c["names"]), tuple(c["angles"])) for c in commands)
    unmatched = sum((sent - answers).values()) + sum((answers - sent).values())
    calls = len(latencies) + len(failures)
    return LoadReport(
        clients,
        seconds,
        calls,
        len(failures),
        # The failures that are not safety refusals first: those fail the run.
        sorted(failures, key=lambda f: bool(SAFETY.search(f)))[:3],
        calls / elapsed,
        float(np.percentile(latencies, 50)) if latencies.size else float("nan"),
        float(np.percentile(latencies, 99)) if latencies.size else float("nan"),
        float(latencies.max()) if latencies.size else float("nan"),
        len(commands),
        unmatched,
        violations,
        rss_start,
        rss_warm,
        rss_end,
        latency_ms,
        costs,
        refused,
    )


def format_report(r: LoadReport) -> str:
    """A markdown table of one run (after the single calls' costs, if they were measured)."""
    costs = [format_costs(r.costs, r.latency_ms), ""] if r.costs else []
    return "\n".join(
        costs
        + [
            "| clients | seconds | calls | failures (of them safety refusals) | calls/s | p50 (ms) | p99 (ms) "
            "| max (ms) | setAngles recorded | unmatched | violations | service RSS start / warm / end (MB) |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
            f"| {r.clients} | {r.seconds:g} | {r.calls} | {r.failures} ({r.refused}) | {r.calls_per_s:.0f} | "
            f"{r.p50_ms:.2f} | {r.p99_ms:.2f} | {r.max_ms:.2f} | {r.commands} | {r.unmatched} | {r.violations} | "
            f"{r.rss_start_mb:.1f} / {r.rss_warm_mb:.1f} / {r.rss_end_mb:.1f} |",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    p = argparse.ArgumentParser(
        prog="nao-ik loadtest",
        description="Several client processes call NaoArmIK.reachTo at once against a simulated robot; "
        "checks every command the robot received and prints latency, throughput and memory.",
        epilog="example: nao-ik loadtest --clients 4 --seconds 30",
    )
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--latency-ms", type=float, default=0.0, help="the simulated robot's latency (default 0)")
    p.add_argument(
        "--rounds", type=int, default=300, help="rounds of single calls timed first, one client (default 300; 0: none)"
    )
    p.add_argument(
        "--body-rounds", type=int, default=0,
        help="first time reachTo with the service's body and motion checks and without, so many rounds (default 0)",
    )  # fmt: skip
    p.add_argument(
        "--read-reach", type=int, default=0, metavar="N",
        help="only time N reaches of a program that reads its arm and then reaches a random reachable target, "
             "at --latency-ms (default 0: not)",
    )  # fmt: skip
    a = p.parse_args(argv)
    if a.read_reach:
        from .latency import print_read_then_reach

        if not 1 <= a.read_reach <= 100000 or not 0 <= a.latency_ms <= 10000:
            p.error("--read-reach must be in [1, 100000] and --latency-ms in [0, 10000]")
        print_read_then_reach(a.read_reach, a.latency_ms / 1e3, a.seed)
        return 0
    if not 0 <= a.body_rounds <= 100000:
        p.error("--body-rounds must be in [0, 100000]")
    if a.body_rounds:
        from .latency import print_body_cost

        print_body_cost(a.body_rounds)
    if not 1 <= a.clients <= 64 or not 0 < a.seconds <= 3600:
        p.error("--clients must be in 1..64 and --seconds in (0, 3600]")
    if not 0 <= a.latency_ms <= 10000 or not 0 <= a.rounds <= 100000:
        p.error("--latency-ms must be in [0, 10000] and --rounds in [0, 100000]")
    report = run_load(a.clients, a.seconds, a.seed, a.latency_ms, a.rounds)
    print(format_report(report))
    if report.failure_examples:
        print("failures, first ones:", *report.failure_examples, sep="\n  ")
    # Safety refusals (a motion or collision refused, nothing sent) are the service's answers to clients that
    # race for the same arms; any other failure, a command no answer names, or a bad command is not.
    ok = report.failures == report.refused and report.unmatched == 0 and report.violations == 0
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
