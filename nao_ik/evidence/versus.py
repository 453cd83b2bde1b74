"""This code against another checkout of nao-ik (an earlier version) in the same run: ``nao-ik bench --body
--against DIR``, the body check's cost on ``analytic``'s single solve and on reachTo's round trip (each version
with its own body model and checks); ``nao-ik bench --against DIR``, each method's single solve on the arm's
kinematics alone.

Each code runs in its own process (``PYTHONPATH`` at its checkout), with only the API every version has
(``nao_ik.arm_model``, ``nao_ik.solve`` with a method, ``ArmModel._replace(body=())`` where the model has a body;
for the round trips ``nao_ik.service.register(session, body=...)``). Single solves: the two
take turns, one pass over the targets each, in one order and then the other, as many passes as the caller asks
(:data:`~nao_ik.evidence.body_report.PASSES`, :data:`~nao_ik.evidence.bench.AGAINST_PASSES`); each target's time
is the best of its passes. The check's cost on a target: its time with the body less its time without. Round
trips: each code runs two NaoArmIK services in its own process, one checking the body and one not, on simulated
robots this process runs (one stub for both codes); this process calls the four in turn, as
:func:`nao_ik.evidence.latency.print_body_cost` calls its two.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Callable, Sequence

import numpy as np

#: The worker each code runs: the targets (.npy), the arm and the cases (comma-separated ``key:method:model``, the
#: model ``body`` or ``none``: the arm's kinematics alone, where the version has a body model) as arguments; each
#: case's single solve of each target, the cases in turn; one pass per line read.
WORKER = """
import json, sys, time
import numpy as np
import nao_ik
targets = np.load(sys.argv[1]).tolist()
body = nao_ik.arm_model(sys.argv[2])
models = {"body": body, "none": body._replace(body=()) if hasattr(body, "body") else body}
cases = [c.split(":") for c in sys.argv[3].split(",")]
for x in targets[:20]:
    for _, method, model in cases:
        nao_ik.solve(x, models[model], method)
print("ready", flush=True)
for _ in sys.stdin:
    out = {key: [] for key, _, _ in cases}
    for x in targets:
        for key, method, model in cases:
            t0 = time.perf_counter()
            nao_ik.solve(x, models[model], method)
            out[key].append(time.perf_counter() - t0)
    print(json.dumps(out), flush=True)
"""

#: The body check's cases (:func:`print_versus`): ``analytic`` with the body and without it.
BODY_CASES = (("body", "analytic", "body"), ("none", "analytic", "none"))

#: The host each code runs for the round trips: its NaoArmIK on each of two simulated robots (their URLs as
#: arguments, this process's robots: the same stub for every code), checking the body on the first and not on the
#: second; "ready" once registered, then it serves until its input closes.
HOST = """
import sys
import qi
qi.logging.setLevel(qi.logging.ERROR)
from nao_ik.service import register
sessions, services = [], []
for url, body in zip(sys.argv[1:3], (True, False)):
    sessions.append(qi.Session())
    sessions[-1].connect(url)
    sessions[-1].listen("tcp://127.0.0.1:0")
    services.append(register(sessions[-1], body=body)[0])
print("ready", flush=True)
sys.stdin.read()
for x in services:
    x.close(1.0)
for x in sessions:
    x.close()
"""

#: The joints the getAngles baseline reads (one arm's, as a program reads its arm).
ARM_JOINTS = ["LShoulderPitch", "LShoulderRoll", "LElbowYaw", "LElbowRoll", "LWristYaw"]

#: This checkout (the folder holding the nao_ik package).
HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def best_times(roots: dict[str, str], targets: np.ndarray, arm: str, passes: int,
               cases: Sequence[tuple] = BODY_CASES) -> dict[str, dict]:  # fmt: skip
    """Per code (name -> checkout), per case's key (``cases``: (key, method, "body" or "none"), :data:`WORKER`),
    each target's best time over ``passes`` (s)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "targets.npy")
        np.save(path, np.asarray(targets, dtype=float))
        procs = {}
        try:
            spec = ",".join(":".join(case) for case in cases)
            for name, root in roots.items():
                env = dict(os.environ, PYTHONPATH=root)
                procs[name] = subprocess.Popen([sys.executable, "-c", WORKER, path, arm, spec],
                                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                                               cwd=tmp)  # fmt: skip
                if procs[name].stdout.readline().strip() != "ready":
                    raise RuntimeError(f"nao-ik at {root} did not start (see its error above)")
            best: dict[str, dict] = {name: {} for name in roots}
            for k in range(passes):  # in one order, then the other: neither code always runs first
                for name, proc in procs.items() if k % 2 == 0 else reversed(procs.items()):
                    proc.stdin.write("\n")
                    proc.stdin.flush()
                    got = json.loads(proc.stdout.readline())
                    for key, times in got.items():
                        best[name][key] = np.minimum(best[name].get(key, np.inf), np.asarray(times))
            return best
        finally:
            for proc in procs.values():
                proc.stdin.close()
                proc.wait()


