"""What a call costs a client: NaoArmIK's calls against a plain ALMotion.getAngles, in one run.

Used by ``nao-ik loadtest`` and ``nao-ik demo``. The calls take turns (one of
each per round, ``rounds`` rounds), so a slow spell of a shared machine falls
on all of them alike; each row is the median over its calls, and the ratio is
against ``ALMotion.getAngles`` measured in the same rounds: the cost of one
robot round trip as the client sees it. The reaches run at one speed, the
service's default unless told: the check of a command sent while the arm
still moves covers the arm's way until the command arrives, longer for a
faster arm.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from typing import Any, Callable, NamedTuple, Sequence

#: Reachable targets (FRAME_TORSO metres) the reaches alternate between, both arms.
TARGETS = ((0.15, 0.12, 0.08), (0.12, 0.15, 0.02), (0.15, -0.12, 0.08), (0.12, -0.15, 0.02))
#: The NaoArmIK reach methods measured; ``analytic`` is the default.
REACH_METHODS = ("analytic", "dls", "nn")


class CallCost(NamedTuple):
    """One row: a call's median client-side time, its ratio to ALMotion.getAngles, the median solve inside it,
    and the reaches' fractionMaxSpeed in that measurement."""

    call: str
    median_us: float
    ratio: float
    calls: int
    solve_us: float  # NaN for the calls that solve nothing
    speed: float


def measure(ik: Any, motion: Any, rounds: int = 300, speed: float | None = None) -> list[CallCost]:
    """Time ``rounds`` rounds of every call (the robot must be awake).

    Args:
        ik: the ``NaoArmIK`` proxy.
        motion: the ``ALMotion`` proxy (the same robot).
        rounds: calls of each kind.
        speed: the reaches' fractionMaxSpeed (default: the service's :data:`~nao_ik.service.DEFAULT_SPEED`);
            the service's own default is set to it meanwhile and put back after.

    Returns:
        One row per call, ``ALMotion.getAngles`` first.
    """
    from ..service import DEFAULT_SPEED

    speed = DEFAULT_SPEED if speed is None else speed
    before = ik.getSpeed()
    ik.setSpeed(speed)
    try:
        return _measure(ik, motion, rounds, speed)
    finally:
        ik.setSpeed(before)


def _measure(ik: Any, motion: Any, rounds: int, speed: float) -> list[CallCost]:
    names = ["LShoulderPitch", "LShoulderRoll", "LElbowYaw", "LElbowRoll", "LWristYaw"]
    calls: dict[str, Callable[[int], Any]] = {
        "ALMotion.getAngles": lambda k: motion.getAngles(names, True),
        "NaoArmIK.getSpeed (an empty call)": lambda k: ik.getSpeed(),
        "NaoArmIK.computeAngles (dls)": lambda k: ik.computeAngles("LArm", *TARGETS[k % 2], "dls"),
    }
    for m in REACH_METHODS:
        calls[f"NaoArmIK.reachTo ({m})"] = lambda k, m=m: ik.reachTo(*TARGETS[k % len(TARGETS)], m)
    times: dict[str, list[float]] = {c: [] for c in calls}
    solves: dict[str, list[float]] = {c: [] for c in calls}
    for fn in calls.values():  # warm up: connections, caches, the networks' first use
        for k in range(3):
            fn(k)
    for k in range(rounds):
        for label, fn in calls.items():
            t0 = time.perf_counter()
            answer = fn(k)
            times[label].append(time.perf_counter() - t0)
            if isinstance(answer, dict) and "solveTimeMs" in answer:
                solves[label].append(answer["solveTimeMs"] * 1e3)
    base = statistics.median(times["ALMotion.getAngles"])
    return [
        CallCost(c, statistics.median(t) * 1e6, statistics.median(t) / base, len(t), _median(solves[c]), speed)
        for c, t in times.items()
    ]


def _median(values: list) -> float:
    return statistics.median(values) if values else float("nan")


def reach_ratio(rows: Sequence[CallCost]) -> float:
    """The worst reachTo / getAngles ratio of a measurement."""
    return max(r.ratio for r in rows if r.call.startswith("NaoArmIK.reachTo"))


