"""Another ALMotion user between the service's reaches: a seeded interleaving of what NAO programs do to the robot
the service shares (the rule it holds the service to: docs/service.md, "The robot is the truth"). Apart from
tests/system/test_robot_truth.py so that the test runner spreads the two files over its workers."""

from __future__ import annotations

import os
import random
import time

import numpy as np

from nao_ik.geometry.collision import clearance, posture_body
from nao_ik.geometry.sweep import sweep
from nao_ik.kinematics.chain import forward
from nao_ik.model.body import MARGIN
from tests import report
from tests.qi_fixtures import Stack
from tests.system.test_robot_truth import MODELS, NAMES, OTHER, arrives, fresh_answer, wait_still

#: Rounds: make test runs the default profile; make soak runs every profile and more.
ROUNDS = 120 if os.environ.get("NAO_IK_SOAK") else 30


def _clear_posture(rng: random.Random, arm: str, other: list, start: list) -> list:
    """A random posture of ``arm`` clear of the body and of the other arm at ``other``, reached from ``start`` by a
    motion clear of both (another program's move that the robot's protection has no reason to bend)."""
    model = MODELS[arm]
    body = posture_body(None, (MODELS[OTHER[arm]], other))
    model = model._replace(body=body)
    while True:
        q = [rng.uniform(lo, hi) for lo, hi in zip(model.lower, model.upper)]
        q[4] = 0.0
        if clearance(model, q, body).distance >= 2 * MARGIN and sweep(model, start, q).clear:
            return q


def _target(rng: random.Random, arm: str) -> tuple:
    """A hand position of a random in-limit posture of ``arm`` on its side (the reference reaches most of them)."""
    model = MODELS[arm]
    side = 1.0 if arm == "LArm" else -1.0
    while True:
        q = [rng.uniform(lo, hi) for lo, hi in zip(model.lower, model.upper)]
        p = forward(model, q)
        if side * p[1] > 0.06 and p[0] > 0.08:
            return tuple(float(v) for v in np.round(p, 4))


KINDS = ("rest and wakeUp", "limp then stiff", "angleInterpolationWithSpeed", "setAngles", "reach then rest",
         "the other arm")  # fmt: skip


def _disturb(s: Stack, kind: str, arm: str, rng: random.Random) -> None:
    """What another ALMotion user (or the service's other arm) does before the round's reach."""
    other = OTHER[arm]
    if kind == "rest and wakeUp":
        s.motion.rest()
        s.motion.wakeUp()
    elif kind == "limp then stiff":
        s.motion.setStiffnesses(arm, 0.0)
        time.sleep(0.05)
        s.motion.setStiffnesses(arm, 1.0)
    elif kind in ("angleInterpolationWithSpeed", "setAngles"):
        mover = rng.choice((arm, other))
        here = {a: s.motion.getAngles(NAMES[a], True) for a in (arm, other)}
        q = _clear_posture(rng, mover, here[OTHER[mover]], here[mover])
        if kind == "setAngles":
            s.motion.setAngles(NAMES[mover], q, 0.4)
        else:
            s.motion.angleInterpolationWithSpeed(NAMES[mover], q, 0.6)
    elif kind == "reach then rest":
        try:
            s.ik.reachToWithArm(arm, *_target(rng, arm), "analytic")
        except RuntimeError:
            pass
        s.motion.rest()
        try:  # refused (the motors off, or the body where rest() put it), or sent to motors that are off
            s.ik.reachToWithArm(arm, *_target(rng, arm), "analytic")
        except RuntimeError:
            pass
        s.motion.wakeUp()
    else:
        try:
            s.ik.reachToWithArm(other, *_target(rng, other), "analytic")
        except RuntimeError:
            pass


def test_another_almotion_user_between_reaches():
    """A seeded interleaving of another ALMotion client's rest()+wakeUp(), setStiffnesses 0 then 1,
    angleInterpolationWithSpeed and setAngles to other clear postures, a reach followed at once by rest() and
    another reach, and reaches of the other arm. After each, once the arms are still and the motors on, a reach's
    answer equals computeAngles of a service started then on the same robot (reached, reason, angles within
    1e-6 rad), a reached target arrives, no call runs over its budget, and the robot's protection stops nothing."""
    profile = os.environ.get("NAO_IK_STUB_PROFILE", "smooth")
    s = Stack()
    rng = random.Random(52)
    differ, stuck, over, reached, counts, worst = [], [], 0, 0, dict.fromkeys(KINDS, 0), 0.0
    try:
        s.motion.wakeUp()
        for k in range(ROUNDS):
            kind = KINDS[k % len(KINDS)]
            arm = rng.choice(("LArm", "RArm"))
            _disturb(s, kind, arm, rng)
            counts[kind] += 1
            wait_still(s)
            target = _target(rng, arm)
            want = fresh_answer(s.robot.url, arm, target)
            t0 = time.monotonic()
            try:
                got = s.ik.reachToWithArm(arm, *target, "analytic")
            except RuntimeError as e:  # refused where a service that never saw the past answers
                got = {"reached": False, "reason": str(e).splitlines()[0], "angles": []}
            took = time.monotonic() - t0
            worst = max(worst, took)
            over += took > 10.0
            same = (got["reached"] == want["reached"] and got["reason"] == want["reason"]
                    and np.allclose(got["angles"], want["angles"], atol=1e-6, rtol=0.0))  # fmt: skip
            if not same:
                differ.append((k, kind, arm, target, got["reason"], want["reason"], got["angles"], want["angles"],
                               got.get("otherSolution"), want.get("otherSolution")))  # fmt: skip
            if want["reached"]:
                reached += 1
            if got["reached"] and not arrives(s, arm, got["angles"]):
                stuck.append((k, kind, arm, target))
        stops = s.stub.getCollisionStops()
    finally:
        s.close()
    report.lines.append(
        f"another ALMotion user ({profile}): {ROUNDS} rounds ({', '.join(f'{v} {k}' for k, v in counts.items())}): "
        f"{len(differ)} differing answers, {over} calls over budget, {len(stops)} collision stops, {len(stuck)} "
        f"reached targets not arrived; the reference reached {reached}; slowest reach {worst * 1e3:.0f} ms"
    )
    assert reached >= 0.9 * ROUNDS, reached
    assert differ == [] and over == 0 and stops == [] and stuck == [], (differ, stops, stuck)
