"""``NaoArmIK``: the qi service that moves NAO's arms to Cartesian targets.

Register it on a session connected to a robot (or to ``nao-ik sim``)::

    session.registerService("NaoArmIK", NaoArmIK(session))

and call it from anywhere on that robot's service directory::

    ik = session.service("NaoArmIK")
    ik.reachTo(0.15, 0.10, 0.05, "analytic")

This module is the qi surface: each method decodes its call's arguments and submits the work
(:mod:`nao_ik.service.reach`, :mod:`~nao_ik.service.paths`, :mod:`~nao_ik.service.both`,
:mod:`~nao_ik.service.hands`) to the service's threads; the work sends through the command engine
(:mod:`nao_ik.service.engine`).

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

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import qi

from ..api.position import METHODS
from ..model import validate
from ..model.arm import ARMS
from . import follow, paths, reach
from .args import decode
from .arm_calls import ArmCalls
from .engine import CYCLE, Engine
from .jobs import Job
from .kept import Kept, robot
from .link import MOTION_TIMEOUT
from .log import ServiceLog
from .methods import publish
from .motions import DEFAULT_SPEED

_private = qi.nobind  # helpers are not published over qi

LOG_CATEGORY = "nao_ik.NaoArmIK"
#: The name the service registers under (a second instance on the same robot takes another).
SERVICE_NAME = "NaoArmIK"
#: Seconds a call may take, from its arrival to its answer (a path: plus its budget per point, :mod:`.paths`).
CALL_BUDGET = 10.0

#: Threads that run the calls' work; more concurrent calls wait for one (within their budget).
WORKERS = 8
#: How often (s) a thread that computes hands Python's lock to the others. Python's default, 5 ms, made a
#: ``computeAngles`` wait 0.47 s while a path was computed on the other arm (each of its many hand-overs
#: waited out a full interval); at 0.5 ms it takes 0.05 s (``tests/system/test_path_jobs.py`` measures it).
SWITCH_INTERVAL = 0.0005

_ANSWER = qi.Map(qi.String, qi.Dynamic)


@qi.multiThreaded()
@publish
class NaoArmIK(ArmCalls):
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
        path_compute_budget: float = paths.PATH_COMPUTE_BUDGET,
        body: bool = True,
        name: str = SERVICE_NAME,
    ):
        self._configured = validate.speed(speed)
        budget = validate.positive(call_budget, "call_budget")
        self._path_compute = validate.positive(path_compute_budget, "path_compute_budget")
        timeout = validate.positive(motion_timeout, "motion_timeout")
        self._log = ServiceLog(LOG_CATEGORY)
        self._kept = Kept(robot(session, timeout), name)  # the speed a caller set, across restarts
        speed = self._kept.speed(self._configured)
        self._engine = Engine(session, speed, timeout, budget, bool(body), self._log)
        self._workers = ThreadPoolExecutor(WORKERS, thread_name_prefix="NaoArmIK")
        self._following = follow.Following(self._engine)
        self._closing = threading.Event()
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))

    # ------------------------------------------------------------ qi methods

    @qi.bind(_ANSWER, [qi.Dynamic] * 4)
    def reachTo(self, x: Any, y: Any, z: Any, method: Any) -> Any:
        """Move the arm on the target's side (y >= 0: LArm) to (x, y, z), FRAME_TORSO metres."""
        a = self._decode("reachTo", (x, y, z, method))
        return self._submit("reachTo", lambda job, end: reach.reach(self._engine, _side(a["target"]), a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def reachToWithArm(self, arm: Any, x: Any, y: Any, z: Any, method: Any) -> Any:
        """Move the named arm ("LArm" or "RArm") to (x, y, z)."""
        a = self._decode("reachToWithArm", (arm, x, y, z, method))
        return self._submit("reachToWithArm", lambda job, end: reach.reach(self._engine, a["arm"], a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 6)
    def reachToWithSpeed(self, arm: Any, x: Any, y: Any, z: Any, method: Any, fractionMaxSpeed: Any) -> Any:  # noqa: N803
        """``reachToWithArm`` at this call's own fraction of the joints' maximum speed, in [0.01, 1].

        The service's default (``setSpeed``) is left alone: callers do not change each other's speed.
        """
        a = self._decode("reachToWithSpeed", (arm, x, y, z, method, fractionMaxSpeed))
        return self._submit("reachToWithSpeed", lambda job, end: reach.reach(self._engine, a["arm"], a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def computeAngles(self, arm: Any, x: Any, y: Any, z: Any, method: Any) -> Any:
        """The answer ``reachToWithArm`` would send, without moving the robot."""
        a = self._decode("computeAngles", (arm, x, y, z, method))
        return self._submit("computeAngles", lambda job, end: reach.reach(self._engine, a["arm"], a, None, end))

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
        return self._submit("computeAllSolutions",
                            lambda job, end: reach.all_solutions(self._engine, a["arm"], a["target"], end))  # fmt: skip

    @qi.bind(_ANSWER, [qi.Dynamic] * 3)
    def trackPath(self, arm: Any, points: Any, method: Any) -> Any:
        """Follow a Cartesian path with the named arm: one ``setAngles`` per point, at ALMotion's 50 Hz.

        ``points`` is a list of [x, y, z] (FRAME_TORSO metres, at most 2000).
        With ``analytic`` (the default) the whole path is planned before the
        first command (:func:`nao_ik.plan_path`: the elbow's swivel chosen
        for every point at once, so the arm never swings across where a
        continuous motion exists); a path that needs a jump is refused, the
        jump named (``trackPathWithOptions`` can allow it). The other
        methods follow Oyama & Tachi's tracking control (see
        :mod:`nao_ik.recipes.track`) from the arm's current posture. All the angles
        are computed and checked before the first command is sent. The path
        is a job on its arm: ``stopPath(arm)``, a reach or another path on
        that arm, or the caller cancelling its future stop it before its
        next command. Returns a map: ``arm``, ``method``, ``names``,
        ``angles`` (per point), ``errors`` (m, per point), ``completed``,
        ``rmsError``, ``seconds``, ``sent`` (commands sent), ``stopped`` (why
        it stopped early, ``""`` if it did not), ``planned`` (whether the
        path was planned whole), ``planMs`` (the plan's time), ``jumps``
        (the planned jumps allowed: [point, radians] each), ``via``, ``slowed``
        and ``slowedVia`` (``trackPathWithOptions``' ``slowAtJumps``).
        """
        a = self._decode("trackPath", (arm, points, method))
        return self._path("trackPath", a)

    @qi.bind(_ANSWER, [qi.Dynamic] * 4)
    def trackPathWithSpeed(self, arm: Any, points: Any, method: Any, fractionMaxSpeed: Any) -> Any:  # noqa: N803
        """``trackPath`` at this call's own fraction of the joints' maximum speed, in [0.01, 1]."""
        a = self._decode("trackPathWithSpeed", (arm, points, method, fractionMaxSpeed))
        return self._path("trackPathWithSpeed", a)

    @qi.bind(_ANSWER, [qi.Dynamic] * 3)
    def trackPathWithOptions(self, arm: Any, points: Any, options: Any) -> Any:
        """``trackPath`` with a map of options: ``method`` ("" the default), ``fractionMaxSpeed`` (in [0.01, 1]),
        ``allowJumps`` (default false: a path whose plan needs a jump is refused before anything moves, the
        jump named; true: it is followed, the jump sent as one step, checked like every other),
        ``slowAtJumps`` (true: at each allowed jump the arm is waited for, the jump sent like a reach at the
        path's speed and waited for, then the stream goes on; the answer's ``slowed`` lists those points,
        ``slowedVia`` the legs sent before them)."""
        a = self._decode("trackPathWithOptions", (arm, points, options))
        a.update({"method": "", **a.pop("options")})
        return self._path("trackPathWithOptions", a)

    @qi.bind(_ANSWER, [qi.Dynamic] * 4)
    def reachToPose(self, arm: Any, position6D: Any, axisMask: Any, method: Any) -> Any:  # noqa: N803 (qi names)
        """Give the named arm's hand a pose: ``position6D`` [x, y, z, wx, wy, wz] (FRAME_TORSO, Rz*Ry*Rx).

        ``axisMask`` (1..63: X 1, Y 2, Z 4, WX 8, WY 16, WZ 32) selects the
        components that count, as in ALMotion.setPositions; ``method`` one of
        the pose methods (any position method with axisMask 7), "" the
        default; its angles are radians within +-2 pi (a larger one is refused: degrees). Answers like
        ``reachToWithArm`` (without ``shortfall``, ``refined``, ``otherSolution``) plus ``position6D``,
        ``axisMask``, ``positionError`` (m) and ``orientationError`` (rad); not reached, ``reason`` says
        why (what is left of the pose: ``"orientation: 35.5 degrees off"``). A pose whose only answers go
        through the body is answered ``reached`` false, ``"collision: <part>"``, and not sent.
        """
        a = self._decode("reachToPose", (arm, position6D, axisMask, method))
        return self._submit("reachToPose", lambda job, end: reach.reach_pose(self._engine, a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def reachToPoseWithSpeed(  # noqa: N803 (qi names)
        self, arm: Any, position6D: Any, axisMask: Any, method: Any, fractionMaxSpeed: Any
    ) -> Any:
        """``reachToPose`` at this call's own fraction of the joints' maximum speed, in [0.01, 1]."""
        a = self._decode("reachToPoseWithSpeed", (arm, position6D, axisMask, method, fractionMaxSpeed))
        return self._submit("reachToPoseWithSpeed", lambda job, end: reach.reach_pose(self._engine, a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 4)
    def computePose(self, arm: Any, position6D: Any, axisMask: Any, method: Any) -> Any:  # noqa: N803 (qi names)
        """The answer ``reachToPose`` would send, without moving the robot."""
        a = self._decode("computePose", (arm, position6D, axisMask, method))
        return self._submit("computePose", lambda job, end: reach.reach_pose(self._engine, a, None, end))

    @qi.bind(qi.List(qi.Double), [qi.Dynamic])
    def getPose(self, arm: Any) -> Any:
        """The named arm's hand pose [x, y, z, wx, wy, wz] (FRAME_TORSO) from the robot's sensed angles."""
        a = self._decode("getPose", (arm,))

        return self._submit("getPose", lambda job, end: reach.hand_pose(self._engine, a["arm"], end))

    @qi.bind(_ANSWER, [qi.Dynamic])
    def getArmState(self, arm: Any) -> Any:
        """The named arm as the robot shows it now: ``state`` "moving", "arrived" (at the service's last command),
        "stopped" (short of it; ``reason`` says why) or "still" (no command of the service's under way)."""
        a = self._decode("getArmState", (arm,))
        arm = a["arm"]
        following = self._following
        return self._submit("getArmState", lambda job, end: dict(self._engine.state(arm, end), **following.status(arm)))

    @qi.bind(qi.Bool, [qi.Dynamic])
    def stopPath(self, arm: Any) -> bool:
        """Stop the path running on ``arm`` before its next command; True if one was running.

        Returns once the path has sent its last command.
        """
        a = self._decode("stopPath", (arm,))
        return self._engine.arms[a["arm"]].stop("stopped by stopPath", self._engine.motion.timeout + CYCLE)

    # ------------------------------------------------------------ a target that moves (nao_ik.service.follow)

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def followTarget(self, arm: Any, x: Any, y: Any, z: Any, frame: Any) -> Any:
        """Set (or update) the named arm's target, in ``frame`` (0 FRAME_TORSO, 1 FRAME_WORLD, 2 FRAME_ROBOT), and
        answer at once; the arm follows the latest target continuously at the service's speed, clear of the body,
        until ``stopFollowing(arm)``, a reach or path on the arm, or no update for the follow timeout
        (``setFollowTimeout``). Stream updates at up to 50 Hz; ``getArmState(arm)`` tells the tracking error and why
        the arm is held back.
        """
        a = self._decode("followTarget", (arm, x, y, z, frame))
        return self._submit("followTarget", lambda job, end: self._follow_in_frame(a, None, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 6)
    def followTargetWithSpeed(self, arm: Any, x: Any, y: Any, z: Any, frame: Any, fractionMaxSpeed: Any) -> Any:  # noqa: N803
        """``followTarget`` at this call's own fraction of the joints' maximum speed, in [0.01, 1]."""
        a = self._decode("followTargetWithSpeed", (arm, x, y, z, frame, fractionMaxSpeed))
        speed = a["fractionMaxSpeed"]
        return self._submit("followTargetWithSpeed", lambda job, end: self._follow_in_frame(a, speed, end))

    @qi.bind(qi.Bool, [qi.Dynamic])
    def stopFollowing(self, arm: Any) -> bool:
        """End the named arm's following (it sends nothing more); True if it was following."""
        a = self._decode("stopFollowing", (arm,))
        return self._following.stop(a["arm"], "stopped by stopFollowing")

    @qi.bind(qi.Void, [qi.Dynamic])
    def setFollowTimeout(self, seconds: Any) -> None:
        """Seconds without a ``followTarget`` update after which a following sends nothing more, in (0, 10]."""
        a = self._decode("setFollowTimeout", (seconds,))
        self._following.set_timeout(a["seconds"])

    @qi.bind(qi.Double, [])
    def getFollowTimeout(self) -> float:
        """The follow timeout (s)."""
        return self._following.timeout

    @qi.bind(qi.List(qi.String), [])
    def getMethods(self) -> list:
        """The IK methods this service knows."""
        return list(METHODS)

    @qi.bind(qi.Void, [qi.Dynamic])
    def setSpeed(self, fraction: Any) -> None:
        """Default fraction of the joints' maximum speed for motions, in [0.01, 1]; kept across the service's
        restarts on this robot (:mod:`nao_ik.service.kept`)."""
        self._engine.speed = self._decode("setSpeed", (fraction,))["fraction"]
        self._kept.set_speed(self._configured, self._engine.speed)

    @qi.bind(qi.Double, [])
    def getSpeed(self) -> float:
        """The current fraction of maximum speed."""
        return self._engine.speed

    # --------------------------------------------------------------- shutdown

    @_private
    def close(self, timeout: float = 5.0) -> None:
        """Stop every path, refuse new calls, and wait (at most ``timeout`` s) for running calls."""
        end = time.monotonic() + timeout
        self._closing.set()
        self._engine.close(end)
        self._workers.shutdown(wait=False, cancel_futures=True)
        for t in list(getattr(self._workers, "_threads", ())):
            t.join(max(0.0, end - time.monotonic()))

    # ------------------------------------------------------------- internals

    @_private
    def cycle_seconds(self) -> list:
        """The follow loops' CPU seconds per cycle, (solve, motion-core step) each, the newest 10,000 (not over qi)."""
        return list(self._following.cycle_seconds)

    @_private
    def _follow_in_frame(self, a: dict, fraction: float | None, end: float) -> dict:
        return follow.follow_in_frame(self._engine, self._following, a, fraction, end)

    @_private
    def _path(self, name: str, a: dict) -> Any:
        """Submit the path ``a``: its budget grows with its points (:func:`nao_ik.service.paths.extra`)."""
        compute = self._path_compute
        return self._submit(name, lambda job, end: paths.track(self._engine, a["arm"], a, job, end, compute),
                            paths.extra(a, self._engine.budget, compute))  # fmt: skip

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
        end = time.monotonic() + self._engine.budget + extra
        promise = qi.Promise(lambda p: job.cancel("cancelled by the caller"))

        def run() -> None:
            try:
                if time.monotonic() > end:
                    raise RuntimeError(f"{name} waited for a free thread past its {self._engine.budget:g} s budget")
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


def _side(target: tuple) -> str:
    return ARMS[0] if target[1] >= 0.0 else ARMS[1]


def register(session: Any, speed: float = DEFAULT_SPEED, name: str = SERVICE_NAME,
             **options: Any) -> tuple[NaoArmIK, int]:  # fmt: skip
    """Create the service and register it as ``name`` (default ``NaoArmIK``) on the session.

    Args:
        session: the robot's session.
        speed: default fraction of maximum speed.
        name: the name callers find it by.
        options: ``motion_timeout``, ``call_budget`` (see :class:`NaoArmIK`).

    Returns:
        The service object and its service id.
    """
    service = NaoArmIK(session, speed, name=name, **options)
    return service, session.registerService(name, service)
