"""``followTarget`` measured: a circle streamed at 50 Hz to the simulated robot over a link with latency, and the
CPU time of each cycle of the arm's loop (its solve, and its motion-core step, waits excluded).

Run ``python -m nao_ik.evidence.follow_bench [--seconds 20] [--latency-ms 5] [--profile smooth]``: it prints one
table row per send pattern (steady; jittered by +-10 ms and bunched three at once every half second). The circle:
radius 5 cm in the y-z plane around (0.15, 0.10, 0.05) FRAME_TORSO, period 4 s, LArm; the tracking error is the
hand (sensed angles) against the target sent last, after the first second.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from typing import Any, Callable

import numpy as np

from ..kinematics.chain import forward
from ..model.arm import arm_model
from ..service.client import Session
from .protocol import machine

CENTRE, RADIUS, PERIOD, RATE = np.array([0.15, 0.10, 0.05]), 0.05, 4.0, 50.0


def circle(t: float) -> np.ndarray:
    a = 2.0 * math.pi * t / PERIOD
    return CENTRE + RADIUS * np.array([0.0, math.cos(a), math.sin(a)])


def stream(ik: Any, angles: Callable[[bool], list], seconds: float, jitter: bool = False, seed: int = 0) -> tuple:
    """Stream the circle to LArm through ``ik`` (a NaoArmIK proxy) at RATE for ``seconds``, the hand first put at
    its start; with ``jitter`` each send +-10 ms off its time, and three sends bunched at once every half second.
    ``angles(sensed)``: LArm's angles as the robot has them (sensed, or ALMotion's command).

    Returns:
        (the hand's tracking error (m) against the target sent last, after the first second, at every send; when the
        last update was answered (monotonic s); LArm's commanded posture then).
    """
    model = arm_model("LArm")
    rng = random.Random(seed)
    start = ik.reachToWithArm("LArm", *circle(0.0).tolist(), "")  # the hand at the circle's start first
    if not start["reached"]:
        raise RuntimeError(f"the circle's start was not reached: {start['reason']}")
    end = time.monotonic() + 10.0
    while time.monotonic() < end and ik.getArmState("LArm")["state"] == "moving":
        time.sleep(0.02)
    errors, last, k = [], None, 0
    answered, commanded = time.monotonic(), angles(False)
    t0 = time.monotonic()
    while True:
        due = t0 + k / RATE + (rng.uniform(-0.01, 0.01) if jitter else 0.0)
        if jitter and k % int(RATE / 2) == 1:  # held back: this one and the next two go at once
            due = t0 + (k + 2) / RATE
        time.sleep(max(0.0, due - time.monotonic()))
        t = time.monotonic() - t0
        if t > seconds:
            return errors, answered, commanded
        target = circle(t)
        ik.followTarget("LArm", *target.tolist(), 0)
        answered, commanded = time.monotonic(), angles(False)
        if last is not None and t > 1.0:
            errors.append(float(np.linalg.norm(forward(model, angles(True)) - last)))
        last, k = target, k + 1


def run(seconds: float, latency: float, profile: str, jitter: bool, seed: int = 0) -> dict:
    """One streamed circle against a fresh simulated robot and service; its figures."""
    import qi

    from sim_stub.robot import SimulatedRobot

    from ..service import register

    robot = SimulatedRobot(latency=latency, profile=profile)
    server = qi.Session()
    server.connect(robot.url)
    server.listen("tcp://127.0.0.1:0")
    service, _ = register(server)
    user = Session(robot.url)
    try:
        user.service("ALMotion").wakeUp()
        names = list(arm_model("LArm").names)
        errors = stream(user.service("NaoArmIK"), lambda sensed: robot.motion.getAngles(names, sensed), seconds,
                        jitter, seed)[0]  # fmt: skip
        cycles = np.array(service.cycle_seconds()) * 1e3
        stops = len(robot.motion.getCollisionStops())
        commands = sum(1 for c in robot.motion.getRecordedCommands() if c["method"] == "setAngles")
    finally:
        service.close()
        user.close()
        server.close()
        robot.close()
    e = np.array(errors) * 1e3
    return {"sends": "jittered +-10 ms, three bunched every 0.5 s" if jitter else "steady",
            "error_median": float(np.median(e)), "error_p95": float(np.percentile(e, 95)),
            "solve_median": float(np.median(cycles[:, 0])), "solve_p99": float(np.percentile(cycles[:, 0], 99)),
            "step_median": float(np.median(cycles[:, 1])), "step_p99": float(np.percentile(cycles[:, 1], 99)),
            "cycles": len(cycles), "commands": commands, "stops": stops}  # fmt: skip


def table(rows: list) -> str:
    out = ["| sends | tracking error median / p95 (mm) | step CPU median / p99 (ms) | solve CPU median / p99 (ms) "
           "| cycles | setAngles | collision stops |", "|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in rows:
        out.append(f"| {r['sends']} | {r['error_median']:.1f} / {r['error_p95']:.1f} | {r['step_median']:.2f} / "
                   f"{r['step_p99']:.2f} | {r['solve_median']:.2f} / {r['solve_p99']:.2f} | {r['cycles']} | "
                   f"{r['commands']} | {r['stops']} |")  # fmt: skip
    return "\n".join(out)


def main(argv: list | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--latency-ms", type=float, default=5.0)
    p.add_argument("--profile", default="smooth")
    a = p.parse_args(argv)
    rows = [run(a.seconds, a.latency_ms / 1e3, a.profile, jitter) for jitter in (False, True)]
    print(f"followTarget, LArm, a 5 cm circle at 50 Hz for {a.seconds:g} s over a {a.latency_ms:g} ms link, the "
          f"{a.profile} profile; {machine()}")  # fmt: skip
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
