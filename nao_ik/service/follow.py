"""``followTarget``: a target that moves, followed like a servo.

A caller streams targets (a ball the camera tracks, a face, a joystick) at up to 50 Hz; each ``followTarget`` call
sets the arm's latest target and answers at once. The first one takes the arm (a job, as a path is: a reach, a path
or ``stopPath`` on the arm ends the following) and starts the arm's loop, which every motion cycle:

1. reads the robot (:meth:`Engine.arm_state`: the arm's commanded and sensed angles, its motors, the other arm and
   the body as they are; the robot is the truth, so an arm another program moved ends the following);
2. solves the latest target from the arm's command (the analytic solution nearest it: continuous);
3. takes one step of the motion core (:func:`nao_ik.motion.stream.step`): the next short command on the straight
   joint-space line toward that solution, certified from everywhere the arm may be, slowed near the body, sliding
   along its margin where the line is in it;
4. sends it (:meth:`Engine.send_streamed`), unless another command went since the reading.

Once no target has come for the follow timeout (:data:`FOLLOW_TIMEOUT`, ``setFollowTimeout``), the loop sends
nothing more: a caller that dies or disconnects never leaves an arm moving for longer than that, the last command's
few cycles of motion and its braking. ``stopFollowing(arm)`` ends it at once. ``getArmState`` tells the tracking
error (the hand against the latest target received) and why the arm is held back.
"""

from __future__ import annotations

import math
import threading
import time

from ..api.position import solve
from ..kinematics.chain import forward
from ..model.body import MARGIN
from ..motion.stream import Sent, step
from .engine import CYCLE, MOVED_OFF, Engine
from .jobs import Job
from .link import first_line

#: Seconds without a new target after which a following sends nothing more (``setFollowTimeout`` changes it).
FOLLOW_TIMEOUT = 0.5
#: The longest follow timeout a caller may set (s).
MOST_TIMEOUT = 10.0
#: Seconds of the stream's commands kept for the region of the next one (more than LAG + BRAKE).
KEPT = 2.0


class _Follow:
    """One arm's following: its job, its latest target, and what its loop last saw."""

    def __init__(self, arm: str, job: Job):
        self.arm = arm
        self.job = job
        self.target: list = []
        self.fraction = 0.2
        self.received = 0.0
        self.updates = 0
        self.held = ""
        self.ended = ""
        self.error = math.nan
        self.thread: threading.Thread | None = None