def format_costs(rows: Sequence[CallCost], latency_ms: float) -> str:
    """A markdown table of a measurement, with the robot's simulated latency and the reaches' speed in its title."""
    title = (f"client-side cost per call, medians of {rows[0].calls} calls each, robot latency {latency_ms:g} ms, "
             f"reaches at fractionMaxSpeed {rows[0].speed:g}:")  # fmt: skip
    lines = [title, "", "| call (client side) | µs | x getAngles | of which the solve (µs) |", "|---|---|---|---|"]
    lines += [
        f"| {r.call} | {r.median_us:,.0f} | {r.ratio:.2f} | {'' if math.isnan(r.solve_us) else f'{r.solve_us:,.0f}'} |"
        for r in rows
    ]
    lines += ["", f"reachTo / getAngles ratio (worst method): {reach_ratio(rows):.2f}"]
    return "\n".join(lines)


def print_body_cost(rounds: int, out=sys.stdout) -> None:
    """reachTo's round trip over loopback with the body and motion checks and without (the cost the issue bounds).

    Two simulated robots in this process, each with its own NaoArmIK (one with ``body=False``: a
    switch only this measure uses), called in turn with the same targets; ALMotion.getAngles as the
    baseline. ``nao-ik loadtest --body-rounds N``.
    """
    try:
        import qi
    except ImportError:
        print("(the qi package is not installed: no round trips)", file=out)
        return
    from sim_stub.robot import SimulatedRobot

    qi.logging.setLevel(qi.logging.ERROR)  # the services' per-reach log lines
    from ..service import register
    from ..service.client import Session
    from .protocol import interleaved_times

    robots, sessions, services = [], [], []
    try:
        proxies = {}
        for key, body in (("body", True), ("none", False)):
            robot = SimulatedRobot()
            robots.append(robot)
            server = qi.Session()
            server.connect(robot.url)
            server.listen("tcp://127.0.0.1:0")
            services.append(register(server, body=body)[0])
            user = Session(robot.url)
            sessions += [server, user]
            user.service("ALMotion").wakeUp()
            proxies[key] = user.service("NaoArmIK")
        motion = sessions[1].service("ALMotion")
        names = ["LShoulderPitch", "LShoulderRoll", "LElbowYaw", "LElbowRoll", "LWristYaw"]
        calls = {
            "getAngles": lambda k: motion.getAngles(names, True),
            "body": lambda k: proxies["body"].reachTo(*TARGETS[k % len(TARGETS)], "analytic"),
            "none": lambda k: proxies["none"].reachTo(*TARGETS[k % len(TARGETS)], "analytic"),
        }
        for fn in calls.values():
            for k in range(4):
                fn(k)
        times = interleaved_times(calls, list(range(rounds)), rounds=rounds)
    finally:
        for service in services:
            service.close(1.0)
        for session in reversed(sessions):
            session.close()
        for robot in robots:
            robot.close()
    med = {k: statistics.median(v) * 1e6 for k, v in times.items()}
    print(file=out)
    print(f"reachTo (analytic) over loopback, with the body and motion checks / without (medians of {rounds} calls "
          "each, taking turns; the arm moves between four targets, as nao-ik loadtest's):", file=out)  # fmt: skip
    print(file=out)
    print("| ALMotion.getAngles | reachTo, body | reachTo, none | ratio |", file=out)
    print("|---|---|---|---|", file=out)
    print(f"| {med['getAngles']:,.0f} µs | {med['body']:,.0f} µs | {med['none']:,.0f} µs | "
          f"{med['body'] / med['none']:.2f} |", file=out, flush=True)  # fmt: skip


class ReadReach(NamedTuple):
    """One protocol of :func:`read_then_reach`: per reach, the getAngles and reachTo times (s), the commands the
    reach sent (0: refused, or not reached: stopped on its way), the refusals' reasons (and those of the reaches
    not reached), and per reach the answer's ``waitMs``, ``checkMs`` (0 for
    a refusal) and ``otherSolution`` (False for a refusal)."""

    read: list
    reach: list
    commands: list
    refusals: list
    wait_ms: list
    check_ms: list
    other: list


