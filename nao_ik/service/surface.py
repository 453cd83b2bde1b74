"""``NaoArmIK``: the qi service that moves NAO's arms to Cartesian targets.

Register it on a session connected to a robot (or to ``nao-ik sim``)::

    session.registerService("NaoArmIK", NaoArmIK(session))

and call it from anywhere on that robot's service directory::

    ik = session.service("NaoArmIK")
    ik.reachTo(0.15, 0.10, 0.05, "analytic")

Guarantees: every argument is checked (by :mod:`nao_ik.service.args`, on the
values as the caller sent them) before anything else happens; the angles sent
to ``ALMotion.setAngles`` are finite and inside the limits that the connected
robot reported with ``ALMotion.getLimits``; an error is raised to the caller
(with a message that names the problem) instead of a command when anything
is wrong, and the service stays up for the next call.

Concurrency: libqi calls the methods concurrently; the work runs on the
service's own threads. Commands to one arm come from one job at a time
(:mod:`nao_ik.service.jobs`), so two clients never interleave commands to an arm; a
reach or a new path on an arm stops the path running there (within one
20 ms cycle, or one point's computation while it is computed),
``stopPath(arm)`` stops it, and a caller that cancels its ``trackPath``
future stops it. ``computeAngles``, ``computeAllSolutions`` and the speed
and method queries never wait for a path. (libqi does not tell a service
that a caller's connection dropped: a path whose caller vanishes runs to
its end, within its budget; a caller that may vanish cancels its future
or calls ``stopPath`` first.)

Time: every ALMotion call has a budget (:data:`nao_ik.service.link.MOTION_TIMEOUT`),
every call a budget of :data:`CALL_BUDGET`; a call over its budget answers
an error and sends nothing more. A path's budget runs from its arrival
too: its first command by :data:`CALL_BUDGET` plus 0.1 s per point (the
computation is abandoned there, nothing sent), its last by that plus
:data:`CALL_BUDGET` plus 40 ms per point.

Motors: the service does not switch motors on by itself. If an arm's
stiffness is 0, ``reachTo`` raises an error saying so; call
``ALMotion.wakeUp()`` first. ``computeAngles`` works either way.
"""

from __future__ import annotations

import contextlib
import math
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator, NamedTuple

import numpy as np
import qi

from .. import validate
from ..all_solutions import solve_all
from ..api import METHODS, resolve_method, solve
from ..body import MARGIN
from ..body import OTHER_ARM as OTHER_PART
from ..both_arms import PairCheck, solve_both
from ..collision import clear_of_body, clearance, posture_body
from ..frames import FRAME_TORSO, check_transform, point_from_torso, point_to_torso, pose_to_torso
from ..grasp import CLOSED, OPEN, plan_grasp
from ..model import ARMS, ArmModel, arm_model
from ..pointing import point_at
from ..pose import POSE_METHODS, POSITION_MASK, forward_pose, solve_pose
from ..reachability import ClearCheck, is_reachable, nearest_reachable
from ..sweep import ARRIVED, Plan, pair_legs, pair_reason, plan, stream_regions, sweep_moving, sweep_region
from ..sweep import seconds as move_seconds
from ..track import track_path
from .args import decode
from .jobs import ArmChannel, Job, Stopped
from .link import MOTION_TIMEOUT, MotionLink, Unanswered, reply_limits
from .log import ServiceLog
from .methods import publish
from .sensed import SensedCache

_private = qi.nobind  # helpers are not published over qi

LOG_CATEGORY = "nao_ik.NaoArmIK"
DEFAULT_METHOD = "analytic"
DEFAULT_SPEED = 0.2
CYCLE = 0.02  # ALMotion's control period, seconds
#: Seconds a call may take, from its arrival to its answer (a path: plus PATH_POINT_BUDGET per point).
CALL_BUDGET = 10.0
#: A path's extra budget per point to compute it (before the first command) ...
PATH_COMPUTE_BUDGET = 0.1
#: ... and, from its first command, CALL_BUDGET plus this per point: its 20 ms cycle and ALMotion's answer.
PATH_POINT_BUDGET = CYCLE + 0.02
#: The other arm of each arm, and the joints that place the body model's thighs (HipPitch) and head.
OTHER_ARM = {"LArm": "RArm", "RArm": "LArm"}
BODY_JOINTS = ["LHipPitch", "RHipPitch", "HeadYaw", "HeadPitch"]
#: An arm whose joints all moved less than this (rad) over a control cycle has stopped.
STILL = 5e-4
#: Why a command waits (or is refused): the arm is still moving, and from where it is on the way the new one
#: would cross the body.
MOVING = (
    "motion: the arm is still moving toward its last command, and from where it may be on the way there "
    "the new one would cross the body"
)

#: Threads that run the calls' work; more concurrent calls wait for one (within their budget).
WORKERS = 8
#: How often (s) a thread that computes hands Python's lock to the others. Python's default, 5 ms, made a
#: ``computeAngles`` wait 0.47 s while a path was computed on the other arm (each of its many hand-overs
#: waited out a full interval); at 0.5 ms it takes 0.05 s (``tests/test_path_jobs.py`` measures it).
SWITCH_INTERVAL = 0.0005

_ANSWER = qi.Map(qi.String, qi.Dynamic)


class _Way(NamedTuple):
    """A moving arm's way (:meth:`NaoArmIK._way`): from its reading toward its last command, at that command's
    fractionMaxSpeed. A command now starts anywhere on it (:func:`nao_ik.sweep.sweep_moving`)."""

    reading: list
    aim: list
    fraction: float


# The body's checks of the reachability and both-arms methods: the one that keeps an arm's configuration
# outside the body (isReachable, nearestReachable: the body at the robot's posture, the other arm included),
# and the pair's check for reachBoth (the body, and each arm against the other's final and starting postures,
# still and moving). None: the joint limits alone.
BODY_CLEAR: ClearCheck | None = clear_of_body
PAIR_CHECK: PairCheck | None = pair_reason
#: A grasp's extra budget (five steps, each waiting until the robot got there), seconds.
GRASP_BUDGET = 30.0
#: A step has arrived when every sensed angle is within this of the command (rad); a step may take
#: twice its computed time plus this margin (s).
ARRIVAL_TOLERANCE = 1e-3
ARRIVAL_MARGIN = 1.0
#: A still arm whose sensed angles are all within SAG (rad) of its command has arrived too: under load, Smart
#: Stiffness lets a joint rest a few hundredths of a radian short of its command (the stub sags up to 0.05).
#: What follows is checked again from where the arm is (the certified check assumed ARRIVED).
SAG = 0.06
#: An arm still this many cycles farther than SAG from its command was stopped on the way: the service asks
#: ALMotion's ``isCollision`` whether the robot's own protection did it.
STOPPED_CYCLES = 5
#: The ``reason`` of an answer whose motion the robot's own collision protection stopped or bent.
ROBOT_PROTECTION = "robot collision protection"


