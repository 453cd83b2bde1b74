"""A stand-in for NAOqi's ALMotion, faithful enough to develop and test against.

What it does like ALMotion: joint and chain names, ``setAngles`` (non-blocking:
joints then move at ``fractionMaxSpeed`` x their maximum velocity, advanced in
20 ms cycles like ALMotion's 50 Hz loop), ``angleInterpolationWithSpeed``
(blocking), ``getAngles`` (commanded or sensed), ``getLimits``,
``getPosition`` and ``getTransform`` of the arm effectors (hand pose) and of the ``Torso`` in
FRAME_TORSO, FRAME_WORLD and FRAME_ROBOT (a standing robot: :mod:`sim_stub.frames`), the hands
(``LHand``/``RHand``, 0 closed .. 1 open, moved by ``setAngles`` at their speed), stiffness (a joint with
stiffness 0 does not move), ``wakeUp`` and ``rest``. It refuses what ALMotion
refuses: unknown names, lengths that do not match, values that are not numbers.

What it adds, for tests: every command is recorded, and a command with a
value outside the joint's limits or not finite is flagged as a violation (and
not executed beyond the limit), so a test can prove a client never sends one.
``setHang(method, seconds)`` makes a method hang before it answers, as a
stuck ALMotion would (the stub serves one call at a time, so its other
callers wait too); ``setHang(method, 0)`` ends the hang.

Arm collision protection like ALMotion's (``setCollisionProtectionEnabled``,
on by default): a joint command that would bring an arm within the body's
margin (:mod:`sim_stub.protection`) stops at the last safe posture, and the
stop is recorded (``getCollisionStops``) for the tests to count.

``setTorsoTransform(frame, values)`` moves the torso in FRAME_WORLD or
FRAME_ROBOT (stub only), for frame conversion tests.

What it does not do: dynamics, balance, collisions between the arms, walking,
Cartesian control.
"""

from __future__ import annotations

import math
import numbers
import threading
import time
from typing import Any, Callable

try:  # qi publishes every method of a registered object; keep helpers private
    from qi import nobind as _private
except ImportError:  # in-process use without libqi

    def _private(f):
        return f


import numpy as np

from nao_ik.geometry.pose import forward_pose, pose6d_to_transform, transform_to_pose6d
from nao_ik.model import arm_model

from .body import CHAINS, JOINTS, REST, STAND
from .frames import TorsoFrames
from .protection import arm_clearance, collides

CYCLE = 0.02  # ALMotion's control period, seconds
HANGABLE = ("setAngles", "getAngles", "getLimits", "getStiffnesses")