class Following:
    """The arms' followings (one loop thread per followed arm) on an engine."""

    def __init__(self, engine: Engine):
        self._engine = engine
        self._lock = threading.Lock()
        self._arms: dict[str, _Follow] = {}
        self.timeout = FOLLOW_TIMEOUT
        #: Per cycle of each loop, the CPU seconds (this thread's; waits excluded) of its solve and of its motion-core
        #: step, newest last.
        self.cycle_seconds: list[tuple[float, float]] = []

    def set_timeout(self, seconds: float) -> None:
        if not 0.0 < seconds <= MOST_TIMEOUT:
            raise ValueError(f"the follow timeout must be in (0, {MOST_TIMEOUT:g}] seconds, got {seconds!r}")
        self.timeout = float(seconds)

    def update(self, arm: str, target: list, fraction: float, end: float) -> dict:
        """Set the arm's target (FRAME_TORSO metres) at ``fraction``; start following where it does not yet."""
        with self._lock:
            f = self._arms.get(arm)
            if f is None or f.job.stop.is_set():
                f = self._start(arm, end)
            f.target, f.fraction, f.received = list(target), fraction, time.monotonic()
            f.updates += 1
            if f.thread is None:
                f.thread = threading.Thread(target=self._loop, args=(f,), name=f"follow-{arm}", daemon=True)
                f.thread.start()
        return {"arm": arm, "target": list(target), "following": True, "fractionMaxSpeed": fraction,
                "timeout": self.timeout}  # fmt: skip

    def _start(self, arm: str, end: float) -> _Follow:
        """Take the arm for a new following (a reach or a path there stops): its motors on, the arm seen at rest or
        on the service's own way (the engine's rule for a call that moves)."""
        engine = self._engine
        job = Job("followTarget")
        engine.arms[arm].take(job, max(0.0, end - time.monotonic()))
        try:
            engine.arm_state(arm, motors=True, end=end)
        except BaseException:
            engine.arms[arm].release(job)
            raise
        f = _Follow(arm, job)
        self._arms[arm] = f
        return f

    def stop(self, arm: str, reason: str) -> bool:
        """End the arm's following (True if it was following) once its loop has sent its last command."""
        with self._lock:
            f = self._arms.get(arm)
        if f is None or f.job.stop.is_set() and (f.thread is None or not f.thread.is_alive()):
            return False
        f.job.cancel(reason)
        if f.thread is not None:
            f.thread.join(self._engine.motion.timeout + 2 * CYCLE)
        return True

    def status(self, arm: str) -> dict:
        """What ``getArmState`` adds: ``following``, ``followTarget`` (the latest target received, [] if none),
        ``trackingError`` (m, the hand against it; NaN before the first cycle), ``heldBack`` (why the arm does not go
        at its speed, "" where it does) and ``followEnded`` (why the last following ended, "" while it runs)."""
        with self._lock:
            f = self._arms.get(arm)
        if f is None:
            return {"following": False, "followTarget": [], "trackingError": math.nan, "heldBack": "",
                    "followEnded": ""}  # fmt: skip
        running = f.thread is not None and f.thread.is_alive() and not f.job.stop.is_set()
        return {"following": running, "followTarget": list(f.target), "trackingError": f.error, "heldBack": f.held,
                "followEnded": "" if running else f.ended or f.job.reason}  # fmt: skip

    def _loop(self, f: _Follow) -> None:
        """One arm's loop: read, solve, step, send, once a cycle until stopped or no target comes."""
        engine, arm = self._engine, f.arm
        sent: list[Sent] = []
        futures: list = []  # each sent command's setAngles call
        goal, solved = None, None
        due = time.monotonic()
        try:
            while True:
                due = max(due + CYCLE, time.monotonic() - CYCLE)
                if f.job.stop.wait(max(0.0, due - time.monotonic())):
                    f.ended = f.job.reason
                    return
                now = time.monotonic()
                if now - f.received > self.timeout:
                    f.ended = f"no target came for {self.timeout:g} s: nothing more sent"
                    return
                end = now + engine.budget
                model, sensed = engine.arm_state(arm, motors=True, end=end, settle=0.0)
                if engine.unknown(arm):
                    f.ended = MOVED_OFF
                    return
                asked, commanded = engine.reading(arm)
                target = f.target
                c0 = time.thread_time()
                if solved is not target:  # the latest target, from the arm's command: the nearest solution
                    goal = list(solve(target, model._replace(body=()), "analytic", initial=commanded).angles)
                    solved = target
                c1 = time.thread_time()
                s = step(model, model.body, model.clamp(commanded), asked, model.clamp(goal), f.fraction, sent, MARGIN)
                self.cycle_seconds.append((c1 - c0, time.thread_time() - c1))
                del self.cycle_seconds[:-10000]
                f.held = s.held
                f.error = float(math.dist(forward(model, sensed), target))
                if s.command is not None:
                    entry = engine.send_streamed(arm, list(model.names), s.command, s.fraction, end)
                    if entry is not None:
                        sent.append(Sent(s.command, s.fraction, entry.sent, s.box))
                        futures.append(entry.future)
                        while sent and sent[0].at < now - KEPT:
                            sent.pop(0)
                            futures.pop(0)
                for s_, future in zip(sent, futures):  # when ALMotion's answers came: it took them by then
                    if s_.answered is None and future is not None and future.isFinished():
                        s_.answered = time.monotonic()
        except Exception as e:  # the robot's reading or ALMotion failed, motors off: nothing more sent
            f.ended = first_line(e)
            engine.log.warning(f"followTarget {arm} ended", f"followTarget {arm}: {f.ended}")
        finally:
            f.job.cancel(f.ended or "ended")
            engine.arms[arm].release(f.job)