@qi.multiThreaded()
@publish
class NaoArmIK:
    """The service object.

    Args:
        session: a qi session connected to the robot's service directory.
        speed: default ``fractionMaxSpeed`` for ``setAngles``.
        motion_timeout: seconds each ALMotion call may take.
        call_budget: seconds each call may take (a path: plus ``path_compute_budget`` per point to
            compute it, all from its arrival, then ``call_budget`` plus 40 ms per point to send it).
        path_compute_budget: a path's extra seconds per point to compute it.
        body: keep the arms clear of the body (answers and motions). Off only to measure what the
            check costs (``nao-ik bench --body``); neither the CLI nor qi can turn it off.
    """

    def __init__(
        self,
        session: Any,
        speed: float = DEFAULT_SPEED,
        motion_timeout: float = MOTION_TIMEOUT,
        call_budget: float = CALL_BUDGET,
        path_compute_budget: float = PATH_COMPUTE_BUDGET,
        body: bool = True,
    ):
        self._speed = validate.speed(speed)
        self._body = bool(body)
        self._budget = validate.positive(call_budget, "call_budget")
        self._path_compute = validate.positive(path_compute_budget, "path_compute_budget")
        self._models: dict[str, ArmModel] = {}
        self._motion = MotionLink(session, validate.positive(motion_timeout, "motion_timeout"), self._new_motion)
        self._sensed = SensedCache(self._motion, [n for arm in ARMS for n in arm_model(arm).names] + BODY_JOINTS)
        self._sent = {arm: Unanswered(self._motion) for arm in ARMS}  # the arms' commands not answered yet
        self._aim: dict[str, list] = {}  # the last posture commanded to each arm (the motion may still run)
        self._sent_at: dict[str, float] = {}  # when it was sent (monotonic s): readings older do not show it
        self._aim_speed: dict[str, float] = {}  # and its fractionMaxSpeed
        self._arms = {arm: ArmChannel(arm) for arm in ARMS}
        self._workers = ThreadPoolExecutor(WORKERS, thread_name_prefix="NaoArmIK")
        self._closing = threading.Event()
        self._log = ServiceLog(LOG_CATEGORY)
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))

    # ------------------------------------------------------------ qi methods

    @qi.bind(_ANSWER, [qi.Dynamic] * 4)
    def reachTo(self, x: Any, y: Any, z: Any, method: Any) -> Any:
        """Move the arm on the target's side (y >= 0: LArm) to (x, y, z), FRAME_TORSO metres."""
        a = self._decode("reachTo", (x, y, z, method))
        return self._submit("reachTo", lambda job, end: self._reach(_side(a["target"]), a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def reachToWithArm(self, arm: Any, x: Any, y: Any, z: Any, method: Any) -> Any:
        """Move the named arm ("LArm" or "RArm") to (x, y, z)."""
        a = self._decode("reachToWithArm", (arm, x, y, z, method))
        return self._submit("reachToWithArm", lambda job, end: self._reach(a["arm"], a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 6)
    def reachToWithSpeed(self, arm: Any, x: Any, y: Any, z: Any, method: Any, fractionMaxSpeed: Any) -> Any:  # noqa: N803
        """``reachToWithArm`` at this call's own fraction of the joints' maximum speed, in [0.01, 1].

        The service's default (``setSpeed``) is left alone: callers do not change each other's speed.
        """
        a = self._decode("reachToWithSpeed", (arm, x, y, z, method, fractionMaxSpeed))
        return self._submit("reachToWithSpeed", lambda job, end: self._reach(a["arm"], a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def computeAngles(self, arm: Any, x: Any, y: Any, z: Any, method: Any) -> Any:
        """The answer ``reachToWithArm`` would send, without moving the robot."""
        a = self._decode("computeAngles", (arm, x, y, z, method))
        return self._submit("computeAngles", lambda job, end: self._reach(a["arm"], a, None, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 4)
    def computeAllSolutions(self, arm: Any, x: Any, y: Any, z: Any) -> Any:
        """Every configuration that reaches (x, y, z), without moving the robot.

        Returns a map: ``arm``, ``target``, ``reachable``, ``names``,
        ``intervals`` (``[branch, start, end]`` allowed swivel intervals,
        radians) and ``solutions`` (maps: ``branch``, ``swivel``, ``angles``,
        ``error``) sampled every 10 degrees across the intervals and at their
        ends, for the robot's limits and the arm's current WristYaw.
        """
        a = self._decode("computeAllSolutions", (arm, x, y, z))
        return self._submit("computeAllSolutions", lambda job, end: self._all(a["arm"], a["target"], end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 3)
    def trackPath(self, arm: Any, points: Any, method: Any) -> Any:
        """Follow a Cartesian path with the named arm: one ``setAngles`` per point, at ALMotion's 50 Hz.

        ``points`` is a list of [x, y, z] (FRAME_TORSO metres, at most 2000).
        The angles follow Oyama & Tachi's tracking control (see
        :mod:`nao_ik.track`) from the arm's current posture; all of them are
        computed and checked before the first command is sent. The path is a
        job on its arm: ``stopPath(arm)``, a reach or another path on that
        arm, or the caller cancelling its future stop it before its next
        command. Returns a map: ``arm``, ``method``, ``names``, ``angles``
        (per point), ``errors`` (m, per point), ``completed``, ``rmsError``,
        ``seconds``, ``sent`` (commands sent), ``stopped`` (why it stopped
        early, ``""`` if it did not).
        """
        a = self._decode("trackPath", (arm, points, method))
        return self._submit("trackPath", lambda job, end: self._track(a["arm"], a, job, end), self._path_extra(a))

    @qi.bind(_ANSWER, [qi.Dynamic] * 4)
    def trackPathWithSpeed(self, arm: Any, points: Any, method: Any, fractionMaxSpeed: Any) -> Any:  # noqa: N803
        """``trackPath`` at this call's own fraction of the joints' maximum speed, in [0.01, 1]."""
        a = self._decode("trackPathWithSpeed", (arm, points, method, fractionMaxSpeed))
        return self._submit("trackPathWithSpeed", lambda job, end: self._track(a["arm"], a, job, end),
                            self._path_extra(a))  # fmt: skip

    @qi.bind(_ANSWER, [qi.Dynamic] * 4)
    def reachToPose(self, arm: Any, position6D: Any, axisMask: Any, method: Any) -> Any:  # noqa: N803 (qi names)
        """Give the named arm's hand a pose: ``position6D`` [x, y, z, wx, wy, wz] (FRAME_TORSO, Rz*Ry*Rx).

        ``axisMask`` (1..63: X 1, Y 2, Z 4, WX 8, WY 16, WZ 32) selects the
        components that count, as in ALMotion.setPositions; ``method`` one of
        the pose methods (any position method with axisMask 7), "" the
        default. Answers like ``reachToWithArm`` plus ``position6D``,
        ``axisMask``, ``positionError`` (m) and ``orientationError`` (rad).
        """
        a = self._decode("reachToPose", (arm, position6D, axisMask, method))
        return self._submit("reachToPose", lambda job, end: self._reach_pose(a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def reachToPoseWithSpeed(  # noqa: N803 (qi names)
        self, arm: Any, position6D: Any, axisMask: Any, method: Any, fractionMaxSpeed: Any
    ) -> Any:
        """``reachToPose`` at this call's own fraction of the joints' maximum speed, in [0.01, 1]."""
        a = self._decode("reachToPoseWithSpeed", (arm, position6D, axisMask, method, fractionMaxSpeed))
        return self._submit("reachToPoseWithSpeed", lambda job, end: self._reach_pose(a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 4)
    def computePose(self, arm: Any, position6D: Any, axisMask: Any, method: Any) -> Any:  # noqa: N803 (qi names)
        """The answer ``reachToPose`` would send, without moving the robot."""
        a = self._decode("computePose", (arm, position6D, axisMask, method))
        return self._submit("computePose", lambda job, end: self._reach_pose(a, None, end))

    @qi.bind(qi.List(qi.Double), [qi.Dynamic])
    def getPose(self, arm: Any) -> Any:
        """The named arm's hand pose [x, y, z, wx, wy, wz] (FRAME_TORSO) from the robot's sensed angles."""
        a = self._decode("getPose", (arm,))

        def work(job: Job, end: float) -> list:
            model, current = self._arm_state(a["arm"], motors=False, end=end, fresh=True)
            return [float(v) for v in forward_pose(current, model)]

        return self._submit("getPose", work)

    @qi.bind(qi.Bool, [qi.Dynamic])
    def stopPath(self, arm: Any) -> bool:
        """Stop the path running on ``arm`` before its next command; True if one was running.

        Returns once the path has sent its last command.
        """
        a = self._decode("stopPath", (arm,))
        return self._arms[a["arm"]].stop("stopped by stopPath", self._motion.timeout + CYCLE)

    @qi.bind(qi.List(qi.String), [])
    def getMethods(self) -> list:
        """The IK methods this service knows."""
        return list(METHODS)

    @qi.bind(qi.Void, [qi.Dynamic])
    def setSpeed(self, fraction: Any) -> None:
        """Default fraction of the joints' maximum speed for motions, in [0.01, 1]."""
        self._speed = self._decode("setSpeed", (fraction,))["fraction"]

    @qi.bind(qi.Double, [])
    def getSpeed(self) -> float:
        """The current fraction of maximum speed."""
        return self._speed

    # --------------------------------------------------------------- shutdown

    @_private
    def close(self, timeout: float = 5.0) -> None:
        """Stop every path, refuse new calls, and wait (at most ``timeout`` s) for running calls."""
        end = time.monotonic() + timeout
        self._closing.set()
        self._sensed.close()
        for channel in self._arms.values():
            channel.stop("the service is stopping", max(0.0, end - time.monotonic()))
        self._workers.shutdown(wait=False, cancel_futures=True)
        for t in list(getattr(self._workers, "_threads", ())):
            t.join(max(0.0, end - time.monotonic()))

    # ------------------------------------------------------------- internals

    @_private
    def _decode(self, name: str, values: tuple) -> dict:
        if self._closing.is_set():
            raise RuntimeError("NaoArmIK is stopping: no new calls")
        try:
            return decode(name, values)
        except ValueError as e:
            self._log.warning(f"{name} refused", f"{name}: refused: {e}")
            raise

    @_private
    def _submit(self, name: str, work: Callable[[Job, float], dict], extra: float = 0.0) -> Any:
        """Run ``work(job, deadline)`` on a service thread; the caller gets a qi future of its answer.

        Cancelling that future (the caller's ``future.cancel()``) stops a path.
        """
        job = Job(name, yields=name.startswith("trackPath"))
        end = time.monotonic() + self._budget + extra
        promise = qi.Promise(lambda p: job.cancel("cancelled by the caller"))

        def run() -> None:
            try:
                if time.monotonic() > end:
                    raise RuntimeError(f"{name} waited for a free thread past its {self._budget:g} s budget")
                answer = work(job, end)
            except ValueError as e:
                self._log.warning(f"{name} refused", f"{name}: refused: {e}")
                promise.setError(f"ValueError: {e}")
            except Exception as e:
                self._log.error(f"{name} failed", f"{name}: failed: {type(e).__name__}: {e}")
                promise.setError(f"{type(e).__name__}: {e}")
            else:
                if job.reason == "cancelled by the caller":
                    promise.setCanceled()
                else:
                    promise.setValue(answer)

        try:
            self._workers.submit(run)
        except RuntimeError:  # the pool is shut down
            raise RuntimeError("NaoArmIK is stopping: no new calls") from None
        return promise.future()

    @_private
    def _reach(self, arm: str, a: dict, job: Job | None, end: float) -> dict:
        """A reach; with a job, it takes the arm (stopping a path there) and sends the command."""
        name = resolve_method(DEFAULT_METHOD if a["method"] == "" else a["method"])
        target = a["target"]
        move = job is not None
        with self._holding(arm, job, end) as (model, start):
            names = list(model.names)
            t0 = time.perf_counter()
            sol = solve(target, model, name, initial=start)
            solve_ms = (time.perf_counter() - t0) * 1e3
            what = f"{name} for {target}"
            try:
                safe, clamped, change, seconds, commands = self._command(
                    model, sol.angles, start, move, end, what, a.get("fractionMaxSpeed"), job
                )
                protected = ""
            except RobotProtection as e:  # the robot's own protection stopped the arm on the way: say so
                (safe, clamped, change, seconds, commands), protected = e.partial, str(e)
                self._log.warning(f"reach {arm} stopped by the robot", f"{what}: {protected}")
        self._log.info(
            f"{'reach' if move else 'compute'} {arm} {name} -> ({target[0]:.4f}, {target[1]:.4f}, {target[2]:.4f}) "
            f"reached={sol.reached} error={sol.error * 1e3:.3f}mm it={sol.iterations} {solve_ms:.2f}ms"
        )
        return {
            "arm": arm,
            "method": name,
            "target": list(target),
            "names": names,
            "angles": safe,
            "reached": bool(sol.reached) and not protected,
            "error": float(sol.error),
            "iterations": int(sol.iterations),
            "solveTimeMs": float(solve_ms),
            "clamped": clamped,
            "moved": bool(move),
            "jointChange": float(change),
            "moveSeconds": float(seconds),
            # How much farther than attainable the hand stays (0 when reached; -1 for the
            # papers' approximations, which keep their own answers), and whether the
            # method's own answer was replaced by the closest attainable pose.
            "shortfall": -1.0 if sol.shortfall is None else float(sol.shortfall),
            "refined": bool(sol.refined),
            # Why the target is not reached ("" when it is): "out of reach", "joint limits", "collision: <part>",
            # "robot collision protection" (the robot's own protection stopped the arm on its way).
            "reason": ROBOT_PROTECTION if protected else str(sol.reason),
            # The commands of the move: 1 direct; 2 or 3 when the direct motion would cross the body and the arm
            # is first swung out (a reach: those sent, fewer where a later call took the arm on the way);
            # 0 (computeAngles only) when no safe motion from the current posture exists.
            "commands": len(commands),
            # The swung-out postures commanded before the answer (empty for a direct move).
            "via": [list(q) for q in (commands[:-1] if commands and commands[-1] == safe else commands)],
        }

    @_private
    @contextlib.contextmanager
    def _holding(self, arm: str, job: Job | None, end: float) -> Iterator[tuple]:
        """The arm's model and sensed posture (:meth:`_arm_state`); with a job, the arm is held meanwhile.

        A job takes the arm (stopping a path there), first hears of an earlier command's failure
        (:meth:`_settle`) and needs the motors on; without one (a computation) nothing is held.
        """
        if job is None:
            yield self._arm_state(arm, motors=False, end=end)
            return
        self._arms[arm].take(job, _left(end))
        try:
            self._settle(arm, end)  # the arm's earlier commands: none failed
            yield self._arm_state(arm, motors=True, end=end)
        finally:
            self._arms[arm].release(job)

    @_private
    def _command(self, model: ArmModel, angles: Any, start: Any, move: bool, end: float, what: str,
                 speed: float | None = None, job: Job | None = None) -> tuple:  # fmt: skip
        """The last line of defence before setAngles, and the commands themselves when moving.

        Nothing non-finite is sent; the angles are clamped into the robot's limits; a posture within
        the body's margin (``model.body``: NAO's body at its posture and the other arm) is never sent;
        the motion to it is checked (:func:`nao_ik.sweep.plan`): where the direct motion would cross
        the body, the arm is first swung out (the sequence's commands are sent in turn, each after the
        arm reached the one before; a later call on the arm ends the sequence); where no safe sequence
        exists, nothing is sent. The (last) command goes out without waiting for ALMotion's answer
        (:meth:`_send`); ``speed`` is its fractionMaxSpeed (default: the service's).

        Returns:
            (angles sent, names of the joints clamped, largest joint change in rad, seconds the move
            takes (setAngles moves each joint at fractionMaxSpeed of its own maximum velocity), the
            postures of the move: those sent when moving (the last one is the answer unless a later call took
            the arm on the way), else those it takes (none: no safe motion)).
        """
        speed = self._speed if speed is None else speed
        angles = [float(q) for q in angles]
        if not all(math.isfinite(q) for q in angles):
            raise RuntimeError(f"{what} produced a non-finite angle; nothing sent")
        safe = list(model.clamp(angles))
        clamped = [n for n, q, s in zip(model.names, angles, safe) if q != s]
        change = _apart(safe, start)
        seconds = move_seconds(model, start, safe, speed)
        if model.body:
            model, start, near, route, way = self._plan(model, start, safe, speed, move, job, end, what)
            if route is None or not route.commands:
                if move:
                    why = f"collision: {near.part}" if route is None else route.reason
                    raise RuntimeError(f"{what}: {why}; nothing sent")
                return safe, clamped, change, seconds, []
            change = _apart(safe, start)
            seconds = max(move_seconds(model, start, safe, speed), route.seconds)
        else:
            route, way = None, None
        commands = [safe] if route is None else route.commands
        if not move:
            return safe, clamped, change, seconds, commands
        names, sent = list(model.names), []
        for k, q in enumerate(commands):
            if time.monotonic() > end:
                raise RuntimeError(f"the reach took longer than its {self._budget:g} s budget; nothing more sent")
            if k:
                try:
                    way = self._arrive(model, commands[k - 1], job, end, speed)
                except RobotProtection as e:
                    e.partial = (safe, clamped, change, seconds, sent)
                    raise
                if way is None:
                    break  # a later call took the arm: it commands from where the arm is
                # The body now: the other arm may have moved, or been sent somewhere, since the plan.
                model = self._arm_state(model.arm, motors=True, end=end, fresh=True)[0]
                if clearance(model, safe, model.body).distance < MARGIN - 1e-6:
                    raise RuntimeError(f"{what}: collision: the {clearance(model, safe, model.body).part} is now where "
                                       "the arm was going; nothing more sent")  # fmt: skip
                # The leg was planned from the via itself; the arm stopped near it (within SAG): from there.
                if not sweep_moving(model, way.reading, way.aim, way.fraction, q).clear:
                    raise RuntimeError(f"{what}: motion: from where the arm reached its last posture on the way the "
                                       "next move would cross the body; nothing more sent")  # fmt: skip
            self._send(model.arm, names, q, speed, end)
            sent.append(q)
        return safe, clamped, change, seconds, sent

    @_private
    def _plan(self, model: ArmModel, start: Any, goal: list, speed: float, move: bool, job: Job | None, end: float,
              what: str) -> tuple:  # fmt: skip
        """The safe commands to ``goal`` from the arm's posture ``start`` (None: read it now, fresh).

        ``goal`` must be clear of the body where the arm's state puts it. Where, for a move, the arm is still
        moving and from somewhere on its way the new motion would cross the body, wait until it stops there
        and plan from where it is.

        Returns:
            (model, start, the goal's clearance, the plan (None: the goal is within the body's margin), the
            arm's way as checked).
        """
        if start is None:
            model, start = self._arm_state(model.arm, motors=True, end=end, fresh=True)
        near = clearance(model, goal, model.body)
        route, way = self._route(model, start, goal, speed) if near.distance >= MARGIN - 1e-6 else (None, None)
        while move and route is not None and route.reason == MOVING:  # until it stopped, or the budget ends
            model, start = self._wait_still(model, job, end, what)
            # Stopped short of its last command (a sagging joint, the robot's protection) long after it was sent:
            # it will not set off toward it any more, so it is where it is.
            stopped = time.monotonic() - self._sent_at.get(model.arm, 0.0) > STOPPED_CYCLES * CYCLE
            near = clearance(model, goal, model.body)  # the body now (the other arm may have moved)
            route, way = (self._route(model, start, goal, speed, stopped) if near.distance >= MARGIN - 1e-6
                          else (None, None))  # fmt: skip
        other = self._model(OTHER_ARM[model.arm], end)
        if move and (route is None or not route.commands) and self._aim.get(other.arm) is not None:
            # The other arm, anywhere on its way to its last command (as read), may be what is in the way: wait
            # until it is there (at once if it is), and plan again from a fresh reading.
            self._wait_still(other, job, end, what, state=False)
            model, start = self._arm_state(model.arm, motors=True, end=end, fresh=True)
            near = clearance(model, goal, model.body)
            route, way = self._route(model, start, goal, speed) if near.distance >= MARGIN - 1e-6 else (None, None)
        return model, start, near, route, way

    @_private
    def _route(self, model: ArmModel, start: Any, goal: list, speed: float,
               stopped: bool = False) -> tuple[Plan, _Way | None]:  # fmt: skip
        """The safe commands from the arm's posture to ``goal`` (:func:`nao_ik.sweep.plan`), the arm maybe moving.

        While the arm may still be moving toward its last command, the first command arrives with the
        arm somewhere on its way there (:meth:`_way`): its motion must be clear from all of it, at any timing
        (:func:`nao_ik.sweep.sweep_moving`); else the plan from that posture, if its first motion is;
        else no commands, with the reason :data:`MOVING`.

        With ``stopped`` (the arm seen still, long after its last command), from ``start`` alone.

        Returns:
            (the plan, the arm's way as checked, or None when the arm is still).
        """
        way = None if stopped else self._way(model, start)
        if way is None:
            return plan(model, start, goal, speed), None
        if sweep_moving(model, way.reading, way.aim, way.fraction, goal).clear:  # the direct motion, from all the way
            return Plan([goal], "", move_seconds(model, start, goal, speed)), way
        route = plan(model, start, goal, speed)
        if len(route.commands) > 1 and sweep_moving(model, way.reading, way.aim, way.fraction, route.commands[0]).clear:
            return route, way
        alt = plan(model, way.aim, goal, speed)  # planned from where the arm is going instead
        if alt.commands and sweep_moving(model, way.reading, way.aim, way.fraction, alt.commands[0]).clear:
            return alt, way
        return Plan([], MOVING, route.seconds), way

    @_private
    def _way(self, model: ArmModel, start: Any) -> _Way | None:
        """The arm's way from its reading ``start`` toward its last command; None when it is still there."""
        aim = self._aim.get(model.arm)
        # Any difference: the last stretch to the command counts too (0.01 rad a joint moves the arm up to 12 mm).
        if aim is None or _apart(aim, start) <= 1e-9:
            return None
        return _Way(list(start), list(aim), self._aim_speed.get(model.arm, 1.0))

    @_private
    def _wait_still(self, model: ArmModel, job: Job, end: float, what: str, state: bool = True) -> tuple | None:
        """Wait until the arm stops (at its last command, or wherever it was stopped); its state then.

        Returns:
            (model, start) as :meth:`_arm_state` reads them then (None without ``state``).
        """
        arm, names, aim = model.arm, list(model.names), self._aim.get(model.arm)
        last, still = None, 0
        while True:
            now, _ = self._sensed.read(names, _left(end), fresh=True)
            if aim is None or _apart(now, aim) <= ARRIVED:
                break
            # Still over two cycles: a command not yet begun (or a smooth start) can look still over one.
            still = _still_for(still, now, last)
            if still >= 2:
                break
            last = now
            if job.stop.wait(CYCLE):
                raise RuntimeError(f"{what}: motion: waiting for the arm to stop, {job.reason}; nothing sent")
            if time.monotonic() > end:
                raise RuntimeError(f"{what}: {MOVING}, past the call's budget; nothing sent")
        return self._arm_state(arm, motors=True, end=end, fresh=True) if state else None

    @_private
    def _arrive(self, model: ArmModel, via: list, job: Job | None, end: float, speed: float) -> _Way | None:
        """Wait until the arm has stopped at ``via`` (a sequence's intermediate posture): within ARRIVED of
        it, or within SAG (a sagging joint), and no joint moving more than STILL over a cycle. The next
        command then turns no joint that is still moving, so no joint overshoots the leg's box.

        Returns:
            The arm's way from there (:meth:`_way`: where it stopped), or None where the job was stopped first
            (a later call took the arm).

        Raises:
            RobotProtection: the arm stopped short and the robot says its collision protection did it.
        """
        last, still = None, 0
        while True:
            now, _ = self._sensed.read(list(model.names), _left(end), fresh=True)
            off = _apart(now, via)
            still = _still_for(still, now, last)
            if still and off <= ARRIVED or still >= 2 and off <= SAG:
                return _Way(list(now), list(now), speed)
            if still >= STOPPED_CYCLES and still % STOPPED_CYCLES == 0:
                self._protected(model.arm, end, "on its way to a swung-out posture")
            last = now
            if job is not None and job.stop.wait(CYCLE):
                return None
            if time.monotonic() > end:
                raise RuntimeError("the arm did not reach its swung-out posture within the budget; nothing more sent")

    @_private
    def _protected(self, arm: str, end: float, where: str) -> None:
        """Raise :class:`RobotProtection` if ALMotion's ``isCollision`` says the arm's protection holds it."""
        try:
            state = self._motion.call("isCollision", arm, budget=min(_left(end), self._motion.timeout))
        except RuntimeError:  # an ALMotion without it, or no answer: the budget decides
            return
        if state == "collision":
            raise RobotProtection(f"{ROBOT_PROTECTION}: the robot stopped the {arm} {where} (isCollision: "
                                  "collision); nothing more sent")  # fmt: skip

    @_private
    def _send(self, arm: str, names: list, angles: list, speed: float, end: float) -> None:
        """``setAngles`` without waiting for ALMotion's answer; its failure reaches the arm's next call.

        Safe because the angles are checked already and the arm's commands stay in order (one job
        at a time sends on an arm, over one connection). The arm's next call first checks the
        answers (:meth:`_settle`).
        """
        pending = self._motion.start("setAngles", names, angles, speed, budget=_left(end))
        sent = time.monotonic()  # the call is on its way: a reading asked from now on comes after it
        failed = self._motion.failure(pending)  # refused at once (ALMotion gone): this caller hears it
        if failed:
            raise RuntimeError(failed)
        self._sent[arm].add(pending)
        self._aimed(arm, angles, sent, speed)
        self._sensed.follow(_left(end))  # a reading that shows this command, ready for the arm's next call

    @_private
    def _call_aimed(self, aims: list, names: list, angles: list, speed: float, end: float) -> None:
        """``setAngles`` waiting for ALMotion's answer; each arm's command (``aims``: (arm, posture)) is
        remembered once the answer came, and also when none came in time (it may have gone out and run); not
        when it could not be sent or ALMotion answered with an error (it did not run)."""
        pending = self._motion.start("setAngles", names, angles, speed, budget=_left(end))
        try:
            self._motion.result(pending)
        except RuntimeError:
            if not self._motion.failure(pending):  # no answer (timed out, cancelled): it may run
                self._aim_all(aims, speed)
            raise
        self._aim_all(aims, speed)

    @_private
    def _aim_all(self, aims: list, speed: float) -> None:
        sent = time.monotonic()
        for arm, q in aims:
            self._aimed(arm, q, sent, speed)

    @_private
    def _aimed(self, arm: str, angles: Any, sent: float, speed: float) -> None:
        """Remember a command to the arm: its posture, when it was sent, its speed.

        ``sent`` is taken once the call has gone out (not before): a reading asked later, even by
        another thread, reaches ALMotion after the command (:mod:`nao_ik.service.sensed`'s ``since``).
        """
        self._aim[arm] = [float(q) for q in angles]
        self._sent_at[arm] = sent
        self._aim_speed[arm] = speed

    @_private
    def _settle(self, arm: str, end: float) -> None:
        """Raise the failure of an earlier command to the arm (the caller holds the arm); nothing is sent then."""
        try:
            self._sent[arm].check(_left(end))
        except RuntimeError as e:
            raise RuntimeError(f"an earlier command to {arm} failed, so this one was not sent: {e}") from None

    @_private
    def _reach_pose(self, a: dict, job: Job | None, end: float) -> dict:
        """A pose reach; with a job, it takes the arm (stopping a path there) and sends the command."""
        arm, pose, mask = a["arm"], a["position6D"], a["axisMask"]
        method = DEFAULT_METHOD if a["method"] == "" else a["method"]
        if mask == POSITION_MASK:
            method = resolve_method(method)
        else:
            method = validate.choice(method, POSE_METHODS, "pose method (axisMask 7 takes any position method)")
        move = job is not None
        with self._holding(arm, job, end) as (model, start):
            names = list(model.names)
            t0 = time.perf_counter()
            sol = solve_pose(pose, model, mask, initial=start, method=method)
            solve_ms = (time.perf_counter() - t0) * 1e3
            safe, clamped, change, seconds, commands = self._command(
                model, sol.angles, start, move, end, f"{method} for {list(pose)}", a.get("fractionMaxSpeed"), job
            )
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
            "reason": str(sol.reason),
            "error": float(sol.error),
            "positionError": float(sol.position_error),
            "orientationError": float(sol.rotation_error),
            "iterations": int(sol.iterations),
            "solveTimeMs": float(solve_ms),
            "clamped": clamped,
            "moved": bool(move),
            "jointChange": float(change),
            "moveSeconds": float(seconds),
            "commands": len(commands),
        }

    @_private
    def _path_extra(self, a: dict) -> float:
        """A path's budget beyond the call's: to compute it, then :meth:`_path_sending`."""
        return len(a["points"]) * self._path_compute + self._path_sending(a)

    @_private
    def _path_sending(self, a: dict) -> float:
        """A path's budget from its first command: a call's budget and each point's cycle."""
        return self._budget + len(a["points"]) * PATH_POINT_BUDGET

    @_private
    def _track(self, arm: str, a: dict, job: Job, end: float) -> dict:
        name = resolve_method(DEFAULT_METHOD if a["method"] == "" else a["method"])
        speed = a.get("fractionMaxSpeed", self._speed)
        channel = self._arms[arm]
        first = end - self._path_sending(a)  # the first command's deadline

        def check(k: int) -> None:
            """While the path is computed: its stop request and its budget end the computation."""
            if job.stop.is_set():
                raise Stopped(job.reason)
            if time.monotonic() > first:
                raise RuntimeError(
                    f"trackPath {name}: computing the path took longer than its budget ({self._budget:g} s + "
                    f"{self._path_compute:g} s per point; at point {k} of {len(a['points'])}); nothing sent"
                )

        try:
            channel.take(job, _left(first))
            return self._track_held(arm, a, job, end, name, speed, check)
        except Stopped:  # while it waited for the arm or was computed: nothing sent
            return _path_answer(arm, name, list(arm_model(arm).names), [], [], job.reason, 0.0)
        finally:
            channel.release(job)

    @_private
    def _track_held(self, arm: str, a: dict, job: Job, end: float, name: str, speed: float,
                    check: Callable[[int], None]) -> dict:  # fmt: skip
        """A path on an arm its job holds: computed and checked (``check`` before each point), then sent."""
        self._settle(arm, end)  # the arm's earlier commands: none failed
        model, start = self._arm_state(arm, motors=True, end=end)
        names = list(model.names)
        for attempt in range(2):
            track = track_path(a["points"], model, name, initial=start, check=check)
            safe = [list(model.clamp(q)) for q in track.angles.tolist()]
            if not all(math.isfinite(q) for qs in safe for q in qs):
                raise RuntimeError(f"{name} produced a non-finite angle on the path; nothing sent")
            way = self._way(model, start)
            # A first point more than a cycle away is reached first, like a reach (swung out around the
            # body where needed, then waited for): a stream of commands starting far from the arm would
            # leave it behind, heading straight for later points.
            lead = move_seconds(model, start, safe[0], speed) > CYCLE
            blocked = self._path_blocked(model, start, safe, speed, way, lead, check)
            if attempt or blocked is None or not blocked[1].startswith(MOVING):
                break
            # From where the arm may be on its way to its last command the path's first motion would cross
            # the body: wait until it stops, then compute the path from there.
            model, start = self._wait_still(model, job, end, f"trackPath {name}")
        check(len(safe))
        t0 = time.monotonic()
        sent, done, vias = 0, t0 - CYCLE, []
        if lead and (blocked is None or blocked[0] > 0):
            lead_commands = self._command(model, safe[0], start, True, end, f"trackPath {name}: its first point",
                                          speed, job)[4]  # fmt: skip
            vias = [list(q) for q in lead_commands[:-1]]
            sent = 1
            # The rest of the path streams once the arm is there (nothing to wait for after a single point).
            if len(safe) > 1 and (blocked is None or blocked[0] > 1):
                way = self._arrive(model, safe[0], job, end, speed)
                if way is None:
                    blocked = (1, job.reason)
                elif _apart(way.reading, safe[0]) > ARRIVED:
                    # Stopped short of the first point (a sagging joint): the stream is checked from there.
                    again = self._path_blocked(model, way.reading, safe, speed, None, False, check)
                    if again is not None and (blocked is None or again[0] < blocked[0]):
                        blocked = (max(1, again[0]), again[1])
            done = time.monotonic()
        for q in safe[sent : len(safe) if blocked is None else blocked[0]]:
            # One command per ALMotion cycle: the next one a cycle (20 ms) after ALMotion took the
            # last one, so a late command is never followed by one within the same cycle. A stop
            # request ends the wait at once.
            if job.stop.wait(max(0.0, done + CYCLE - time.monotonic())):
                break
            self._call_aimed([(arm, q)], names, q, speed, end)
            done = time.monotonic()
            sent += 1
        stopped = (blocked[1] if blocked is not None and sent == blocked[0] else job.reason) if sent < len(safe) else ""
        answer = _path_answer(arm, name, names, safe[:sent], [float(e) for e in track.errors], stopped,
                              time.monotonic() - t0)  # fmt: skip
        answer["completed"] = bool(track.completed) and sent == len(safe)
        # The postures the arm was swung through on its way to the first point (sent before it), if any.
        answer["via"] = vias
        return answer

    @_private
    def _path_blocked(self, model: ArmModel, start: Any, path: list, speed: float, way: _Way | None,
                      lead: bool, check: Callable[[int], None]) -> tuple | None:  # fmt: skip
        """(index of the first point not to send, why) where a point or the motion to it meets the body; None.

        With ``lead``, the first point is reached like a reach (:meth:`_command`: a plan from the arm's
        posture, swung out where needed) and waited for; else its motion is checked from the reading and,
        where the arm may still be moving toward its last command, from everywhere on its way there (``way``).
        Every later command is checked from wherever the arm may be when it arrives, at any profile: among
        the points commanded since the last one it has surely reached (:func:`nao_ik.sweep.stream_regions`),
        each joint going on past them by its overshoot (and within ARRIVED of the first point after a lead).
        ``check`` is called before each point's checks.
        """
        if not model.body:
            return None
        for k, q in enumerate(path):
            check(k)
            near = clearance(model, q, model.body)
            if near.distance < MARGIN - 1e-6:
                return k, f"collision: {near.part} at point {k}"
        if lead:
            route, _ = self._route(model, start, path[0], speed)
            if not route.commands:
                return 0, f"{route.reason} (the path's first point)"
        elif path and way is not None and not sweep_moving(model, way.reading, way.aim, way.fraction, path[0]).clear:
            return 0, f"{MOVING} (the path's first point)"
        base = path[0] if lead else start
        for k, (region, grow) in enumerate(stream_regions(model, base, path, speed, CYCLE, ARRIVED if lead else 0.0)):
            if lead and k == 0:
                continue
            check(k)
            move = sweep_region(model, region, grow)
            if not move.clear:
                return k, f"collision: the motion to point {k} may cross the {move.part or 'body'}"
        return None

    @_private
    def _arm_state(self, arm: str, motors: bool, end: float, fresh: bool = False) -> tuple:
        """The arm's model with the robot's limits and the body at the robot's posture, and its sensed angles.

        The angles are at most two control cycles old (:mod:`nao_ik.service.sensed`), read now with ``fresh``.
        With ``motors``, refuse an arm whose motors are off, as read now (a cached "on" may be up to two
        cycles old: a command right after ``rest()`` reaches motors that are off, and moves nothing).
        The same reading has the other arm and the hips: the model's body
        (:func:`nao_ik.collision.posture_body`) has the thighs where they are and the other arm's links:
        where it is, and where it may be on its way to its last command (any profile, overshoot included).
        """
        model = self._model(arm, end)
        other = self._model(OTHER_ARM[arm], end)
        names = list(model.names)
        read = names + list(other.names) + BODY_JOINTS
        current, stiff, reading = self._sensed.read_timed(read, _left(end), fresh, self._sent_at.get(arm, -math.inf))
        if motors and not fresh and not all(v > 0.0 for v in stiff[:5]):
            # Off in a cached reading: read again before refusing (a wakeUp may have come since).
            current, stiff, reading = self._sensed.read_timed(read, _left(end), fresh=True)
        if motors:
            _check_motors(arm, names, stiff[:5])
        start = model.clamp(current[:5])
        if model.body:
            seen = other.clamp(current[5:10])
            aim = self._aim.get(other.arm)  # the other arm may still be on its way there: all of it is the body
            moving = aim is not None and _apart(aim, seen) > 1e-9
            body = posture_body((current[10], current[11]), (other, seen), aim if moving else None,
                                self._aim_speed.get(other.arm, 1.0), (current[12], current[13]))  # fmt: skip
            model = model._replace(body=body)
        return model, start

    @_private
    def _new_motion(self) -> None:
        """A new ALMotion: its limits and readings are read again; commands sent to the old one are forgotten."""
        self._models.clear()
        self._sensed.invalidate()

    @_private
    def _all(self, arm: str, target: tuple, end: float) -> dict:
        model, current = self._arm_state(arm, motors=False, end=end)
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
    def _model(self, arm: str, end: float) -> ArmModel:
        model = self._models.get(arm)
        if model is None:
            base = arm_model(arm) if self._body else arm_model(arm)._replace(body=())
            names = list(base.names)
            reported = reply_limits(self._motion.call("getLimits", names, budget=_left(end)), names)
            try:
                model = base.with_limits(reported)
            except ValueError as e:  # the robot's fault, not the caller's
                raise RuntimeError(f"ALMotion.getLimits returned unusable limits: {e}") from None
            self._models[arm] = model
        return model

    # ======================================================================
    # Frames, both arms, hands, pointing and reachability. The logic lives in
    # nao_ik.frames, reachability, pointing, both_arms and grasp; these methods fetch the
    # robot's state, convert frames and send through _command (the arms) or _hand_command.

    @qi.bind(_ANSWER, [qi.Dynamic] * 6)
    def reachToInFrame(self, arm: Any, x: Any, y: Any, z: Any, frame: Any, method: Any) -> Any:
        """``reachToWithArm`` with the target in ``frame``: 0 FRAME_TORSO, 1 FRAME_WORLD, 2 FRAME_ROBOT.

        The target is converted with ``ALMotion.getTransform("Torso", frame, True)``; the answer adds
        ``frame`` and ``targetInFrame`` (its ``target`` is in FRAME_TORSO).
        """
        a = self._decode("reachToInFrame", (arm, x, y, z, frame, method))
        return self._submit("reachToInFrame", lambda job, end: self._reach_in_frame(a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 7)
    def reachToInFrameWithSpeed(  # noqa: N803 (qi names)
        self, arm: Any, x: Any, y: Any, z: Any, frame: Any, method: Any, fractionMaxSpeed: Any
    ) -> Any:
        """``reachToInFrame`` at this call's own fraction of the joints' maximum speed, in [0.01, 1]."""
        a = self._decode("reachToInFrameWithSpeed", (arm, x, y, z, frame, method, fractionMaxSpeed))
        return self._submit("reachToInFrameWithSpeed", lambda job, end: self._reach_in_frame(a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 6)
    def computeAnglesInFrame(self, arm: Any, x: Any, y: Any, z: Any, frame: Any, method: Any) -> Any:
        """The answer ``reachToInFrame`` would send, without moving the robot."""
        a = self._decode("computeAnglesInFrame", (arm, x, y, z, frame, method))
        return self._submit("computeAnglesInFrame", lambda job, end: self._reach_in_frame(a, None, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def reachToPoseInFrame(self, arm: Any, position6D: Any, frame: Any, axisMask: Any, method: Any) -> Any:  # noqa: N803
        """``reachToPose`` with the position6D in ``frame`` (0, 1, 2); the answer adds ``frame`` and
        ``position6DInFrame`` (its ``position6D`` is in FRAME_TORSO)."""
        a = self._decode("reachToPoseInFrame", (arm, position6D, frame, axisMask, method))
        return self._submit("reachToPoseInFrame", lambda job, end: self._pose_in_frame(a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def computePoseInFrame(self, arm: Any, position6D: Any, frame: Any, axisMask: Any, method: Any) -> Any:  # noqa: N803
        """The answer ``reachToPoseInFrame`` would send, without moving the robot."""
        a = self._decode("computePoseInFrame", (arm, position6D, frame, axisMask, method))
        return self._submit("computePoseInFrame", lambda job, end: self._pose_in_frame(a, None, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def isReachable(self, arm: Any, x: Any, y: Any, z: Any, frame: Any) -> Any:
        """Whether the hand can be put exactly on (x, y, z) in ``frame``, from the exact solution set.

        Returns a map: ``arm``, ``frame``, ``target`` (in ``frame``), ``targetTorso``, ``reachable``,
        ``dexterity`` (the allowed elbow swivel there, degrees), ``intervals`` (``[branch, start, end]``),
        for the robot's limits and the arm's current WristYaw. No motion.
        """
        a = self._decode("isReachable", (arm, x, y, z, frame))
        return self._submit("isReachable", lambda job, end: self._reachability(a, False, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def nearestReachable(self, arm: Any, x: Any, y: Any, z: Any, frame: Any) -> Any:
        """``isReachable`` plus the nearest reachable point: ``nearest`` (in ``frame``; the target when
        reachable), ``distance`` (m) and ``angles`` (a configuration with the hand there). No motion."""
        a = self._decode("nearestReachable", (arm, x, y, z, frame))
        return self._submit("nearestReachable", lambda job, end: self._reachability(a, True, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def pointAt(self, arm: Any, x: Any, y: Any, z: Any, frame: Any) -> Any:
        """Point the arm at (x, y, z) in ``frame``: the forearm's line through the target, arm stretched.

        Returns a map: ``arm``, ``frame``, ``target``, ``targetTorso``, ``pointed`` (a posture was found),
        ``miss`` (m, the target's distance from the forearm's line), ``reason`` ("" when pointed),
        ``names``, ``angles``, ``moved``, ``jointChange``, ``moveSeconds``. Nothing moves when not pointed.
        """
        a = self._decode("pointAt", (arm, x, y, z, frame))
        return self._submit("pointAt", lambda job, end: self._point(a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 6)
    def pointAtWithSpeed(self, arm: Any, x: Any, y: Any, z: Any, frame: Any, fractionMaxSpeed: Any) -> Any:  # noqa: N803
        """``pointAt`` at this call's own fraction of the joints' maximum speed, in [0.01, 1]."""
        a = self._decode("pointAtWithSpeed", (arm, x, y, z, frame, fractionMaxSpeed))
        return self._submit("pointAtWithSpeed", lambda job, end: self._point(a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 3)
    def reachBoth(self, left: Any, right: Any, method: Any) -> Any:
        """Move both arms in one ``setAngles`` of ten joints (FRAME_TORSO).

        ``left`` and ``right``: ``[x, y, z]`` or a position6D ``[x, y, z, wx, wy, wz]`` (axisMask 63) each;
        ``method``: a position method for positions, a pose method for poses ("" the default). Returns a
        map: ``names`` and ``angles`` (ten), ``left`` and ``right`` (``reached``, ``error``,
        ``orientationError``, ``method``, ``clamped``), ``reached`` (both), ``collision`` ("" when the
        pair is clear), ``moved``, ``jointChange``, ``moveSeconds``.
        """
        a = self._decode("reachBoth", (left, right, method))
        return self._submit("reachBoth", lambda job, end: self._reach_both(a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 4)
    def reachBothWithSpeed(self, left: Any, right: Any, method: Any, fractionMaxSpeed: Any) -> Any:  # noqa: N803
        """``reachBoth`` at this call's own fraction of the joints' maximum speed, in [0.01, 1]."""
        a = self._decode("reachBothWithSpeed", (left, right, method, fractionMaxSpeed))
        return self._submit("reachBothWithSpeed", lambda job, end: self._reach_both(a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic])
    def openHand(self, arm: Any) -> Any:
        """Open the arm's hand (LHand / RHand to 1); returns ``arm``, ``hand``, ``opening``, ``moveSeconds``."""
        a = self._decode("openHand", (arm,))
        return self._submit("openHand", lambda job, end: self._hand_answer(a["arm"], OPEN, end))

    @qi.bind(_ANSWER, [qi.Dynamic])
    def closeHand(self, arm: Any) -> Any:
        """Close the arm's hand (LHand / RHand to 0); answers like ``openHand``."""
        a = self._decode("closeHand", (arm,))
        return self._submit("closeHand", lambda job, end: self._hand_answer(a["arm"], CLOSED, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 3)
    def setHandWithSpeed(self, arm: Any, opening: Any, fractionMaxSpeed: Any) -> Any:  # noqa: N803
        """Move the arm's hand to ``opening`` (0 closed .. 1 open) at this call's own fraction of its
        maximum speed, in [0.01, 1]; answers like ``openHand``."""
        a = self._decode("setHandWithSpeed", (arm, opening, fractionMaxSpeed))
        return self._submit(
            "setHandWithSpeed", lambda job, end: self._hand_answer(a["arm"], a["opening"], end, a["fractionMaxSpeed"])
        )

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def grasp(self, arm: Any, x: Any, y: Any, z: Any, approach: Any) -> Any:
        """Grasp at (x, y, z) (FRAME_TORSO), the hand coming in along ``approach`` ([dx, dy, dz]).

        Steps: preGrasp (4 cm before the target along ``approach``), open, approach (to the target),
        close, lift (3 cm up); every arm step is planned and checked like a reach before anything moves,
        and each waits until the robot got there. Returns a map: ``arm``, ``target``, ``approach``,
        ``completed``, ``failedStep`` ("" or the step that could not be done), ``reason``, ``steps``
        (per step done: ``step``, ``target``, ``reached``, ``error``, ``hand``), ``moved``.
        """
        a = self._decode("grasp", (arm, x, y, z, approach))
        return self._submit("grasp", lambda job, end: self._grasp(a, job, end), GRASP_BUDGET)

    @qi.bind(_ANSWER, [qi.Dynamic] * 6)
    def graspWithSpeed(self, arm: Any, x: Any, y: Any, z: Any, approach: Any, fractionMaxSpeed: Any) -> Any:  # noqa: N803
        """``grasp`` at this call's own fraction of the joints' maximum speed, in [0.01, 1] (arm and hand);
        the call's budget grows as the speed falls below the default."""
        a = self._decode("graspWithSpeed", (arm, x, y, z, approach, fractionMaxSpeed))
        budget = GRASP_BUDGET * max(1.0, DEFAULT_SPEED / a["fractionMaxSpeed"])
        return self._submit("graspWithSpeed", lambda job, end: self._grasp(a, job, end), budget)

    # ----------------------------------------------------------- frames, both arms, hands: internals

    @_private
    def _torso(self, frame: int, end: float) -> Any:
        """The torso's 4x4 transform in ``frame`` from ALMotion (identity for FRAME_TORSO)."""
        if frame == FRAME_TORSO:
            return np.eye(4)
        reply = self._motion.call("getTransform", "Torso", frame, True, budget=_left(end))
        try:
            return check_transform(reply, f"ALMotion.getTransform('Torso', {frame}, True)")
        except ValueError as e:  # the robot's fault, not the caller's
            raise RuntimeError(f"unusable torso transform: {e}") from None

    @_private
    def _reach_in_frame(self, a: dict, job: Job | None, end: float) -> dict:
        t = point_to_torso(a["target"], self._torso(a["frame"], end))
        validate.metres(t, "target")
        answer = self._reach(a["arm"], dict(a, target=t), job, end)
        answer.update(frame=a["frame"], targetInFrame=list(a["target"]))
        return answer

    @_private
    def _pose_in_frame(self, a: dict, job: Job | None, end: float) -> dict:
        pose = pose_to_torso(a["position6D"], self._torso(a["frame"], end))
        validate.metres(pose, "position6D")
        answer = self._reach_pose(dict(a, position6D=pose), job, end)
        answer.update(frame=a["frame"], position6DInFrame=list(a["position6D"]))
        return answer

    @_private
    def _reachability(self, a: dict, with_nearest: bool, end: float) -> dict:
        torso = self._torso(a["frame"], end)
        model, current = self._arm_state(a["arm"], motors=False, end=end)
        t = point_to_torso(a["target"], torso)
        validate.metres(t, "target")
        if with_nearest:
            r = nearest_reachable(t, model, initial=current, clear=BODY_CLEAR)
        else:
            r = is_reachable(t, model, current[4], clear=BODY_CLEAR)
        answer = {
            "arm": a["arm"],
            "frame": a["frame"],
            "target": list(a["target"]),
            "targetTorso": list(t),
            "reachable": bool(r.reachable),
            "dexterity": float(r.dexterity),
            "intervals": [[b, lo, hi] for b, lo, hi in r.intervals],
        }
        if with_nearest:
            answer.update(
                nearest=list(point_from_torso(r.nearest, torso)),
                distance=float(r.distance),
                names=list(model.names),
                angles=[float(q) for q in r.angles],
            )
        return answer

    @_private
    def _point(self, a: dict, job: Job, end: float) -> dict:
        arm = a["arm"]
        torso = self._torso(a["frame"], end)
        t = point_to_torso(a["target"], torso)
        with self._holding(arm, job, end) as (model, start):
            p = point_at(t, model, start)
            if p.found and model.body:
                near = clearance(model, p.angles, model.body)
                if near.distance < MARGIN - 1e-9:  # pointing there takes the arm through the body
                    p = p._replace(found=False, reason=f"collision: {near.part}")
            moved = p.found
            safe, _, change, seconds, _ = self._command(
                model, p.angles, start, moved, end, f"pointAt {list(t)}", a.get("fractionMaxSpeed"), job
            )
        return {
            "arm": arm,
            "frame": a["frame"],
            "target": list(a["target"]),
            "targetTorso": list(t),
            "pointed": bool(p.found),
            "miss": float(p.miss),
            "reason": p.reason,
            "names": list(model.names),
            "angles": safe,
            "moved": bool(moved),
            "jointChange": float(change),
            "moveSeconds": float(seconds),
        }

    @_private
    def _reach_both(self, a: dict, job: Job, end: float) -> dict:
        targets = (a["left"], a["right"])
        speed = a.get("fractionMaxSpeed", self._speed)
        methods = tuple(self._target_method(a["method"], len(t)) for t in targets)
        for arm in ARMS:  # always LArm then RArm: two callers of reachBoth never wait for each other's second arm
            self._arms[arm].take(job, _left(end))
        try:
            for arm in ARMS:
                self._settle(arm, end)  # the arms' earlier commands: none failed
            states = [self._arm_state(arm, motors=True, end=end) for arm in ARMS]
            # Each arm's body without the other arm where it is now: the pair's check (PAIR_CHECK) has the
            # other arm where it starts and where it ends, since both move at once.
            models = tuple(m._replace(body=tuple(c for c in m.body if c.part != OTHER_PART)) for m, _ in states)
            both = solve_both(*targets, models, methods, (states[0][1], states[1][1]), check=PAIR_CHECK)
            # Each arm through the same checks as every command (finite, clamped into the robot's limits),
            # then one setAngles of the ten joints.
            checked = [
                self._command(m, ans.angles, start, False, end, f"reachBoth {arm} {list(t)}", speed)
                for m, (_, start), ans, arm, t in zip(models, states, (both.left, both.right), ARMS, targets)
            ]
            names = list(models[0].names) + list(models[1].names)
            angles = checked[0][0] + checked[1][0]
            legs = [(checked[0][0], checked[1][0])]
            collision = both.collision
            if collision.startswith("motion:"):
                # The direct motions may meet (each other or the body) at some timing: both arms in legs along
                # their straight lines, each leg sent once both arrived.
                cut = pair_legs(models[0], checked[0][0], models[1], checked[1][0], states[0][1], states[1][1])
                legs, collision = (cut, "") if cut else (legs, collision)
            unsafe = [f"motion: {arm} has no safe motion to its answer" for arm, c in zip(ARMS, checked) if not c[4]]
            collision = collision or (unsafe[0] if unsafe and len(legs) == 1 else "")
            move = not collision
            sent = 0
            if move:
                for k, (lq, rq) in enumerate(legs):
                    if time.monotonic() > end:
                        raise RuntimeError(f"reachBoth took longer than its {self._budget:g} s budget; "
                                           f"{'nothing' if k == 0 else f'{k} of {len(legs)} legs'} sent")  # fmt: skip
                    if k:
                        ways = [self._arrive(m, q, job, end, speed) for m, q in zip(models, legs[k - 1])]
                        if None in ways:
                            break  # a later call took an arm
                        if any(_apart(w.reading, q) > ARRIVED
                               for w, q in zip(ways, legs[k - 1])):  # fmt: skip
                            # An arm stopped short of the leg (a sagging joint): the next leg from where they are.
                            why = pair_reason(models[0], lq, models[1], rq, ways[0].reading, ways[1].reading)
                            if why:
                                raise RuntimeError(f"reachBoth: {why} (from where the arms stopped on the way); "
                                                   f"{k} of {len(legs)} legs sent")  # fmt: skip
                    self._call_aimed([("LArm", lq), ("RArm", rq)], names, lq + rq, speed, end)
                    self._sensed.follow(_left(end))
                    sent += 1
        finally:
            for arm in ARMS:
                self._arms[arm].release(job)
        sides = {}
        for side, ans, c in zip(("left", "right"), (both.left, both.right), checked):
            sides[side] = {
                "reached": bool(ans.reached),
                "error": float(ans.error),
                "orientationError": float(ans.orientation_error),
                "method": ans.method,
                "clamped": c[1],
            }
        return {
            "names": names,
            "angles": angles,
            **sides,
            "reached": bool(both.left.reached and both.right.reached),
            "collision": collision,
            "moved": bool(move),
            "jointChange": float(max(checked[0][2], checked[1][2])),
            "moveSeconds": float(max(checked[0][3], checked[1][3])),
            # The ten-joint commands of the move (1 direct; more where the arms go in legs), and the legs' ends
            # before the answer.
            "commands": sent if move else len(legs),
            "via": [lq + rq for lq, rq in legs[:-1]],
        }

    @_private
    def _target_method(self, method: str, size: int) -> str:
        """A position method for a 3-value target, a pose method for a 6-value one."""
        name = DEFAULT_METHOD if method == "" else method
        if size == 3:
            return resolve_method(name)
        return validate.choice(name, POSE_METHODS, "pose method (for a position6D target)")

    @_private
    def _hand_answer(self, arm: str, opening: float, end: float, speed: float | None = None) -> dict:
        hand, value, seconds = self._hand_command(arm, opening, end, speed)
        return {"arm": arm, "hand": hand, "opening": value, "moved": True, "moveSeconds": seconds}

    @_private
    def _hand_command(self, arm: str, opening: float, end: float, speed: float | None = None) -> tuple:
        """The hand's command, with the arm's checks: motor on, finite, inside the limits the robot reports.

        ``speed`` is its fractionMaxSpeed (default: the service's).

        Returns:
            (hand joint name, opening sent, seconds the move takes at the commanded speed).
        """
        hand = arm[0] + "Hand"
        limits = reply_limits(self._motion.call("getLimits", [hand], budget=_left(end)), [hand])[hand]
        try:
            lo, hi, velocity = (validate.number(v, hand) for v in limits[:3])
        except ValueError:
            lo, hi, velocity = math.nan, math.nan, math.nan
        if not (lo <= hi and velocity > 0):
            raise RuntimeError(f"ALMotion.getLimits returned unusable limits for {hand}: {limits}")
        _check_motors(arm, [hand], self._motion.numbers("getStiffnesses", [hand], count=1, budget=_left(end)))
        value = min(max(float(opening), lo), hi)
        if not math.isfinite(value):
            raise RuntimeError(f"{hand}: non-finite opening; nothing sent")
        speed = self._speed if speed is None else speed
        now = self._motion.numbers("getAngles", [hand], True, count=1, budget=_left(end))[0]
        self._motion.call("setAngles", [hand], [value], speed, budget=_left(end))
        return hand, value, abs(value - now) / velocity / speed

    @_private
    def _grasp(self, a: dict, job: Job, end: float) -> dict:
        arm = a["arm"]
        speed = a.get("fractionMaxSpeed", self._speed)
        self._arms[arm].take(job, _left(end))
        done: list = []
        try:
            self._settle(arm, end)  # the arm's earlier commands: none failed
            model, start = self._arm_state(arm, motors=True, end=end)
            plan = plan_grasp(a["target"], a["approach"], model, start, DEFAULT_METHOD)
            failed, reason = plan.failed, plan.reason
            if not failed:  # the whole plan holds: now move, each step after the last arrived
                current = start
                for step in plan.steps:
                    if job.stop.is_set():
                        failed, reason = step.name, f"{step.name}: {job.reason}"
                        break
                    try:
                        if step.angles is None:
                            hand, _, seconds = self._hand_command(arm, step.hand, end, speed)
                            self._wait_arrival([hand], [step.hand], seconds, job, end)
                        else:
                            safe, _, _, seconds, _ = self._command(
                                model, step.angles, current, True, end, step.name, speed, job
                            )
                            self._wait_arrival(list(model.names), safe, seconds, job, end, arm)
                            current = safe
                    except RuntimeError as e:
                        failed, reason = step.name, f"{step.name}: {e}"
                        break
                    done.append(step)
        finally:
            self._arms[arm].release(job)
        self._log.info(f"grasp {arm} at {list(a['target'])}: {'failed at ' + failed if failed else 'done'}")
        shown = done if done or not failed else plan.steps
        return {
            "arm": arm,
            "target": list(a["target"]),
            "approach": list(a["approach"]),
            "completed": not failed,
            "failedStep": failed,
            "reason": reason,
            "moved": bool(done),
            "steps": [
                {
                    "step": s.name,
                    "target": [] if s.target is None else list(s.target),
                    "reached": bool(s.reached),
                    "error": float(s.error),
                    "hand": -1.0 if s.hand is None else float(s.hand),
                }
                for s in shown
            ],
        }

    @_private
    def _wait_arrival(self, names: list, angles: list, seconds: float, job: Job, end: float,
                      arm: str | None = None) -> None:  # fmt: skip
        """Wait until the sensed angles are at the command (1 mrad, or SAG once still), the job is stopped, or
        time is up; an ``arm`` stopped short that the robot's protection holds raises :class:`RobotProtection`."""
        allowed = 2.0 * seconds + ARRIVAL_MARGIN
        limit = min(end, time.monotonic() + allowed)
        last, still = None, 0
        while True:
            now = self._motion.numbers("getAngles", names, True, count=len(names), budget=_left(end))
            off = _apart(now, angles)
            still = _still_for(still, now, last)
            if off <= ARRIVAL_TOLERANCE or still >= 2 and off <= SAG:
                return
            if arm is not None and still >= STOPPED_CYCLES and still % STOPPED_CYCLES == 0:
                self._protected(arm, end, "on its way")
            last = now
            if job.stop.wait(CYCLE):
                raise RuntimeError(job.reason)
            if time.monotonic() > limit:
                raise RuntimeError(f"the robot did not get there within {allowed:.1f} s (or the call's budget)")


def _apart(a: Any, b: Any) -> float:
    """How far apart two postures are: their largest joint difference (rad)."""
    return max(abs(x - y) for x, y in zip(a, b))


def _still_for(still: int, now: Any, last: Any) -> int:
    """Readings in a row the arm has not moved (by more than STILL a cycle), counting ``now``."""
    return still + 1 if last is not None and _apart(now, last) <= STILL else 0


class RobotProtection(RuntimeError):
    """The robot's own collision protection stopped an arm on its way (ALMotion's ``isCollision``)."""

    partial: tuple = ()


def _path_answer(arm: str, method: str, names: list, angles: list, errors: list, stopped: str, seconds: float) -> dict:
    """``trackPath``'s answer for the ``angles`` sent, of a path with these per-point ``errors``."""
    done = errors[: len(angles)] or errors[:1] or [0.0]
    return {
        "arm": arm,
        "method": method,
        "names": names,
        "angles": angles,
        "errors": errors[: len(angles)],
        "completed": False,
        "rmsError": float(math.sqrt(sum(e * e for e in done) / len(done))),
        "seconds": float(seconds),
        "sent": len(angles),
        "via": [],
        "stopped": stopped,
    }


def _check_motors(arm: str, names: list, stiffness: list) -> None:
    """Refuse an arm whose motors are off (the service does not switch them on by itself)."""
    off = [n for n, s in zip(names, stiffness) if not s > 0.0]
    if off:
        raise RuntimeError(
            f"{arm} motors are off (stiffness 0 on {', '.join(off)}): call ALMotion.wakeUp() or setStiffnesses first"
        )


def _side(target: tuple) -> str:
    return ARMS[0] if target[1] >= 0.0 else ARMS[1]


def _left(end: float) -> float:
    """Seconds left until ``end`` (monotonic), at least 0."""
    return max(0.0, end - time.monotonic())


def register(session: Any, speed: float = DEFAULT_SPEED, **options: Any) -> tuple[NaoArmIK, int]:
    """Create the service and register it as ``NaoArmIK`` on the session.

    Args:
        session: the robot's session.
        speed: default fraction of maximum speed.
        options: ``motion_timeout``, ``call_budget`` (see :class:`NaoArmIK`).

    Returns:
        The service object and its service id.
    """
    service = NaoArmIK(session, speed, **options)
    return service, session.registerService("NaoArmIK", service)
