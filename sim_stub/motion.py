"""A stand-in for NAOqi's ALMotion, faithful enough to develop and test against.

What it does like ALMotion: joint and chain names, ``setAngles`` (non-blocking:
joints move toward their targets, advanced in control cycles like ALMotion's
50 Hz loop, with one of the motion profiles of :mod:`sim_stub.profiles`:
``linear`` (each joint at ``fractionMaxSpeed`` x its maximum velocity, starting
and stopping at once), ``smooth`` (continuous velocity, that peak speed, the
joint's limit acceleration; a retarget overshoots before it turns) or
``synchronised`` (smooth, the joints of one command arriving together)),
``angleInterpolationWithSpeed`` (blocking), ``getAngles`` (commanded or
sensed), ``getLimits``,
``getPosition`` and ``getTransform`` of the arm effectors (hand pose) and of the ``Torso`` in
FRAME_TORSO, FRAME_WORLD and FRAME_ROBOT (a standing robot: :mod:`sim_stub.frames`), the hands
(``LHand``/``RHand``, 0 closed .. 1 open, moved by ``setAngles`` at their speed), stiffness (a joint with
stiffness 0 does not move), ``wakeUp`` (standing up from ``rest``) and ``rest``. It refuses what ALMotion
refuses: unknown names, lengths that do not match, values that are not numbers.

What it adds, for tests: every command is recorded, and a command with a
value outside the joint's limits or not finite is flagged as a violation (and
not executed beyond the limit), so a test can prove a client never sends one.
``setHang(method, seconds)`` makes a method hang before it answers, as a
stuck ALMotion would (the stub serves one call at a time, so its other
callers wait too); ``setHang(method, 0)`` ends the hang.

Arm collision protection like ALMotion's (``setCollisionProtectionEnabled``,
on by default; ``isCollision``): each control cycle an arm moves, a step that
would bring it within the protection's margin of the body or of the other arm
is bent to the nearest safe step (:mod:`sim_stub.protection`), so the arm
slides along and may end elsewhere; an arm the protection holds still for a
few cycles stops there (its command becomes where it is). Every bending is
recorded (``getCollisionStops``) for the tests to count.

Optional sag (``sag``, radians): the sensed angle of a still, stiff joint is
off its command by a fixed amount of up to ``sag``, as Smart Stiffness lets a
joint sag under load, so sensed angles need not come within 1 mrad of the
command.

``setTorsoTransform(frame, values)`` moves the torso in FRAME_WORLD or
FRAME_ROBOT (stub only), for frame conversion tests.

What it does not do: dynamics, balance, walking, Cartesian control.
"""

from __future__ import annotations

import math
import numbers
import random
import threading
import time
import zlib
from typing import Any, Callable

try:  # qi publishes every method of a registered object; keep helpers private
    from qi import nobind as _private
except ImportError:  # in-process use without libqi

    def _private(f):
        return f


import numpy as np

from nao_ik.kinematics.hand_pose import forward_pose, pose6d_to_transform, transform_to_pose6d
from nao_ik.model.arm import arm_model

from . import protection
from .body import CHAINS, JOINTS, REST, STAND
from .breath import Breath
from .frames import TorsoFrames
from .profiles import (
    DEFAULT_CYCLE,
    Move,
    check_cycle,
    check_profile,
    default_profile,
    limit_acceleration,
    linear_step,
    smooth_step,
    synchronise,
)

