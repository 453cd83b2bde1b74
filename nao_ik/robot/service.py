# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010, UP031, N802, N803  (Python 2.7 and 3; lowerCamelCase: the qi API's names)
"""The NaoArmIK qi service of the robot runtime (the ``analytic`` method, the joint limits, the body).

The same method names and answers as the computer-side service (:mod:`nao_ik.service`) for
the calls it has: ``reachTo``, ``reachToWithArm``, ``reachToWithSpeed``, ``computeAngles``,
``getMethods``, ``setSpeed``, ``getSpeed``; the method may be left out (:mod:`nao_ik.qi_methods`).
Every argument is checked first (:mod:`nao_ik.robot.checks`); bad input gets a one-line ValueError
naming it and the robot receives no command. Answers keep :data:`~nao_ik.body_data.MARGIN` from NAO's standing body
(:mod:`nao_ik.robot.solve`); the direct ``setAngles`` motion from the sensed posture to the
answer is checked with the library's sweep (:func:`nao_ik.geometry.scalar_sweep.advance`,
SWEEP_MARGIN): where it would cross the body nothing is sent (``reason`` "motion: the move
crosses the <part>"; the robot runtime has no swung-out sequences). The last check before
``ALMotion.setAngles``: five finite angles inside the limits, else nothing is sent.
"""

from __future__ import division

import threading
import time

import qi

from ..geometry.scalar_clearance import checker
from ..geometry.scalar_sweep import Motion, advance
from ..qi_methods import publish
from . import checks
from .arms import MODELS
from .solve import STANDING, solve

DEFAULT_SPEED = 0.2
_ANSWER = qi.Map(qi.String, qi.Dynamic)


@publish
class NaoArmIK(object):
    """The service object.

    Args:
        session: a qi session connected to the robot's NAOqi.
        speed: the default ``fractionMaxSpeed`` of ``setAngles``.
    """

    def __init__(self, session, speed=DEFAULT_SPEED):
        self._session = session
        self._speed = checks.speed(speed)
        self._motion = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------ qi methods

    @qi.bind(_ANSWER, [qi.Dynamic] * 4)
    def reachTo(self, x, y, z, method):
        """Move the hand of the arm on the target's side (y >= 0: LArm) to (x, y, z) in FRAME_TORSO metres."""
        t = checks.target(x, y, z)
        return self._reach("LArm" if t[1] >= 0 else "RArm", t, checks.method(method), None, True)

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def reachToWithArm(self, arm, x, y, z, method):
        """Move ``arm``'s hand ("LArm" or "RArm") to (x, y, z)."""
        return self._reach(checks.arm(arm), checks.target(x, y, z), checks.method(method), None, True)

    @qi.bind(_ANSWER, [qi.Dynamic] * 6)
    def reachToWithSpeed(self, arm, x, y, z, method, fractionMaxSpeed):
        """As reachToWithArm, at ``fractionMaxSpeed`` of the joints' maximum speed."""
        a, t, m = checks.arm(arm), checks.target(x, y, z), checks.method(method)
        return self._reach(a, t, m, checks.speed(fractionMaxSpeed), True)

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def computeAngles(self, arm, x, y, z, method):
        """The joint angles that reachToWithArm would send, without moving."""
        return self._reach(checks.arm(arm), checks.target(x, y, z), checks.method(method), None, False)

    @qi.bind(qi.List(qi.String), [])
    def getMethods(self):
        """The IK methods this runtime has (the others run on the computer-side service)."""
        return list(checks.METHODS)

    @qi.bind(qi.Void, [qi.Dynamic])
    def setSpeed(self, fraction):
        """Default fraction of the joints' maximum speed for motions, in [0.01, 1]."""
        self._speed = checks.speed(fraction)

    @qi.bind(qi.Double, [])
    def getSpeed(self):
        """The current fraction of maximum speed."""
        return self._speed

    # ------------------------------------------------------------- internals

    @qi.nobind
    def _alm(self):
        """ALMotion's proxy (asked for again after a failure: NAOqi may have restarted it)."""
        if self._motion is None:
            self._motion = self._session.service("ALMotion")
        return self._motion

    @qi.nobind
    def _reach(self, arm, target, method, speed, move):
        model = MODELS[arm]
        names = list(model.names)
        try:
            current = [float(q) for q in self._alm().getAngles(names, True)]
            stiff = [float(s) for s in self._alm().getStiffnesses(names)] if move else []
        except RuntimeError:
            self._motion = None
            raise
        if len(current) != 5 or not model.within_limits(current, 1e6):
            raise RuntimeError("ALMotion.getAngles answered %r for %s; nothing sent" % (current, arm))
        off = [n for n, s in zip(names, stiff) if not s > 0.0]
        if off:
            raise RuntimeError("%s motors are off (stiffness 0 on %s): call ALMotion.wakeUp() or setStiffnesses "
                               "first" % (arm, ", ".join(off)))  # fmt: skip
        start = model.clamp(current)
        t0 = time.time()
        sol = solve(model, target, start)
        solve_ms = (time.time() - t0) * 1e3
        angles = [float(q) for q in sol.angles]
        speed = self._speed if speed is None else speed
        reached, reason, safe = bool(sol.reached), str(sol.reason), sol.found
        if sol.found:
            # The direct motion setAngles makes from the sensed posture: nothing sent where it would cross the body.
            clear, _, part, _ = advance(Motion(model, start, angles, speed), checker(model, STANDING))
            if not clear:
                reached, reason, safe = False, "motion: the move crosses the %s" % (part or "body"), False
        sent = False
        if move and safe:
            # The last line of defence: five finite angles inside the limits, or nothing is sent.
            if not model.within_limits(angles):
                raise RuntimeError("%s for %r produced %r outside the limits; nothing sent" % (method, target, angles))
            with self._lock:
                self._alm().setAngles(names, angles, speed)
            sent = True
        seconds = max(abs(q - q0) / j.max_velocity for q, q0, j in zip(angles, start, model.joints)) / speed
        return {
            "arm": arm,
            "method": method,
            "target": list(target),
            "names": names,
            "angles": angles,
            "reached": reached,
            "error": float(sol.error),
            "iterations": 0,
            "solveTimeMs": float(solve_ms),
            "clamped": [],
            "moved": sent,
            "jointChange": float(max(abs(q - q0) for q, q0 in zip(angles, start))),
            "moveSeconds": float(seconds) if sol.found else 0.0,
            "shortfall": 0.0 if sol.reached else float(sol.error),
            "refined": False,
            "reason": reason,
            # 1: the command sent (computeAngles: the one it would send); 0: none (nothing found, or no safe
            # motion: nothing sent).
            "commands": 1 if sent or (safe and not move) else 0,
        }