def read_then_reach(reaches: int, latency: float, seed: int = 0, still: bool = False) -> ReadReach:
    """A program that reads its arm (``ALMotion.getAngles``) and then reaches for a random reachable target.

    ``reaches`` times over a simulated robot with ``latency`` seconds per ALMotion call; ``still``: the program
    waits until the arm has stopped before it reads (else it reads and reaches while the last reach's motion
    still runs, as a program that does not wait does). The targets: the benchmark's (``protocol.sample_targets``)
    that ``analytic`` reaches with NAO's body, LArm.
    """
    import qi

    from sim_stub.robot import SimulatedRobot

    from ..api import position as api
    from ..model.arm import arm_model
    from ..service import register
    from ..service.client import Session
    from .protocol import sample_targets

    qi.logging.setLevel(qi.logging.ERROR)
    model = arm_model("LArm")
    names = list(model.names)
    targets = [t for t in sample_targets("LArm", 4 * reaches, seed).tolist() if api.solve(t, model).reached]
    robot = SimulatedRobot(latency=latency)
    server, user = qi.Session(), None
    service = None
    out = ReadReach([], [], [], [], [], [], [])
    try:
        server.connect(robot.url)
        server.listen("tcp://127.0.0.1:0")
        service = register(server)[0]
        user = Session(robot.url)
        motion, ik = user.service("ALMotion"), user.service("NaoArmIK")
        motion.wakeUp()
        for k in range(reaches + 3):  # three to warm up: connections, caches
            if still:
                end = time.monotonic() + 30
                while motion.getAngles(names, True) != motion.getAngles(names, False) and time.monotonic() < end:
                    time.sleep(0.01)
            t0 = time.perf_counter()
            motion.getAngles(names, True)
            t1 = time.perf_counter()
            try:
                got = ik.reachToWithArm("LArm", *targets[k % len(targets)], "analytic")
                sent, wait, check, other = got["commands"], got["waitMs"], got["checkMs"], got["otherSolution"]
                if not got["reached"]:  # stopped on its way (the targets are reachable): a failed reach too
                    sent = 0
                    out.refusals.append(got["reason"])
            except RuntimeError as e:
                sent, wait, check, other = 0, 0.0, 0.0, False
                out.refusals.append(str(e).split(": ", 1)[-1])
            t2 = time.perf_counter()
            if k >= 3:
                out.read.append(t1 - t0)
                out.reach.append(t2 - t1)
                out.commands.append(sent)
                out.wait_ms.append(wait)
                out.check_ms.append(check)
                out.other.append(other)
    finally:
        if service is not None:
            service.close(1.0)
        for session in (user, server):
            if session is not None:
                session.close()
        robot.close()
    return out


def print_read_then_reach(reaches: int, latency: float, seed: int = 0, out=None) -> None:
    """:func:`read_then_reach` both ways (the arm still moving, the arm stopped), as a markdown table on ``out``
    (default: standard output)."""
    out = sys.stdout if out is None else out
    print(f"A program reads LArm (ALMotion.getAngles) and then reaches (NaoArmIK.reachToWithArm, analytic) for a "
          f"random reachable target, {reaches} times, over a simulated robot with {1e3 * latency:g} ms per ALMotion "
          "call (medians; ratio: reachTo / getAngles). Each reach is sent at once (one command, no wait), after "
          "waiting for the arm to stop (one command: no motion to the target was certified from everywhere on the "
          "arm's way, overshoot included), in legs (swung out first: each leg waits for the arm at the one "
          "before), or refused or stopped on its way (not reached); of the reaches sent as one command, those sent to "
          "another solution of the target than analytic's, which would have needed legs or a wait (the answer's "
          "otherSolution); check: the motion check's computation (the answer's checkMs).",
          file=out)  # fmt: skip
    print(file=out)
    print("| the program | median getAngles | median reachTo | ratio | sent at once | after waiting | in legs | "
          "refused or stopped | one command, another solution | median reachTo, sent at once | ratio, sent at once | "
          "median check, sent at once |", file=out)  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|---|", file=out)
    for still, label in ((False, "reads and reaches at once"), (True, "waits until the arm stopped, then reads")):
        r = read_then_reach(reaches, latency, seed, still)
        read = statistics.median(r.read)
        once = [k for k, (c, w) in enumerate(zip(r.commands, r.wait_ms)) if c == 1 and w == 0.0]
        waited = sum(c == 1 and w > 0.0 for c, w in zip(r.commands, r.wait_ms))
        reach = statistics.median(r.reach)
        once_med = statistics.median([r.reach[k] for k in once]) if once else float("nan")
        check = statistics.median([r.check_ms[k] for k in once]) if once else float("nan")
        print(f"| {label} | {1e3 * read:.1f} ms | {1e3 * reach:.1f} ms | {reach / read:.2f} | {len(once)} | "
              f"{waited} | {sum(c > 1 for c in r.commands)} | {len(r.refusals)} | "
              f"{sum(c == 1 and o for c, o in zip(r.commands, r.other))} | {1e3 * once_med:.1f} ms | "
              f"{once_med / read:.2f} | {check:.1f} ms |", file=out, flush=True)  # fmt: skip
        reasons = sorted(set(r.refusals))
        if reasons:
            print(
                f"\nrefusals ({label}): " + "; ".join(f"{r.refusals.count(x)} x {x}" for x in reasons) + "\n", file=out
            )