class StubMotion:
    """ALMotion stand-in. Thread-safe; register it on a qi session as ``ALMotion``.

    Args:
        clock: monotonic time source (seconds); tests may pass a fake one.
        sleep: how blocking calls wait; pairs with ``clock``.
        limits: joint name -> (lower, upper) replacing the documented limits,
            to simulate a robot that reports other ones.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        limits: dict[str, tuple[float, float]] | None = None,
    ):
        self._joints = dict(JOINTS)
        for name, (lo, hi) in (limits or {}).items():
            self._joints[name] = self._joints[name]._replace(lower=float(lo), upper=float(hi))
        self._lock = threading.RLock()
        # Kept in a tuple: qi would publish a callable attribute as a method.
        self._timing = (clock, sleep)
        start = {n: min(max(v, self._joints[n].lower), self._joints[n].upper) for n, v in STAND.items()}
        self._commanded = dict(start)
        self._sensed = dict(start)
        self._stiffness = {name: 0.0 for name in JOINTS}
        self._moves: dict[str, tuple[float, float]] = {}  # joint -> (target, rad/s)
        self._time = clock()
        self._record: list[dict] = []
        self._violations: list[dict] = []
        self._hangs: dict[str, float] = {}
        self._unhang = threading.Event()
        # Arm collision protection, like ALMotion's (on by default): see sim_stub/protection.py.
        self._protect = {"LArm": True, "RArm": True}
        self._collisions: list[dict] = []
        self._frames = TorsoFrames()

    # ------------------------------------------------------------ joint motion

    def setAngles(self, names: Any, angles: Any, fractionMaxSpeed: Any) -> None:
        """Start moving joints toward angles; returns at once."""
        self._hang_point("setAngles")
        with self._lock:
            joints, values, speed = self._command("setAngles", names, angles, fractionMaxSpeed)
            self._start(joints, values, speed)

    def angleInterpolationWithSpeed(self, names: Any, targetAngles: Any, maxSpeedFraction: Any) -> None:
        """Move joints to angles and return when they are there."""
        with self._lock:
            joints, values, speed = self._command("angleInterpolationWithSpeed", names, targetAngles, maxSpeedFraction)
            self._start(joints, values, speed)
            duration = self._remaining(joints)
        self._timing[1](duration + CYCLE)
        with self._lock:
            self._advance()

    def getAngles(self, names: Any, useSensors: Any) -> list[float]:
        """Commanded (``useSensors`` False) or current (True) angles."""
        self._hang_point("getAngles")
        with self._lock:
            self._advance()
            joints = self._expand(names)
            source = self._sensed if bool(useSensors) else self._commanded
            return [float(source[j]) for j in joints]

    def getLimits(self, name: Any) -> list[list[float]]:
        """``[minAngle, maxAngle, maxVelocity, maxTorque]`` per joint."""
        self._hang_point("getLimits")
        return [[j.lower, j.upper, j.max_velocity, j.max_torque] for j in (self._joints[n] for n in self._expand(name))]

    def getPosition(self, name: Any, frame: Any, useSensorValues: Any) -> list[float]:
        """``[x, y, z, wx, wy, wz]`` of the ``LArm``/``RArm`` effector or the ``Torso`` in ``frame``."""
        return transform_to_pose6d(np.array(self.getTransform(name, frame, useSensorValues)).reshape(4, 4))

    def getTransform(self, name: Any, frame: Any, useSensorValues: Any) -> list[float]:
        """The 4x4 transform of ``LArm``, ``RArm`` (hand) or ``Torso`` in ``frame`` (0, 1, 2), 16 values row by row."""
        if name not in ("LArm", "RArm", "Torso"):
            raise RuntimeError(f"ALMotion stub: getTransform supports LArm, RArm and Torso, not {name!r}")
        torso = self._frames.torso(frame)
        if name == "Torso":
            return torso.ravel().tolist()
        model = arm_model(name)
        hand = pose6d_to_transform(forward_pose(model, self.getAngles(list(model.names), useSensorValues)))
        return (torso @ hand).ravel().tolist()

    def setTorsoTransform(self, frame: Any, values: Any) -> None:
        """Move the torso: its 4x4 transform (16 values) in FRAME_WORLD (1) or FRAME_ROBOT (2) (stub only)."""
        self._frames.set(frame, values)

    # ------------------------------------------------------------- stiffness

    def wakeUp(self) -> None:
        """Motors on (the stub stays in its current posture)."""
        with self._lock:
            self._advance()
            self._record.append(self._entry("wakeUp", [], [], None))
            for j in self._stiffness:
                self._stiffness[j] = 1.0

    def rest(self) -> None:
        """Go to the crouching rest posture, then motors off."""
        with self._lock:
            self._advance()
            self._record.append(self._entry("rest", [], [], None))
            self._moves.clear()
            self._commanded.update(REST)
            self._sensed.update(REST)
            for j in self._stiffness:
                self._stiffness[j] = 0.0

    def robotIsWakeUp(self) -> bool:
        """True if any motor is on."""
        with self._lock:
            return any(s > 0 for s in self._stiffness.values())

    def setStiffnesses(self, names: Any, stiffnesses: Any) -> None:
        """Stiffness in [0, 1] per joint (one value for all, or one each)."""
        with self._lock:
            self._advance()
            joints = self._expand(names)
            values = self._values(stiffnesses, len(joints), "stiffnesses")
            for j, v in zip(joints, values):
                if not 0.0 <= v <= 1.0:
                    raise RuntimeError(f"ALMotion: stiffness of {j} must be in [0, 1], got {v!r}")
            self._record.append(self._entry("setStiffnesses", joints, values, None))
            for j, v in zip(joints, values):
                self._stiffness[j] = v
                if v == 0.0:
                    self._moves.pop(j, None)

    def getStiffnesses(self, names: Any) -> list[float]:
        """Stiffness per joint."""
        self._hang_point("getStiffnesses")
        with self._lock:
            return [self._stiffness[j] for j in self._expand(names)]

    # -------------------------------------------------- collision protection

    def setCollisionProtectionEnabled(self, pChainName: Any, pEnable: Any) -> bool:
        """Arm collision protection on or off for ``"Arms"``, ``"LArm"`` or ``"RArm"`` (on by default).

        While on, a joint command that would bring an arm within the body's
        margin stops at the last safe posture (checked every 20 ms cycle), and
        the stop is recorded (:meth:`getCollisionStops`).
        """
        arms = self._protected_chains(pChainName)
        if not isinstance(pEnable, bool):
            raise RuntimeError(f"ALMotion: pEnable must be a bool, got {pEnable!r}")
        with self._lock:
            self._advance()
            for a in arms:
                self._protect[a] = pEnable
        return True

    def getCollisionProtectionEnabled(self, pChainName: Any) -> bool:
        """Whether the arm collision protection is on (for ``"Arms"``: on for both arms)."""
        with self._lock:
            return all(self._protect[a] for a in self._protected_chains(pChainName))

    def getCollisionStops(self) -> list[dict]:
        """The arm motions the protection stopped, oldest first: time, arm, part, angles (stub only)."""
        with self._lock:
            self._advance()
            return [dict(c) for c in self._collisions]

    @_private
    @staticmethod
    def _protected_chains(name: Any) -> tuple[str, ...]:
        chains = {"Arms": ("LArm", "RArm"), "LArm": ("LArm",), "RArm": ("RArm",)}
        if name not in chains:
            raise RuntimeError(f"ALMotion: collision protection chain must be Arms, LArm or RArm, got {name!r}")
        return chains[name]

    @_private
    def _guarded(self) -> list[str]:
        """The protected arms with a joint moving."""
        return [a for a, on in self._protect.items() if on and any(j in self._moves for j in CHAINS[a][:5])]

    @_private
    def _guard(self, before: dict, arms: list[str]) -> None:
        """Stop an arm that moved within the body's margin this cycle, at its posture before the cycle."""
        for arm in arms:
            names = CHAINS[arm][:5]
            hit, part = collides(arm, [self._sensed[j] for j in names])
            if not hit:
                continue
            was, _ = arm_clearance(arm, [before[j] for j in names])
            now, _ = arm_clearance(arm, [self._sensed[j] for j in names])
            if now >= was:  # moving away from the body out of an overlap is allowed
                continue
            for j in names:
                self._sensed[j] = before[j]
                self._commanded[j] = before[j]
                self._moves.pop(j, None)
            self._collisions.append(
                {"time": self._time, "arm": arm, "part": part, "angles": [float(before[j]) for j in names]}
            )

    # ------------------------------------------------------- stub-only: tests

    def getRecordedCommands(self) -> list[dict]:
        """Every command received, oldest first (stub only)."""
        with self._lock:
            return [dict(c) for c in self._record]

    def getViolations(self) -> list[dict]:
        """The commands that held an out-of-limit or non-finite angle (stub only)."""
        with self._lock:
            return [dict(c) for c in self._violations]

    def clearRecordedCommands(self) -> None:
        """Forget the recorded commands and violations (stub only)."""
        with self._lock:
            self._record.clear()
            self._violations.clear()
            self._collisions.clear()

    def setHang(self, method: Any, seconds: Any) -> None:
        """Make ``method`` wait ``seconds`` before it answers; 0 ends every hang at once (stub only).

        ``method``: one of :data:`HANGABLE`.
        """
        if method not in HANGABLE:
            raise RuntimeError(f"ALMotion stub: setHang supports {', '.join(HANGABLE)}, not {method!r}")
        seconds = _number(seconds, "seconds")
        with self._lock:
            if seconds > 0:
                self._unhang.clear()
                self._hangs[method] = seconds
            else:
                self._hangs.clear()
                self._unhang.set()

    # -------------------------------------------------------------- internals

    @_private
    def _hang_point(self, method: str) -> None:
        seconds = self._hangs.get(method)
        if seconds:
            self._unhang.wait(seconds)

    @_private
    def _command(self, method: str, names: Any, angles: Any, fraction: Any):
        self._advance()
        joints = self._expand(names)
        values = self._values(angles, len(joints), "angles")
        speed = _number(fraction, "fractionMaxSpeed")
        if not 0.0 < speed <= 1.0:
            raise RuntimeError(f"ALMotion: fractionMaxSpeed must be in (0, 1], got {speed!r}")
        entry = self._entry(method, joints, values, speed)
        self._record.append(entry)
        if entry["violations"]:
            self._violations.append(entry)
        return joints, values, speed

    @_private
    def _entry(self, method: str, joints: list, values: list, speed: Any) -> dict:
        bad = []
        if method in ("setAngles", "angleInterpolationWithSpeed"):
            for j, v in zip(joints, values):
                spec = self._joints[j]
                if not math.isfinite(v) or not spec.lower <= v <= spec.upper:
                    bad.append(f"{j}={v!r} outside [{spec.lower}, {spec.upper}]")
        return {
            "method": method,
            "names": list(joints),
            "angles": [float(v) for v in values],
            "speed": speed,
            "time": self._timing[0](),
            "violations": bad,
        }

    @_private
    def _start(self, joints: list, values: list, speed: float) -> None:
        for j, v in zip(joints, values):
            spec = self._joints[j]
            if not math.isfinite(v):
                continue  # a joint is not sent to NaN
            target = min(max(v, spec.lower), spec.upper)
            self._commanded[j] = target
            if self._stiffness[j] > 0.0:
                self._moves[j] = (target, speed * spec.max_velocity)

    @_private
    def _remaining(self, joints: list) -> float:
        return max(
            (abs(self._moves[j][0] - self._sensed[j]) / self._moves[j][1] for j in joints if j in self._moves),
            default=0.0,
        )

    @_private
    def _advance(self) -> None:
        now = self._timing[0]()
        cycles = int((now - self._time) / CYCLE)
        if cycles <= 0:
            return
        self._time += cycles * CYCLE
        arms = self._guarded()
        while cycles and arms:  # cycle by cycle, each checked by the collision protection
            before = dict(self._sensed)
            self._step(CYCLE)
            self._guard(before, arms)
            cycles -= 1
            arms = self._guarded()
        if cycles:
            self._step(cycles * CYCLE)

    @_private
    def _step(self, dt: float) -> None:
        """Move every joint toward its target for dt seconds."""
        for j, (target, velocity) in list(self._moves.items()):
            delta = target - self._sensed[j]
            step = velocity * dt
            if abs(delta) <= step:
                self._sensed[j] = target
                del self._moves[j]
            else:
                self._sensed[j] += math.copysign(step, delta)

    @_private
    @staticmethod
    def _expand(names: Any) -> list[str]:
        items = [names] if isinstance(names, str) else names
        if not isinstance(items, (list, tuple)) or not items:
            raise RuntimeError(f"ALMotion: names must be a joint or chain name or a list of them, got {names!r}")
        out: list[str] = []
        for n in items:
            if not isinstance(n, str):
                raise RuntimeError(f"ALMotion: names must be strings, got {n!r}")
            if n in CHAINS:
                out.extend(CHAINS[n])
            elif n in JOINTS:
                out.append(n)
            else:
                raise RuntimeError(f"ALMotion: unknown joint or chain name {n!r}")
        return out

    @_private
    @staticmethod
    def _values(values: Any, count: int, what: str) -> list[float]:
        items = [values] if isinstance(values, numbers.Real) and not isinstance(values, bool) else values
        if not isinstance(items, (list, tuple)):
            raise RuntimeError(f"ALMotion: {what} must be a number or a list of numbers, got {values!r}")
        if len(items) == 1 and count > 1 and what == "stiffnesses":
            items = list(items) * count
        if len(items) != count:
            raise RuntimeError(f"ALMotion: {count} joints but {len(items)} {what}")
        return [_number(v, what) for v in items]


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise RuntimeError(f"ALMotion: {what} must be numbers, got {value!r}")
    return float(value)
