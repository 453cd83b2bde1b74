"""``NaoArmIK``: the qi service that moves NAO's arms to Cartesian targets.

Register it on a session connected to a robot (or to ``nao-ik sim``)::

    session.registerService("NaoArmIK", NaoArmIK(session))

and call it from anywhere on that robot's service directory::

    ik = session.service("NaoArmIK")
    ik.reachTo(0.15, 0.10, 0.05, "analytic")

Guarantees: every argument is checked before anything else happens; the
angles sent to ``ALMotion.setAngles`` are finite and inside the limits that the
connected robot reported with ``ALMotion.getLimits``; an error is raised to
the caller (with a message that names the problem) instead of a command when
anything is wrong, and the service stays up for the next call.

Concurrency: calls are served one at a time (a lock around read-solve-send),
so two clients cannot interleave their commands to the same arm.

Motors: the service does not switch motors on by itself. If an arm's
stiffness is 0, ``reachTo`` raises an error saying so; call
``ALMotion.wakeUp()`` first. ``computeAngles`` works either way.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import qi

from . import validate
from .all_solutions import solve_all
from .api import METHODS, resolve_method, solve
from .model import ARMS, ArmModel, arm_model
from .pose import POSE_METHODS, POSITION_MASK, check_axis_mask, check_position6d, forward_pose, solve_pose
from .track import track_path, validate_points

_private = qi.nobind  # helpers are not published over qi

LOG_CATEGORY = "nao_ik.NaoArmIK"
DEFAULT_METHOD = "analytic"
DEFAULT_SPEED = 0.2
CYCLE = 0.02  # ALMotion's control period, seconds


class NaoArmIK:
    """The service object.

    Args:
        session: a qi session connected to the robot's service directory.
        speed: default ``fractionMaxSpeed`` for ``setAngles``.
    """

    def __init__(self, session: Any, speed: float = DEFAULT_SPEED):
        self._session = session
        self._speed = validate.speed(speed)
        self._lock = threading.Lock()
        self._motion: Any = None
        self._models: dict[str, ArmModel] = {}
        self._log = qi.Logger(LOG_CATEGORY)

    # ------------------------------------------------------------ qi methods

    @qi.bind(qi.Map(qi.String, qi.Dynamic), [qi.Double, qi.Double, qi.Double, qi.String])
    def reachTo(self, x: Any, y: Any, z: Any, method: Any) -> dict:
        """Move the arm on the target's side (y >= 0: LArm) to (x, y, z), FRAME_TORSO metres."""
        target = validate.target([x, y, z])
        return self._call("reachTo", lambda: self._reach(_side(target), target, method, move=True))

    @qi.bind(qi.Map(qi.String, qi.Dynamic), [qi.String, qi.Double, qi.Double, qi.Double, qi.String])
    def reachToWithArm(self, arm: Any, x: Any, y: Any, z: Any, method: Any) -> dict:
        """Move the named arm ("LArm" or "RArm") to (x, y, z)."""
        arm = validate.arm(arm)
        target = validate.target([x, y, z])
        return self._call("reachToWithArm", lambda: self._reach(arm, target, method, move=True))

    @qi.bind(qi.Map(qi.String, qi.Dynamic), [qi.String, qi.Double, qi.Double, qi.Double, qi.String])
    def computeAngles(self, arm: Any, x: Any, y: Any, z: Any, method: Any) -> dict:
        """The answer ``reachToWithArm`` would send, without moving the robot."""
        arm = validate.arm(arm)
        target = validate.target([x, y, z])
        return self._call("computeAngles", lambda: self._reach(arm, target, method, move=False))

    @qi.bind(qi.Map(qi.String, qi.Dynamic), [qi.String, qi.Double, qi.Double, qi.Double])
    def computeAllSolutions(self, arm: Any, x: Any, y: Any, z: Any) -> dict:
        """Every configuration that reaches (x, y, z), without moving the robot.

        Returns a map: ``arm``, ``target``, ``reachable``, ``names``,
        ``intervals`` (``[branch, start, end]`` allowed swivel intervals,
        radians) and ``solutions`` (maps: ``branch``, ``swivel``, ``angles``,
        ``error``) sampled every 10 degrees across the intervals and at their
        ends, for the robot's limits and the arm's current WristYaw.
        """
        arm = validate.arm(arm)
        target = validate.target([x, y, z])
        return self._call("computeAllSolutions", lambda: self._all(arm, target))

    @qi.bind(qi.Map(qi.String, qi.Dynamic), [qi.String, qi.Dynamic, qi.String])
    def trackPath(self, arm: Any, points: Any, method: Any) -> dict:
        """Follow a Cartesian path with the named arm: one ``setAngles`` per point, at ALMotion's 50 Hz.

        ``points`` is a list of [x, y, z] (FRAME_TORSO metres, at most 2000).
        The angles follow Oyama & Tachi's tracking control (see
        :mod:`nao_ik.track`) from the arm's current posture; all of them are
        computed and checked before the first command is sent. Returns a map:
        ``arm``, ``method``, ``names``, ``angles`` (per point), ``errors``
        (m, per point), ``completed``, ``rmsError``, ``seconds``.
        """
        arm = validate.arm(arm)
        path = validate_points(points)
        return self._call("trackPath", lambda: self._track(arm, path, method))

    @qi.bind(qi.Map(qi.String, qi.Dynamic), [qi.String, qi.Dynamic, qi.Dynamic, qi.String])
    def reachToPose(self, arm: Any, position6D: Any, axisMask: Any, method: Any) -> dict:
        """Give the named arm's hand a pose: ``position6D`` [x, y, z, wx, wy, wz] (FRAME_TORSO, Rz*Ry*Rx).

        ``axisMask`` (1..63: X 1, Y 2, Z 4, WX 8, WY 16, WZ 32) selects the
        components that count, as in ALMotion.setPositions; ``method`` one of
        the pose methods (any position method with axisMask 7), "" the
        default. Answers like ``reachToWithArm`` plus ``position6D``,
        ``axisMask``, ``positionError`` (m) and ``orientationError`` (rad).
        """
        request = _pose_request(arm, position6D, axisMask, method)
        return self._call("reachToPose", lambda: self._reach_pose(*request, move=True))

    @qi.bind(qi.Map(qi.String, qi.Dynamic), [qi.String, qi.Dynamic, qi.Dynamic, qi.String])
    def computePose(self, arm: Any, position6D: Any, axisMask: Any, method: Any) -> dict:
        """The answer ``reachToPose`` would send, without moving the robot."""
        request = _pose_request(arm, position6D, axisMask, method)
        return self._call("computePose", lambda: self._reach_pose(*request, move=False))

    @qi.bind(qi.List(qi.Double), [qi.String])
    def getPose(self, arm: Any) -> list:
        """The named arm's hand pose [x, y, z, wx, wy, wz] (FRAME_TORSO) from the robot's sensed angles."""
        arm = validate.arm(arm)

        def work() -> list:
            _, model, current = self._arm_state(arm, motors=False)
            return [float(v) for v in forward_pose(current, model)]

        return self._call("getPose", work)

    @qi.bind(qi.List(qi.String), [])
    def getMethods(self) -> list:
        """The IK methods this service knows."""
        return list(METHODS)

    @qi.bind(qi.Void, [qi.Double])
    def setSpeed(self, fraction: Any) -> None:
        """Default fraction of the joints' maximum speed for motions, in (0, 1]."""
        self._speed = validate.speed(fraction)

    @qi.bind(qi.Double, [])
    def getSpeed(self) -> float:
        """The current fraction of maximum speed."""
        return self._speed

    # ------------------------------------------------------------- internals

    @_private
    def _call(self, name: str, work: Any) -> dict:
        with self._lock:
            try:
                return work()
            except ValueError as e:
                self._log.warning(f"{name}: refused: {e}")
                raise
            except Exception as e:
                self._log.error(f"{name}: failed: {type(e).__name__}: {e}")
                raise

    @_private
    def _reach(self, arm: str, target: tuple, method: Any, move: bool) -> dict:
        name = resolve_method(DEFAULT_METHOD if method == "" else method)
        motion, model, start = self._arm_state(arm, motors=move)
        names = list(model.names)
        t0 = time.perf_counter()
        sol = solve(target, model, name, initial=start)
        solve_ms = (time.perf_counter() - t0) * 1e3
        angles = [float(a) for a in sol.angles]
        # Last line of defence: nothing non-finite or out of limits is sent.
        if not all(math.isfinite(a) for a in angles):
            raise RuntimeError(f"{name} produced a non-finite angle for {target}; nothing sent")
        safe = list(model.clamp(angles))
        clamped = [n for n, a, s in zip(names, angles, safe) if a != s]
        change = max(abs(a - b) for a, b in zip(safe, start))
        # setAngles moves each joint at fractionMaxSpeed of its own maximum velocity.
        seconds = max(abs(a - b) / j.max_velocity for a, b, j in zip(safe, start, model.joints)) / self._speed
        if move:
            self._motion_call(motion, "setAngles", names, safe, self._speed)
        result = {
            "arm": arm,
            "method": name,
            "target": list(target),
            "names": names,
            "angles": safe,
            "reached": bool(sol.reached),
            "error": float(sol.error),
            "iterations": int(sol.iterations),
            "solveTimeMs": float(solve_ms),
            "clamped": clamped,
            "moved": bool(move),
            "jointChange": float(change),
            "moveSeconds": float(seconds),
        }
        self._log.info(
            f"{'reach' if move else 'compute'} {arm} {name} -> ({target[0]:.4f}, {target[1]:.4f}, {target[2]:.4f}) "
            f"reached={sol.reached} error={sol.error * 1e3:.3f}mm it={sol.iterations} {solve_ms:.2f}ms"
        )
        return result

    @_private
    def _reach_pose(self, arm: str, pose: tuple, mask: int, method: str, move: bool) -> dict:
        motion, model, start = self._arm_state(arm, motors=move)
        names = list(model.names)
        t0 = time.perf_counter()
        sol = solve_pose(pose, model, mask, initial=start, method=method)
        solve_ms = (time.perf_counter() - t0) * 1e3
        angles = [float(a) for a in sol.angles]
        # Last line of defence, as in _reach: nothing non-finite or out of limits is sent.
        if not all(math.isfinite(a) for a in angles):
            raise RuntimeError(f"{method} produced a non-finite angle for {list(pose)}; nothing sent")
        safe = list(model.clamp(angles))
        if move:
            self._motion_call(motion, "setAngles", names, safe, self._speed)
        seconds = max(abs(a - b) / j.max_velocity for a, b, j in zip(safe, start, model.joints)) / self._speed
        self._log.info(
            f"{'reach' if move else 'compute'} pose {arm} {sol.method} mask={mask} reached={sol.reached} "
            f"position={sol.position_error * 1e3:.3f}mm orientation={math.degrees(sol.rotation_error):.3f}deg "
            f"{solve_ms:.2f}ms"
        )
        return {
            "arm": arm,
            "method": sol.method,
            "position6D": list(pose),
            "axisMask": mask,
            "names": names,
            "angles": safe,
            "reached": bool(sol.reached),
            "error": float(sol.error),
            "positionError": float(sol.position_error),
            "orientationError": float(sol.rotation_error),
            "iterations": int(sol.iterations),
            "solveTimeMs": float(solve_ms),
            "clamped": [n for n, a, b in zip(names, angles, safe) if a != b],
            "moved": bool(move),
            "jointChange": float(max(abs(a - b) for a, b in zip(safe, start))),
            "moveSeconds": float(seconds),
        }

    @_private
    def _track(self, arm: str, path: Any, method: Any) -> dict:
        name = resolve_method(DEFAULT_METHOD if method == "" else method)
        motion, model, start = self._arm_state(arm, motors=True)
        names = list(model.names)
        track = track_path(path, model, name, initial=start)
        safe = [list(model.clamp(q)) for q in track.angles.tolist()]
        if not all(math.isfinite(a) for q in safe for a in q):
            raise RuntimeError(f"{name} produced a non-finite angle on the path; nothing sent")
        t0 = time.monotonic()
        for k, q in enumerate(safe):
            # One command per ALMotion cycle (20 ms).
            delay = t0 + k * CYCLE - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self._motion_call(motion, "setAngles", names, q, self._speed)
        errors = [float(e) for e in track.errors]
        return {
            "arm": arm,
            "method": name,
            "names": names,
            "angles": safe,
            "errors": errors,
            "completed": bool(track.completed),
            "rmsError": float(math.sqrt(sum(e * e for e in errors) / len(errors))),
            "seconds": float(time.monotonic() - t0),
        }

    @_private
    def _arm_state(self, arm: str, motors: bool) -> tuple:
        """ALMotion, the arm's model with the robot's limits, and its sensed angles (checked, clamped).

        With ``motors``, first refuse an arm whose motors are off.
        """
        motion = self._get_motion()
        model = self._model(arm, motion)
        names = list(model.names)
        if motors:
            self._check_motors(motion, arm, names)
        current = validate.vector(self._motion_call(motion, "getAngles", names, True), 5, f"{arm} angles from ALMotion")
        return motion, model, model.clamp(current)

    @_private
    def _check_motors(self, motion: Any, arm: str, names: list) -> None:
        stiff = self._motion_call(motion, "getStiffnesses", names)
        off = [n for n, s in zip(names, stiff) if not s > 0.0]
        if off:
            raise RuntimeError(
                f"{arm} motors are off (stiffness 0 on {', '.join(off)}): "
                "call ALMotion.wakeUp() or setStiffnesses first"
            )

    @_private
    def _all(self, arm: str, target: tuple) -> dict:
        _, model, current = self._arm_state(arm, motors=False)
        found = solve_all(target, model, wrist=current[4])
        return {
            "arm": arm,
            "target": list(target),
            "reachable": found.reachable,
            "names": list(model.names),
            "intervals": [[b, lo, hi] for b, lo, hi in found.intervals],
            "solutions": [
                {"branch": s.branch, "swivel": s.swivel, "angles": list(s.angles), "error": s.error}
                for s in found.solutions
            ],
        }

    @_private
    def _get_motion(self) -> Any:
        if self._motion is None:
            try:
                self._motion = self._session.service("ALMotion")
            except Exception as e:
                raise RuntimeError(f"ALMotion is not reachable on the robot: {e}") from None
            self._models.clear()  # a new ALMotion may report other limits
        return self._motion

    @_private
    def _motion_call(self, motion: Any, method: str, *args: Any) -> Any:
        try:
            return getattr(motion, method)(*args)
        except Exception as e:
            # The proxy may be dead (ALMotion restarted): fetch it again next call.
            self._motion = None
            raise RuntimeError(f"ALMotion.{method} failed: {_first_line(e)}") from None

    @_private
    def _model(self, arm: str, motion: Any) -> ArmModel:
        model = self._models.get(arm)
        if model is None:
            base = arm_model(arm)
            reported = self._motion_call(motion, "getLimits", list(base.names))
            if len(reported) != len(base.names):
                raise RuntimeError(f"ALMotion.getLimits returned {len(reported)} joints for {arm}, expected 5")
            model = base.with_limits(dict(zip(base.names, reported)))
            self._models[arm] = model
        return model


def _side(target: tuple) -> str:
    return ARMS[0] if target[1] >= 0.0 else ARMS[1]


def _pose_request(arm: Any, position6d: Any, mask: Any, method: Any) -> tuple:
    """(arm, position6D, axisMask, method) of a pose call, validated; "" is the default method."""
    arm = validate.arm(arm)
    pose = check_position6d(position6d)
    mask = check_axis_mask(mask)
    name = DEFAULT_METHOD if method == "" else method
    if mask == POSITION_MASK:
        name = resolve_method(name)
    else:
        name = validate.choice(name, POSE_METHODS, "pose method (axisMask 7 takes any position method)")
    return arm, pose, mask, name


def _first_line(e: Exception) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def register(session: Any, speed: float = DEFAULT_SPEED) -> tuple[NaoArmIK, int]:
    """Create the service and register it as ``NaoArmIK`` on the session.

    Returns:
        The service object and its service id.
    """
    service = NaoArmIK(session, speed)
    return service, session.registerService("NaoArmIK", service)