CYCLE = DEFAULT_CYCLE  # ALMotion's control period on NAO V5, seconds (a stub's own: its ``cycle``)
HANGABLE = ("setAngles", "getAngles", "getLimits", "getStiffnesses")
#: An arm whose motion the protection bends and whose moving joints come no closer to their targets than
#: HELD_PROGRESS (radians, summed) in HELD_CYCLES cycles stops where it is: its command becomes its posture.
HELD_PROGRESS = 0.005
HELD_CYCLES = 10
#: A record of bending ends after that many cycles the protection let through.
QUIET_CYCLES = 10
#: The most ``sag`` may be, radians.
MAX_SAG = 0.05
#: The joints that sag (the hands are not angles).
SAGGING = tuple(j for j in JOINTS if not j.endswith("Hand"))
#: The fraction of the joints' maximum speed at which wakeUp stands the robot up.
WAKE_SPEED = 0.3
#: Longest simulated wait of a blocking interpolation, seconds.
LONGEST_MOVE = 60.0


class StubMotion:
    """ALMotion stand-in. Thread-safe; register it on a qi session as ``ALMotion``.

    Args:
        clock: monotonic time source (seconds); tests may pass a fake one.
        sleep: how blocking calls wait; pairs with ``clock``.
        limits: joint name -> (lower, upper) replacing the documented limits,
            to simulate a robot that reports other ones.
        profile: ``"linear"``, ``"smooth"`` or ``"synchronised"`` (:mod:`sim_stub.profiles`); default:
            the environment variable NAO_IK_STUB_PROFILE if set, else
            :data:`~sim_stub.profiles.DEFAULT_PROFILE`.
        cycle: the control cycle, seconds (ALMotion: 0.02 on NAO V5; 0.012 or 0.024 on NAO6).
        sag: how far the sensed angle of a still, stiff joint may be off its command, radians (0: none;
            a few mrad is what Smart Stiffness gives).
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        limits: dict[str, tuple[float, float]] | None = None,
        profile: str | None = None,
        cycle: float = CYCLE,
        sag: float = 0.0,
    ):
        self._joints = dict(JOINTS)
        for name, (lo, hi) in (limits or {}).items():
            self._joints[name] = self._joints[name]._replace(lower=float(lo), upper=float(hi))
        self._lock = threading.RLock()
        # Kept in a tuple: qi would publish a callable attribute as a method.
        self._timing = (clock, sleep)
        self._profile = default_profile() if profile is None else check_profile(profile)
        self._cycle = CYCLE
        self._sag: dict[str, float] = {}
        self._configure(profile, cycle, sag)
        start = {n: min(max(v, self._joints[n].lower), self._joints[n].upper) for n, v in STAND.items()}
        self._commanded = dict(start)
        self._sensed = dict(start)  # where the joints are (the sensors read this, plus any sag)
        self._stiffness = {name: 0.0 for name in JOINTS}
        self._moves: dict[str, Move] = {}
        self._time = clock()
        self._record: list[dict] = []
        self._violations: list[dict] = []
        self._hangs: dict[str, float] = {}
        self._unhang = threading.Event()
        # Arm collision protection, like ALMotion's (on by default): see sim_stub/protection.py.
        self._protect = {"LArm": True, "RArm": True}
        self._collisions: list[dict] = []
        self._bending: dict[str, dict | None] = {"LArm": None, "RArm": None}  # the open record, per arm
        self._progress: dict[str, list] = {}  # arm -> [least distance to go, cycles since, cycles let through]
        self._frames = TorsoFrames()
        self._breath = Breath()  # ALMotion's breathing (off, as with ALAutonomousLife disabled): sim_stub/breath.py

    @_private
    def _configure(self, profile: str | None = None, cycle: float | None = None, sag: float | None = None) -> None:
        """Set the motion profile, control cycle or sag (None: keep); the moves under way keep theirs."""
        with self._lock:
            if profile is not None:
                self._profile = check_profile(profile)
            if cycle is not None:
                self._cycle = check_cycle(cycle)
            if sag is not None:
                if isinstance(sag, bool) or not isinstance(sag, (int, float)) or not 0.0 <= sag <= MAX_SAG:
                    raise ValueError(f"sag must be 0 to {MAX_SAG} radians, got {sag!r}")
                self._sag = {j: _sag_offset(j, float(sag)) for j in SAGGING} if sag else {}

    @property
    def profile(self) -> str:
        """The motion profile (``linear``, ``smooth`` or ``synchronised``)."""
        return self._profile

    @property
    def cycle(self) -> float:
        """The control cycle, seconds."""
        return self._cycle

    # ------------------------------------------------------------ joint motion

    def setAngles(self, names: Any, angles: Any, fractionMaxSpeed: Any) -> None:
        """Start moving joints toward angles; returns at once."""
        self._hang_point("setAngles")
        with self._lock:
            joints, values, speed = self._command("setAngles", names, angles, fractionMaxSpeed)
            self._start(joints, values, speed, self._profile)

    def angleInterpolationWithSpeed(self, names: Any, targetAngles: Any, maxSpeedFraction: Any) -> None:
        """Move joints to angles and return when they are there (the joints arrive together, but with the
        linear profile)."""
        with self._lock:
            joints, values, speed = self._command("angleInterpolationWithSpeed", names, targetAngles, maxSpeedFraction)
        self._interpolate(joints, values, speed)

    @_private
    def _interpolate(self, joints: list, values: list, speed: float) -> None:
        """Move joints to angles, the joints arriving together (linear with the linear profile), and return when
        they are there."""
        with self._lock:
            profile = "linear" if self._profile == "linear" else "synchronised"
            self._start(joints, values, speed, profile)
            duration = self._remaining(joints)
            cycle = self._cycle
        self._timing[1](duration + cycle)
        waited = duration + cycle
        while True:  # longer if the protection slowed an arm down
            with self._lock:
                self._advance()
                if not any(j in self._moves for j in joints) or waited > 2.0 * duration + 1.0:
                    return
            self._timing[1](cycle)
            waited += cycle

    def getAngles(self, names: Any, useSensors: Any) -> list[float]:
        """Sensed (``useSensors`` True) or commanded (False) angles.

        Commanded as ALMotion answers it: this cycle's command to the actuator (ALMemory's actuator value),
        not the final target of a running ``setAngles`` (ALMotion tells no such target): a moving joint's
        command is where its interpolation is this cycle, a still joint's its last target; a joint whose
        motors are off is commanded where it is.
        """
        self._hang_point("getAngles")
        with self._lock:
            self._advance()
            joints = self._expand(names)
            if bool(useSensors):
                return [self._reading(j) for j in joints]
            return [self._cycle_command(j) for j in joints]

    def getTargets(self, names: Any) -> list[float]:
        """The final target of each joint's last command, where it is heading (stub only: ALMotion does not tell
        it); a joint whose motors are off: where it is."""
        with self._lock:
            self._advance()
            return [float(self._commanded[j]) for j in self._expand(names)]

    def getLimits(self, name: Any) -> list[list[float]]:
        """``[minAngle, maxAngle, maxVelocity, maxTorque]`` per joint."""
        self._hang_point("getLimits")
        return [[j.lower, j.upper, j.max_velocity, j.max_torque] for j in (self._joints[n] for n in self._expand(name))]

    def getMotionCycleTime(self) -> int:
        """The control cycle, milliseconds."""
        return int(round(self._cycle * 1000.0))

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
        """Motors on; where a motor was off (after ``rest()``: crouching), stand up, every joint to the standing
        posture together, returning once there, as ALMotion's wakeUp (a motion no client's setAngles sent)."""
        with self._lock:
            self._advance()
            self._record.append(self._entry("wakeUp", [], [], None))
            limp = not all(v > 0.0 for v in self._stiffness.values())
            for j in self._stiffness:
                self._stiffness[j] = 1.0
            away = [j for j, q in STAND.items() if limp and self._sensed[j] != q]
        if away:
            self._interpolate(away, [STAND[j] for j in away], WAKE_SPEED)

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

    def setBreathEnabled(self, pChain: Any, pIsEnabled: Any) -> None:  # noqa: N803 (ALMotion's names)
        """Breathing on or off for "Body", "Arms", "LArm", "RArm", "Legs" or "Head" (:mod:`sim_stub.breath`)."""
        with self._lock:
            self._advance()
            self._breath.enable(pChain, bool(pIsEnabled), self._time)

    def getBreathEnabled(self, pChain: Any) -> bool:  # noqa: N803 (ALMotion's names)
        """Whether the chain breathes."""
        with self._lock:
            return self._breath.enabled(pChain)

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
                if v == 0.0:  # limp: it stops, and is commanded where it is
                    self._moves.pop(j, None)
                    self._commanded[j] = self._sensed[j]

    def getStiffnesses(self, names: Any) -> list[float]:
        """Stiffness per joint."""
        self._hang_point("getStiffnesses")
        with self._lock:
            return [self._stiffness[j] for j in self._expand(names)]

    # -------------------------------------------------- collision protection

    def setCollisionProtectionEnabled(self, pChainName: Any, pEnable: Any) -> bool:
        """Arm collision protection on or off for ``"Arms"``, ``"LArm"`` or ``"RArm"`` (on by default).

        While on, each control cycle an arm moves, a step that would bring it within the protection's
        margin of the body or the other arm is bent to the nearest safe one (:mod:`sim_stub.protection`),
        and the bending is recorded (:meth:`getCollisionStops`).
        """
        arms = self._protected_chains(pChainName, ("Arms", "LArm", "RArm"))
        if not isinstance(pEnable, bool):
            raise RuntimeError(f"ALMotion: pEnable must be a bool, got {pEnable!r}")
        with self._lock:
            self._advance()
            for a in arms:
                self._protect[a] = pEnable
        return True

    def getCollisionProtectionEnabled(self, pChainName: Any) -> bool:
        """Whether the arm collision protection is on for ``"LArm"`` or ``"RArm"`` (ALMotion takes no "Arms" here)."""
        (arm,) = self._protected_chains(pChainName, ("LArm", "RArm"))
        with self._lock:
            return self._protect[arm]

    def isCollision(self, pChainName: Any) -> str:
        """``"none"``, ``"near"`` or ``"collision"`` for ``"LArm"`` or ``"RArm"``, from where the arm is (and the
        other arm, the head and the legs).

        "collision": the protection is bending the arm's motion, or the arm is within its hold distance of
        the body or the other arm; "near": within 30 mm beyond the protection's margin; else "none"
        (:func:`sim_stub.protection.state`).
        """
        (arm,) = self._protected_chains(pChainName, ("LArm", "RArm"))
        with self._lock:
            self._advance()
            answer, _, _ = protection.state(arm, self._arm(arm), self._arm(_other(arm)), self._sensed)
            return "collision" if self._bending[arm] is not None else answer

    def getCollisionStops(self) -> list[dict]:
        """Each time the protection bent an arm's motion, oldest first (stub only).

        One record for a run of consecutive cycles bent for the same arm and part: ``time`` (the first
        cycle), ``arm``, ``part`` (a body part or "other arm"), ``angles`` (the arm's five angles where it
        first bent), ``cycles`` (how many cycles in a row), ``until`` (the last cycle's time), ``end`` (the
        angles after it) and ``held`` (True if the arm was then stopped there).
        """
        with self._lock:
            self._advance()
            return [dict(c) for c in self._collisions]

    @_private
    @staticmethod
    def _protected_chains(name: Any, accepted: tuple[str, ...]) -> tuple[str, ...]:
        chains = {"Arms": ("LArm", "RArm"), "LArm": ("LArm",), "RArm": ("RArm",)}
        if name not in accepted:
            raise RuntimeError(
                f"ALMotion: collision protection chain must be {', '.join(accepted[:-1])} or {accepted[-1]}, "
                f"got {name!r}"
            )
        return chains[name]

    @_private
    def _arm(self, arm: str) -> list[float]:
        return [self._sensed[j] for j in CHAINS[arm][:5]]

    @_private
    def _guarded(self) -> list[str]:
        """The protected arms with a joint moving."""
        return [a for a, on in self._protect.items() if on and any(j in self._moves for j in CHAINS[a][:5])]

    @_private
    def _protect_arm(self, arm: str, proposed: dict[str, tuple[float, bool]], now: float) -> None:
        """Let the protection bend this cycle's step of one arm (the head and legs where they are now: the cycle's
        other joints moved first); apply it; record it; hold an arm it stalls."""
        names = CHAINS[arm][:5]
        start = self._arm(arm)
        step = [proposed[j][0] - q if j in proposed else 0.0 for j, q in zip(names, start)]
        lower = [self._joints[j].lower for j in names]
        upper = [self._joints[j].upper for j in names]
        free = [j in proposed for j in names]
        taken, part = protection.bend(arm, start, step, self._arm(_other(arm)), lower, upper, free, self._sensed)
        record = self._bending[arm]
        if part is None:
            for j in names:
                if j in proposed:
                    self._apply(j, *proposed[j])
            if record is None:
                return
            self._progress[arm][2] += 1
            if self._progress[arm][2] > QUIET_CYCLES:
                self._end_bending(arm)
                return
        else:
            for j, q, dq in zip(names, start, taken):
                self._sensed[j] = float(q + dq)
                move = self._moves.get(j)
                if move is not None:
                    move.velocity = float(dq) / self._cycle if self._profile != "linear" else 0.0
            if record is None or record["part"] != part:
                record = {"time": now, "arm": arm, "part": part, "angles": [float(v) for v in start], "cycles": 0}
                self._collisions.append(record)
                self._bending[arm] = record
                self._progress[arm] = [math.inf, 0, 0]
            record.update(cycles=record["cycles"] + 1, until=now, end=self._arm(arm), held=False)
            self._progress[arm][2] = 0
        progress = self._progress[arm]
        to_go = sum(abs(self._moves[j].target - self._sensed[j]) for j in names if j in self._moves)
        if to_go < progress[0] - HELD_PROGRESS:
            progress[0], progress[1] = to_go, 0
        else:
            progress[1] += 1
        if progress[1] >= HELD_CYCLES:  # the protection holds the arm: it stops where it is
            for j in names:
                self._moves.pop(j, None)
                self._commanded[j] = self._sensed[j]
            record["held"] = True
            record["end"] = self._arm(arm)
            self._end_bending(arm)

    @_private
    def _end_bending(self, arm: str) -> None:
        self._bending[arm] = None
        self._progress.pop(arm, None)

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
        """Forget the recorded commands, violations and protection records (stub only)."""
        with self._lock:
            self._record.clear()
            self._violations.clear()
            self._collisions.clear()
            self._bending = {"LArm": None, "RArm": None}
            self._progress.clear()

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
    def _cycle_command(self, joint: str) -> float:
        """This cycle's command to the joint (:meth:`getAngles`): its interpolation's posture while it moves."""
        return float(self._sensed[joint] if joint in self._moves else self._commanded[joint])

    @_private
    def _reading(self, joint: str) -> float:
        """What the joint's sensor reads: where it is, plus its sag if it is still and stiff."""
        q = self._sensed[joint]
        sag = self._sag.get(joint)
        if sag and joint not in self._moves and self._stiffness[joint] > 0.0:
            spec = self._joints[joint]
            q = min(max(q + sag, spec.lower), spec.upper)
        return float(q)

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
    def _start(self, joints: list, values: list, speed: float, profile: str) -> None:
        targets = {}
        for j, v in zip(joints, values):
            spec = self._joints[j]
            if not math.isfinite(v):
                continue  # a joint is not sent to NaN
            if not self._stiffness[j] > 0.0:
                continue  # a joint whose motors are off is not moved, and stays commanded where it is
            target = min(max(v, spec.lower), spec.upper)
            self._commanded[j] = target
            targets[j] = target
        peaks = {j: speed * self._joints[j].max_velocity for j in targets}
        accels = {j: limit_acceleration(self._joints[j].max_velocity) for j in targets}
        plan = {j: (peaks[j], accels[j]) for j in targets}
        if profile == "synchronised":
            order = list(targets)
            distances = [abs(targets[j] - self._sensed[j]) for j in order]
            plan = dict(zip(order, synchronise(distances, [peaks[j] for j in order], [accels[j] for j in order])))
        for j, target in targets.items():
            old = self._moves.get(j)
            velocity = old.velocity if old is not None and profile != "linear" else 0.0
            peak, accel = plan[j]
            self._moves[j] = Move(target, peak, accel if profile != "linear" else 0.0, accels[j], velocity)

    @_private
    def _remaining(self, joints: list) -> float:
        """Seconds until the joints arrive (the protection aside)."""
        if self._profile == "linear":
            moving = [(j, self._moves[j]) for j in joints if j in self._moves]
            return max((abs(m.target - self._sensed[j]) / m.peak for j, m in moving), default=0.0)
        moves = {
            j: (Move(m.target, m.peak, m.accel, m.brake, m.velocity), self._sensed[j])
            for j, m in self._moves.items()
            if j in joints
        }
        t = 0.0
        while moves and t < LONGEST_MOVE:
            t += self._cycle
            for j, (m, q) in list(moves.items()):
                q, arrived = smooth_step(m, q, self._cycle)
                if arrived:
                    del moves[j]
                else:
                    moves[j] = (m, q)
        return t

    @_private
    def _advance(self) -> None:
        now = self._timing[0]()
        cycles = int((now - self._time) / self._cycle)
        if cycles <= 0:
            return
        start, self._time = self._time, self._time + cycles * self._cycle
        if self._moves:
            if self._profile == "linear" and not self._guarded():  # no cycle to check: all at once, as ever
                self._linear(cycles * self._cycle)
            else:
                for k in range(1, cycles + 1):
                    if not self._moves:
                        break
                    self._tick(start + k * self._cycle)
        busy = lambda j: j in self._moves or not self._stiffness[j] > 0.0  # noqa: E731
        self._breath.step(self._time, self._sensed, self._commanded, busy)

    @_private
    def _linear(self, dt: float) -> None:
        """Move every joint toward its target at constant speed for dt seconds."""
        for j, move in list(self._moves.items()):
            self._apply(j, *linear_step(move, self._sensed[j], dt))

    @_private
    def _apply(self, joint: str, position: float, arrived: bool) -> None:
        self._sensed[joint] = position
        if arrived:
            self._moves.pop(joint, None)

    @_private
    def _tick(self, now: float) -> None:
        """One control cycle: every moving joint's step by the profile, each protected arm's bent if need be."""
        step = linear_step if self._profile == "linear" else smooth_step
        proposed = {j: step(m, self._sensed[j], self._cycle) for j, m in list(self._moves.items())}
        guarded = self._guarded()
        held = {j for a in guarded for j in CHAINS[a][:5]}
        for j, (q, arrived) in proposed.items():
            if j not in held:
                self._apply(j, q, arrived)
        for arm in ("LArm", "RArm"):
            if arm in guarded:
                self._protect_arm(arm, proposed, now)
            else:
                self._end_bending(arm)

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


def _other(arm: str) -> str:
    return "RArm" if arm == "LArm" else "LArm"


def _sag_offset(joint: str, sag: float) -> float:
    """A joint's fixed sag: between sag / 2 and sag, its sign fixed by the joint's name (reproducible)."""
    rng = random.Random(zlib.crc32(joint.encode()))
    return rng.choice((-1.0, 1.0)) * rng.uniform(0.5, 1.0) * sag