def print_methods_versus(out, against: str, targets: np.ndarray, arm: str, methods: Sequence[str],
                         passes: int) -> None:  # fmt: skip
    """Each method's median single solve (the arm's kinematics alone, from the neutral posture), this code and the
    code at ``against``, and their ratio."""
    best = best_times({"this code": HERE, against: os.path.abspath(against)}, targets, arm, passes,
                      [(m, m, "none") for m in methods])  # fmt: skip
    print(file=out)
    print(f"Single solves against the code at `{against}` ({arm}, the same {len(targets)} targets, the arm's "
          "kinematics alone, from the neutral posture; each code in its own process, the two taking turns pass by "
          f"pass, {passes} passes, each target's best; the median over the targets):", file=out)  # fmt: skip
    print(file=out)
    print(f"| method | this code | `{against}` | this / that |", file=out)
    print("|---|---|---|---|", file=out)
    for m in methods:
        now, then = (float(np.median(best[name][m])) * 1e6 for name in best)
        print(f"| {m} | {now:.1f} µs | {then:.1f} µs | {now / then:.2f} |", file=out, flush=True)


def print_versus(out, against: str, targets: np.ndarray, arm: str, passes: int) -> None:
    """The table: this code and the code at ``against``, and the ratio of each column."""
    best = best_times({"this code": HERE, against: os.path.abspath(against)}, targets, arm, passes)
    print(file=out)
    print(f"Against the code at `{against}` ({arm}, the same {len(targets)} targets, each code in its own process, "
          f"the two taking turns pass by pass, {passes} passes, each target's best; `nao_ik.solve`, analytic, from "
          "the neutral posture):", file=out)  # fmt: skip
    rows = {}
    for name, t in best.items():
        added = (t["body"] - t["none"]) * 1e6
        rows[name] = (np.median(t["body"]) * 1e6, np.median(t["none"]) * 1e6, np.median(added), added.mean(),
                      np.mean(added > 1e3))  # fmt: skip
    columns = ["median single, body", "median single, none", "check's cost, median", "check's cost, mean",
               "targets the body adds over 1 ms to"]  # fmt: skip
    _table(out, columns, rows, lambda b, n, med, mean, share: [f"{b:.0f} µs", f"{n:.0f} µs", f"{med:.0f} µs",
                                                                f"{mean:,.0f} µs", f"{share:.1%}"])  # fmt: skip


def _table(out, columns: list, rows: dict, cells: Callable[..., list]) -> None:
    """A markdown table of the codes compared: a row per code (``cells`` formats its values), then each value's
    ratio this code / the other."""
    print(file=out)
    print("| " + " | ".join(["code", *columns]) + " |", file=out)
    print("|" + "---|" * (len(columns) + 1), file=out)
    for name, values in rows.items():
        print("| " + " | ".join([name, *cells(*values)]) + " |", file=out)
    now, then = rows.values()
    print("| this / that | " + " | ".join(f"{a / b:.2f}" if b else "-" for a, b in zip(now, then)) + " |", file=out,
          flush=True)  # fmt: skip


