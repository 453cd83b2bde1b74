"""A poison caller against ``nao-ik serve``: how often a normal client is still answered, and each crash's downtime.

It starts ``nao-ik sim`` and ``nao-ik serve`` (supervised, as users run it) on a free port. The poison
caller, a process of its own, sends ``reachTo`` a target nested :data:`DEPTH` lists deep every time
``NaoArmIK`` is registered anew (the service directory's ``serviceRegistered`` signal): libqi's deserialiser
overflows the worker's stack on it and the worker dies of SIGSEGV (:mod:`nao_ik.evidence.nested_crash`). A
normal client, another process, calls ``computeAngles`` every :data:`PERIOD` s (a call gets at most
:data:`CALL_TIMEOUT` s; after a failure it asks the service directory for ``NaoArmIK`` again) and counts its
answers. A crash's downtime is what a caller on the robot sees: from ``NaoArmIK`` leaving the service
directory (the worker's connection closes when it dies) to its next registration.

``python -m nao_ik.evidence.poison --seconds 60`` prints one table row.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import threading
import time
from typing import Any, NamedTuple, Sequence

from ..service.supervisor import process_tree
from .loadtest import free_port, quiet, start

SERVICE = "NaoArmIK"
#: How deep the poison's target is nested: over the 3,350 levels an 8 MB stack survives, and small (a
#: message of about 100 kB, under ``nao-ik serve``'s cap).
DEPTH = 10000
#: The normal client's call interval and how long one call may take (s).
PERIOD, CALL_TIMEOUT = 0.05, 1.0


class PoisonReport(NamedTuple):
    """What one run measured."""

    seconds: float
    calls: int
    answered: int
    sent: int  # poison calls sent
    crashes: int  # worker deaths the supervisor reported
    downtimes: list  # seconds, per crash, in order
    cpu: float  # ``nao-ik serve``'s CPU over the run, a share of one core: the supervisor and every worker

    @property
    def answered_share(self) -> float:
        return self.answered / self.calls if self.calls else float("nan")


def nested(depth: int, leaf: float = 0.1) -> Any:
    """``leaf`` inside ``depth`` lists."""
    value: Any = leaf
    for _ in range(depth):
        value = [value]
    return value


def downtimes(left: Sequence[float], back: Sequence[float]) -> list[float]:
    """Each time the service left the directory (``left``), the wait until its next registration (``back``)."""
    out = []
    for t in sorted(left):
        after = [b for b in back if b >= t]
        if after:
            out.append(min(after) - t)
    return out


def cpu_s(pid: int) -> float:
    """CPU seconds of ``pid`` and its descendants, alive or ended (an ended one's are its parent's once the parent
    waited for it: cutime and cstime; Linux /proc)."""
    total = 0.0
    for p in process_tree(pid):
        try:
            with open(f"/proc/{p}/stat", encoding="ascii") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        total += sum(int(t) for t in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # utime stime cutime cstime
    return total


def _poison(url: str, depth: int, seconds: float, queue: mp.Queue) -> None:
    """The poison caller: re-sends the nested target whenever NaoArmIK appears; puts the number sent."""
    quiet()
    import qi

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 8 * depth))
    threading.stack_size(256 << 20)  # the caller's own conversion of the value recurses
    appeared = threading.Event()
    appeared.set()  # it may be registered already
    session = qi.Session()
    session.connect(url)
    session.serviceRegistered.connect(lambda _sid, name: appeared.set() if name == SERVICE else None)
    value, sent = nested(depth), [0]

    def send() -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if not appeared.wait(0.1):
                continue
            appeared.clear()
            try:
                session.service(SERVICE).reachTo(value, 0.1, 0.1, "")
            except RuntimeError:
                pass  # the connection died with the worker (or NaoArmIK was not there)
            sent[0] += 1

    sender = threading.Thread(target=send)
    sender.start()
    sender.join()
    queue.put(sent[0])
    session.close()


def _normal(url: str, seconds: float, queue: mp.Queue) -> None:
    """The normal client: computeAngles every PERIOD s; puts (calls, answered)."""
    quiet()
    import qi

    session = qi.Session()
    session.connect(url)
    ik, calls, answered = None, 0, 0
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        calls += 1
        try:
            ik = ik or session.service(SERVICE)
            call = ik.computeAngles("LArm", 0.15, 0.12, 0.08, "", _async=True)
            call.wait(int(CALL_TIMEOUT * 1000))
            if call.isFinished() and not call.hasError():
                answered += 1
            else:
                call.cancel()
                ik = None
        except RuntimeError:
            ik = None
        time.sleep(max(0.0, start + calls * PERIOD - time.monotonic()))
    queue.put((calls, answered))
    session.close()


def run(seconds: float = 60.0, depth: int = DEPTH) -> PoisonReport:
    """One run: the simulated robot, ``nao-ik serve``, the poison caller and the normal client for ``seconds``."""
    url = f"tcp://127.0.0.1:{free_port()}"
    errors: list[str] = []
    sim = start(["sim", "--listen", url], "listening", lines=errors)
    serve = None
    try:
        serve = start(["serve", "--qi-url", url], "registered", lines=errors)
        quiet()
        import qi

        watcher = qi.Session()
        watcher.connect(url)
        left: list[float] = []
        back: list[float] = []
        watcher.serviceUnregistered.connect(lambda _s, n: left.append(time.monotonic()) if n == SERVICE else None)
        watcher.serviceRegistered.connect(lambda _s, n: back.append(time.monotonic()) if n == SERVICE else None)
        cpu0, t0 = cpu_s(serve.pid), time.monotonic()
        ctx = mp.get_context("spawn")
        queue: mp.Queue = ctx.Queue()
        procs = [ctx.Process(target=_normal, args=(url, seconds, queue)),
                 ctx.Process(target=_poison, args=(url, depth, seconds, queue))]  # fmt: skip
        for p in procs:
            p.start()
        results = [queue.get(timeout=seconds + 120) for _ in procs]
        for p in procs:
            p.join(timeout=30)
        cpu = (cpu_s(serve.pid) - cpu0) / (time.monotonic() - t0)
        end = time.monotonic() + 30  # the last crash's registration (after a back-off, if any)
        while len(downtimes(left, back)) < len(left) and time.monotonic() < end:
            time.sleep(0.1)
        watcher.close()
    finally:
        for proc in (serve, sim):
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=30)
    (calls, answered), sent = sorted(results, key=lambda r: isinstance(r, int))
    crashes = sum("the service process died" in line for line in errors)
    return PoisonReport(seconds, calls, answered, sent, crashes, downtimes(left, back), cpu)


def format_report(r: PoisonReport) -> str:
    """A markdown table of one run."""
    d = r.downtimes
    per_crash = (f"{d[0]:.2f} / {statistics.median(d):.2f} / {statistics.mean(d):.2f} / {max(d):.2f}"
                 if d else "-")  # fmt: skip
    return "\n".join([
        "| seconds | normal calls (every 50 ms) | answered | poison calls sent | crashes "
        "| downtime per crash: first / median / mean / max (s) | serve's CPU (share of one core) |",
        "|---|---|---|---|---|---|---|",
        f"| {r.seconds:g} | {r.calls} | {r.answered} ({100 * r.answered_share:.1f} %) | {r.sent} | {r.crashes} "
        f"| {per_crash} | {100 * r.cpu:.0f} % |",
    ])  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    p = argparse.ArgumentParser(
        prog="python -m nao_ik.evidence.poison",
        description="A poison caller crashes NaoArmIK (nao-ik serve, against a simulated robot) whenever it is "
        "registered, while a normal client calls computeAngles every 50 ms; prints how many calls were answered "
        "and each crash's downtime.",
    )
    p.add_argument("--seconds", type=float, default=60.0, help="how long the callers run (default 60)")
    p.add_argument("--depth", type=int, default=DEPTH, help=f"the poison target's nesting (default {DEPTH})")
    a = p.parse_args(argv)
    if not 1 <= a.seconds <= 3600 or not 1 <= a.depth <= 100000:
        p.error("--seconds must be in [1, 3600] and --depth in [1, 100000]")
    print(format_report(run(a.seconds, a.depth)))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
