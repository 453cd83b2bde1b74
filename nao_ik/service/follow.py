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
from collections import deque
from typing import Any

from ..api.position import solve
from ..kinematics.chain import forward
from ..model.body import MARGIN
from ..motion.stream import Sent, step
from . import answers
from .engine import CYCLE, Engine
from .jobs import Job
from .link import first_line
from .reach import target_in_torso
from .record import MOVED_OFF

#: Seconds without a new target after which a following sends nothing more (``setFollowTimeout`` changes it).
FOLLOW_TIMEOUT = 0.5
#: The longest follow timeout a caller may set (s).
MOST_TIMEOUT = 10.0
#: Seconds of the stream's commands kept for the region of the next one (more than LAG + BRAKE).
KEPT = 2.0


class _Follow:
    """One arm's following: its job, its latest target, and what its loop last saw."""

    def __init__(self, arm: str, job: Job, fraction: float):
        self.arm = arm
        self.job = job
        self.target: list = []
        self.fraction = fraction
        self.received = 0.0
        self.held = ""
        self.ended = ""
        self.error = math.nan
        self.thread: threading.Thread | None = None


class Following:
    """The arms' followings (one loop thread per followed arm) on an engine."""

    def __init__(self, engine: Engine):
        self._engine = engine
        self._lock = threading.Lock()  # the followings' targets and ends; held briefly, never across a wait
        self._starting = {arm: threading.Lock() for arm in engine.arms}  # one start per arm at a time
        self._arms: dict[str, _Follow] = {}
        self.timeout = FOLLOW_TIMEOUT
        #: Per cycle of the loops, the CPU seconds (the loop thread's; waits excluded) of its solve and of its
        #: motion-core step, the newest 10,000 (``nao_ik.evidence.follow_bench`` reports them).
        self.cycle_seconds: deque[tuple[float, float]] = deque(maxlen=10000)

    def set_timeout(self, seconds: float) -> None:
        if not 0.0 < seconds <= MOST_TIMEOUT:
            raise ValueError(f"the follow timeout must be in (0, {MOST_TIMEOUT:g}] seconds, got {seconds!r}")
        self.timeout = float(seconds)

    def update(self, arm: str, target: list, fraction: float, end: float) -> dict:
        """Set the arm's target (FRAME_TORSO metres) at ``fraction``; start following where it does not yet."""
        with self._starting[arm]:
            while True:
                with self._lock:
                    f = self._arms.get(arm)
                    if f is not None and not f.job.stop.is_set():  # running: its loop takes the new target
                        f.target, f.fraction, f.received = list(target), fraction, time.monotonic()
                        break
                f = self._start(arm, fraction, end)  # may wait for the arm, without the lock
                with self._lock:
                    f.target, f.received = list(target), time.monotonic()
                    self._arms[arm] = f
                f.thread = threading.Thread(target=self._loop, args=(f,), name=f"follow-{arm}", daemon=True)
                f.thread.start()
                break
        return {"arm": arm, "target": list(target), "following": True, "fractionMaxSpeed": fraction,
                "timeout": self.timeout}  # fmt: skip

    def _start(self, arm: str, fraction: float, end: float) -> _Follow:
        """Take the arm for a new following (:meth:`Engine.take`: a reach or a path there stops): its motors on, the
        arm seen at rest or on the service's own way (the engine's rule for a call that moves)."""
        engine = self._engine
        job = Job("followTarget")
        engine.take((arm,), job, end)
        try:
            engine.arm_state(arm, motors=True, end=end)
        except BaseException:
            engine.give((arm,), job)
            raise
        return _Follow(arm, job, fraction)

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
        unanswered: list[tuple[Sent, Any]] = []  # commands whose setAngles answer has not come, and their calls
        goal, solved = None, None
        due = time.monotonic()
        try:
            while True:
                due = max(due + CYCLE, time.monotonic() - CYCLE)
                if f.job.stop.wait(max(0.0, due - time.monotonic())):
                    f.ended = f.job.reason
                    return
                now = time.monotonic()
                with self._lock:  # an update meanwhile either comes before this or starts a new following
                    if now - f.received > self.timeout:
                        f.ended = f"no target came for {self.timeout:g} s: nothing more sent"
                        f.job.cancel(f.ended)
                        return
                    target, fraction = f.target, f.fraction
                end = now + engine.budget
                engine.settle(arm, end)  # a command ALMotion refused ends the following; the answered ones go
                model, sensed = engine.arm_state(arm, motors=True, end=end, settle=0.0)
                if engine.unknown(arm):
                    f.ended = MOVED_OFF
                    return
                asked, commanded = engine.reading(arm)
                c0 = time.thread_time()
                if solved is not target:  # the latest target, from the arm's command: the nearest solution
                    goal = list(solve(target, model._replace(body=()), "analytic", initial=commanded).angles)
                    solved = target
                c1 = time.thread_time()
                s = step(model, model.body, model.clamp(commanded), asked, model.clamp(goal), fraction, sent, MARGIN)
                self.cycle_seconds.append((c1 - c0, time.thread_time() - c1))
                f.held = s.held
                f.error = float(math.dist(forward(model, sensed), target))
                if s.command is not None:
                    entry = engine.send_streamed(arm, list(model.names), s.command, s.fraction, end)
                    if entry is not None:
                        sent.append(Sent(s.command, s.fraction, entry.sent, s.box))
                        unanswered.append((sent[-1], entry.future))
                        sent = [c for c in sent if c.at >= now - KEPT]
                answered = time.monotonic()  # ALMotion took each command whose answer came by now
                for command, future in unanswered:
                    if future is None or future.isFinished():
                        command.answered = answered
                unanswered = [(c, fu) for c, fu in unanswered if c.answered is None]
        except Exception as e:  # the robot's reading or ALMotion failed, motors off: nothing more sent
            f.ended = first_line(e)
            engine.log.warning(f"followTarget {arm} ended", f"followTarget {arm}: {f.ended}")
        finally:
            f.job.cancel(f.ended or "ended")
            engine.give((arm,), f.job)


def follow_in_frame(engine: Engine, following: Following, a: dict, fraction: float | None, end: float) -> dict:
    """``followTarget``'s work: the call's target (in ``a["frame"]``) set as the arm's, at ``fraction`` (None: the
    service's speed)."""
    t = target_in_torso(engine, a, end)
    speed = engine.speed if fraction is None else fraction
    answer = following.update(a["arm"], [float(v) for v in t], speed, end)
    return answers.in_frame(answer, a["frame"], "targetInFrame", a["target"])