def round_trips(roots: dict[str, str], rounds: int, targets: Sequence[Sequence[float]] | None = None
                ) -> dict[str, np.ndarray]:  # fmt: skip
    """reachTo (analytic) round trips over loopback: per code (name -> checkout) with the body ("<name> body") and
    without ("<name> none"), and ALMotion.getAngles ("getAngles"), taking turns (in one order for the first half of
    the rounds, in the reverse order for the second), reaching for ``targets`` in turn (default:
    :data:`~nao_ik.evidence.latency.TARGETS`, two per arm: both arms on their way at every reach); seconds per
    call. The simulated robots are this process's (the same stub for every code); each code's services run in
    its own process."""
    import qi

    from sim_stub.robot import SimulatedRobot

    from ..service.client import Session
    from .latency import TARGETS
    from .protocol import interleaved_times

    targets = TARGETS if targets is None else [tuple(float(x) for x in t) for t in targets]

    qi.logging.setLevel(qi.logging.ERROR)  # the simulated robots' service directories log each registration
    hosts, robots, sessions, calls = [], [], [], {}
    try:
        for name, root in roots.items():
            pair = [SimulatedRobot(), SimulatedRobot()]
            robots += pair
            env = dict(os.environ, PYTHONPATH=root)
            hosts.append(subprocess.Popen([sys.executable, "-c", HOST, *(r.url for r in pair)],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                                          cwd=root))  # fmt: skip
            if hosts[-1].stdout.readline().strip() != "ready":
                raise RuntimeError(f"nao-ik at {root} did not register its services (see its error above)")
            for key, robot in zip(("body", "none"), pair):
                sessions.append(Session(robot.url))
                motion = sessions[-1].service("ALMotion")
                motion.wakeUp()
                ik = sessions[-1].service("NaoArmIK")
                calls[f"{name} {key}"] = lambda k, ik=ik: ik.reachTo(*targets[k % len(targets)], "analytic")
                if "getAngles" not in calls:
                    calls["getAngles"] = lambda k, m=motion: m.getAngles(ARM_JOINTS, True)
        for call in calls.values():
            for k in range(4):
                call(k)
        half = rounds // 2
        first = interleaved_times(calls, list(range(half)), rounds=max(half, 1))
        second = interleaved_times(dict(reversed(list(calls.items()))), list(range(half, rounds)),
                                   rounds=max(rounds - half, 1))  # fmt: skip
        return {k: np.concatenate([first[k], second[k]]) for k in calls}
    finally:
        for session in sessions:
            session.close()
        for host in hosts:
            host.stdin.close()
        for host in hosts:
            try:
                host.wait(timeout=30)
            except subprocess.TimeoutExpired:
                host.kill()
                host.wait()
        for robot in robots:
            robot.close()


def print_round_trips(out, against: str, rounds: int) -> None:
    """The round trips' tables, this code and the code at ``against`` and the ratio of each column: the LArm
    reaching between its two targets of :data:`~nao_ik.evidence.latency.TARGETS` (the RArm still), then all four
    (each reach's arm and the other one on their way)."""
    from .latency import TARGETS

    print(file=out)
    print(f"reachTo (analytic) over loopback against the code at `{against}` (each code's NaoArmIK with the body "
          f"check and without, in its own process, on simulated robots of one stub; this process calls the four and "
          f"ALMotion.getAngles in turn, in one order then the reverse, {rounds} calls each; medians; the check's "
          "cost: body less none). One arm: the LArm between two targets, the RArm still; both arms: the four "
          "targets in turn, so each reach's arm and the other arm are on their way (the check then holds the "
          "other arm anywhere on its way to its command):", file=out)  # fmt: skip
    for title, targets in (("One arm", TARGETS[:2]), ("Both arms", TARGETS)):
        times = round_trips({"this code": HERE, against: os.path.abspath(against)}, rounds, targets)
        med = {k: float(np.median(v)) * 1e6 for k, v in times.items()}
        rows = {}
        for name in ("this code", against):
            b, n = med[f"{name} body"], med[f"{name} none"]
            rows[name] = (b, n, b / n, b - n)
        print(f"\n{title} (ALMotion.getAngles: {med['getAngles']:,.0f} µs):", file=out)
        _table(out, ["reachTo, body", "reachTo, none", "ratio", "check's cost"], rows,
               lambda b, n, ratio, cost: [f"{b:,.0f} µs", f"{n:,.0f} µs", f"{ratio:.2f}",
                                          f"{cost:,.0f} µs"])  # fmt: skip
