"""The command engine: what stands between a call's answer and ``ALMotion.setAngles``, written once.

It keeps the robot's limits as a model per arm, reads the robot (:mod:`nao_ik.service.sensed`), holds its record
of the commands against every reading (:mod:`nao_ik.service.record`: the robot is the truth), and sends every arm
command through the same checks: finite, clamped into the limits the robot reported, clear of the body at the
robot's posture (the other arm included, where it is and where it may be on its way), and a motion to it
that does not cross the body (swung out around it where needed, each leg sent once the arm got there).

Who commands an arm is decided by :mod:`nao_ik.service.jobs`; :meth:`Engine.take` is the one place that takes an
arm for a job and hears of its earlier commands' failure (:meth:`Engine.give` gives it back; :meth:`Engine.held`
does both around a block). The record of the commands is :mod:`nao_ik.service.record`; the routes from where an arm
may be to a goal, :mod:`nao_ik.service.routes`; waiting for an arm and what the robot shows of it,
:mod:`nao_ik.service.arm_watch`; the words they share, :mod:`nao_ik.service.motions`.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from typing import Any, Callable, Iterable, Iterator, NamedTuple

from ..geometry.collision import clearance, posture_body
from ..geometry.scalar.sweep import CYCLE, apart
from ..geometry.sweep import ARRIVED, stream_body, sweep_from
from ..geometry.sweep import seconds as move_seconds
from ..model.arm import ARMS, ArmModel, arm_model
from ..model.body import MARGIN
from ..model.body import OTHER_ARM as OTHER_ARM_PART
from ..model.body_data import BODY_JOINTS
from ..motion.truth import FOREIGN, FOREIGN_WAIT, SETTLE, anywhere, check_motors
from .arm_watch import ArmWatch
from .jobs import ArmChannel, Job
from .link import MotionLink, Unanswered, first_line, reply_limits
from .log import ServiceLog
from .motions import (
    OTHER_ARM,
    Command,
    NoAnswer,
    StoppedOnItsWay,
    left,
)
from .record import Aimed, Record
from .routes import Routing
from .sensed import SensedCache

#: While an arm streams a path, the other arm's body holds it from its reading on through this many of the points
#: sent last (its reading, at most :data:`~nao_ik.service.sensed.MAX_AGE` old, may come from before the newest of
#: them) and those still to come.
STREAMED = 4
#: Why a command checked against a body read before the other arm's latest command is refused.
MET = "collision: the other arm was just sent where this motion would meet it"


class Promise(NamedTuple):
    """A path promised on an arm (:meth:`Engine.promise`): what the other arm's body holds it anywhere on."""

    rest: list  # the commands still to come
    speed: float  # their fractionMaxSpeed
    lead: bool  # the stream waits for the arm within ARRIVED of the first of them
    recent: list  # the STREAMED commands sent last (the arm's last command at the promise, then each one sent)


class Engine(Routing, ArmWatch):
    """The arms' state and the one path of their commands.

    Args:
        session: a qi session connected to the robot's service directory.
        speed: default ``fractionMaxSpeed`` for ``setAngles`` (:attr:`speed`; ``setSpeed`` changes it).
        motion_timeout: seconds each ALMotion call may take.
        budget: seconds each call may take (named in the messages of a call over it).
        body: keep the arms clear of the body. Off only to measure what the check costs.
        log: the service's log.
    """

    def __init__(self, session: Any, speed: float, motion_timeout: float, budget: float, body: bool,
                 log: ServiceLog):  # fmt: skip
        self.speed = speed
        self.budget = budget
        self.log = log
        self._body = body
        self._models: dict[str, ArmModel] = {}
        # Commands recorded so far (any arm), and the count each thread's last arm_state saw: a command checked
        # against a body older than the last command is checked again before it goes (:meth:`_send_checked`).
        self._commit = threading.RLock()
        self._aims = 0
        self._seen = threading.local()
        # Each arm's commands, held against every reading of the robot (the robot is the truth).
        self.record = Record(self._commit, lambda arm: self._models.get(arm) or arm_model(arm))
        self.motion = MotionLink(session, motion_timeout, self._new_motion)
        names = [n for arm in ARMS for n in arm_model(arm).names] + BODY_JOINTS
        self.sensed = SensedCache(self.motion, names, observe=self._observe)
        self._sent = {arm: Unanswered(self.motion) for arm in ARMS}  # the arms' commands not answered yet
        # Arms with a command ALMotion never answered or failed (it may have run, or may still): never taken as
        # at rest again (a new ALMotion proxy does not tell what the old one ran).
        self._lost: set[str] = set()
        # The path each arm streams (:meth:`promise`): the other arm's body holds it anywhere on it.
        self._ahead: dict[str, Promise] = {}
        # Per arm, the last body built (:meth:`arm_state`) and what it was built from: calls within one reading
        # cycle share it (the other arm's region costs a hundred microseconds and more).
        self._bodies: dict[str, tuple] = {}
        self.arms = {arm: ArmChannel(arm) for arm in ARMS}

    def close(self, end: float) -> None:
        """Stop reading the robot and stop every path, waiting for each until ``end`` (monotonic) at most."""
        self.sensed.close()
        for channel in self.arms.values():
            channel.stop("the service is stopping", left(end))

    @contextlib.contextmanager
    def held(self, arms: tuple | list, job: Job, end: float, take_by: float | None = None) -> Iterator[None]:
        """Hold ``arms`` for ``job`` meanwhile (:meth:`take`), each given back at the end whatever happens."""
        try:
            self.take(arms, job, end, take_by)
            yield
        finally:
            self.give(arms, job)

    def take(self, arms: tuple | list, job: Job, end: float, take_by: float | None = None) -> None:
        """Take ``arms`` for ``job``: each in turn (stopping a path there; by ``take_by``, default ``end``), then each
        arm's earlier commands heard of (:meth:`settle`: none failed). A job that takes arms gives them back
        (:meth:`give`) whatever happens; :meth:`held` does both.

        Two callers that take both arms take them in the same order (ARMS), so neither waits for the other's
        second arm.
        """
        for arm in arms:
            self.arms[arm].take(job, left(end if take_by is None else take_by))
        for arm in arms:
            self.settle(arm, end)

    def give(self, arms: tuple | list, job: Job) -> None:
        """Give back the arms ``job`` took (:meth:`take`)."""
        for arm in arms:
            self.arms[arm].release(job)

    @contextlib.contextmanager
    def holding(self, arm: str, job: Job | None, end: float) -> Iterator[tuple]:
        """The arm's model and sensed posture (:meth:`arm_state`); with a job, the arm is held meanwhile.

        A job takes the arm (:meth:`held`) and needs the motors on; without one (a computation) nothing is held.
        """
        if job is None:
            yield self.arm_state(arm, motors=False, end=end)
            return
        with self.held((arm,), job, end):
            yield self.arm_state(arm, motors=True, end=end)

    def command(self, model: ArmModel, angles: Any, start: Any, move: bool, end: float, what: str,
                speed: float | None = None, job: Job | None = None, still: bool = False,
                others: Callable[[ArmModel, list], Iterable[list]] | None = None) -> Command:  # fmt: skip
        """The last line of defence before setAngles, and the commands themselves when moving.

        Nothing non-finite is sent; the angles are clamped into the robot's limits; a posture within
        the body's margin (``model.body``: NAO's body at its posture and the other arm) is never sent;
        the motion to it is checked (:func:`nao_ik.geometry.sweep.plan`): where the direct motion would cross
        the body, the arm is first swung out (the sequence's commands are sent in turn, each once its motion
        is certified from the rest of the arm's way to the one before, at the latest once the arm stopped
        there; a later call on the arm ends the sequence); where no safe sequence
        exists, nothing is sent. The (last) command goes out without waiting for ALMotion's answer
        (:meth:`send`); ``speed`` is its fractionMaxSpeed (default: the service's). ``still``: ``start`` was read
        once the arm was seen still (:meth:`wait_still`); where it is :meth:`at_rest` short of its last command,
        the motion is checked from there alone. ``others(model, start)``: other postures that do the same task
        (other exact solutions of a reach's target), best first; where the motion to ``angles`` would need legs
        or a wait for the arm, the first of them whose motion goes direct (:func:`~nao_ik.geometry.sweep.
        first_direct`) is sent instead
        (the command's angles say which). Each command is checked again just before it goes where another
        was recorded since the body was read (:meth:`_send_checked`: the other arm's, sent meanwhile).

        Returns:
            What was (or would be) sent: :class:`Command`, with what became of the arm's command before
            (:meth:`~nao_ik.service.record.Record.news`) where it moved.
        """
        began = time.monotonic()
        done = self._command(model, angles, start, move, end, what, speed, job, still, others)
        # What became of a command sent before this call (one of its own: the next call's news).
        news = self.record.news(model.arm, began) if move else ""
        return done._replace(news=news) if news else done

    def _command(self, model: ArmModel, angles: Any, start: Any, move: bool, end: float, what: str,
                 speed: float | None, job: Job | None, still: bool,
                 others: Callable[[ArmModel, list], Iterable[list]] | None) -> Command:  # fmt: skip
        """:meth:`command`'s work."""
        speed = self.speed if speed is None else speed
        angles = [float(q) for q in angles]
        if not all(math.isfinite(q) for q in angles):
            raise RuntimeError(f"{what} produced a non-finite angle; nothing sent")
        safe = list(model.clamp(angles))
        clamped = [n for n, q, s in zip(model.names, angles, safe) if q != s]
        change = apart(safe, start)
        seconds = move_seconds(model, start, safe, speed)
        waited, t0, other = [0.0], time.perf_counter(), False
        if model.body:
            model, start, near, route, goal = self._plan(model, start, safe, speed, move, job, end, what, waited,
                                                         still, others)  # fmt: skip
            other = goal is not safe
            if other:  # another posture for the task (inside the limits): the command's
                safe, clamped = goal, []
            if route is None or not route.commands:
                if move:
                    why = f"collision: {near.part}" if route is None else route.reason
                    raise RuntimeError(f"{what}: {why}; nothing sent")
                return Command(safe, clamped, change, seconds, [], waited[0], time.perf_counter() - t0 - waited[0],
                               other)  # fmt: skip
            change = apart(safe, start)
            seconds = max(move_seconds(model, start, safe, speed), route.seconds)
        else:
            route = None
        checked = time.perf_counter() - t0 - waited[0]
        commands = [safe] if route is None else route.commands

        def made(postures: list) -> Command:  # with these postures sent (or, not moving, to send)
            return Command(safe, clamped, change, seconds, postures, waited[0], checked, other)

        if not move:
            return made(commands)
        names, sent = list(model.names), []
        try:
            for k, q in enumerate(commands):
                if time.monotonic() > end:
                    raise RuntimeError(f"the reach took longer than its {self.budget:g} s budget; nothing more sent")
                if k:
                    model = self._next_leg(model, commands[k - 1], q, safe, speed, job, end, what, waited)
                    if model is None:  # a later call took the arm: it commands from where the arm is
                        raise StoppedOnItsWay(job.reason)
                self._send_checked(model, names, q, speed, end, what, bool(sent))
                sent.append(q)
        except StoppedOnItsWay as e:  # part of the sequence went (legs only follow a sent one): what was sent
            e.partial = made(sent)
            raise
        except RuntimeError as e:  # anything else once a leg went (a reading, ALMotion, the budget): the same
            if not sent:
                raise
            stop = StoppedOnItsWay(f"{first_line(e)} (after {len(sent)} of {len(commands)} commands)")
            stop.partial = made(sent)
            raise stop from None
        return made(sent)

    def last(self, arm: str) -> Aimed | None:
        """The arm's last command (None before the first)."""
        return self.record.last(arm)

    @property
    def aim(self) -> dict[str, list]:
        """The last posture commanded to each arm (the motion may still run)."""
        return self.record.aims()

    def lost(self, arm: str) -> bool:
        """Whether a command to the arm went unanswered (it may still run: the arm is never taken as at rest)."""
        return arm in self._lost

    def unknown(self, arm: str) -> bool:
        """Whether the arm may be anywhere in its range (:meth:`~nao_ik.service.record.Record.unknown`)."""
        return self.record.unknown(arm)

    def _observe(self, reading: Any) -> None:
        """Hold each arm's record against a reading of the robot (every reading :class:`SensedCache` keeps)."""
        with self._commit:
            if self.record.observe(reading):
                self._aims += 1  # the arm's region grew: a check against a body read before is done again

    def send(self, arm: str, names: list, angles: list, speed: float, end: float) -> None:
        """``setAngles`` without waiting for ALMotion's answer; its failure reaches the arm's next call.

        Safe because the angles are checked already and the arm's commands stay in order (one job
        at a time sends on an arm, over one connection). The arm's next call first checks the
        answers (:meth:`settle`).
        """
        pending = self.motion.start("setAngles", names, angles, speed, budget=left(end))
        sent = time.monotonic()  # the call is on its way: a reading asked from now on comes after it
        failed = self.motion.failure(pending)  # refused at once (ALMotion gone): this caller hears it
        if failed:
            raise RuntimeError(failed)
        self._sent[arm].add(pending)
        self._aimed(arm, angles, sent, speed, future=pending.future)
        self.sensed.follow(left(end))  # a reading that shows this command, ready for the arm's next call

    def _send_checked(self, model: ArmModel, names: list, q: list, speed: float, end: float, what: str,
                      more: bool = False) -> None:  # fmt: skip
        """:meth:`send` a command checked against ``model``'s body, once more checked where another command went
        since that body was read (the other arm's, sent by another call at the same time; or this call's own last
        one, after which the arm stopped where it did and the head and hips may have moved): against the body
        now, from wherever the arm is now (its way to its last command included). Holding the lock meanwhile,
        the other arm's command, checked likewise, sees this one. ``more``: commands of the sequence went before."""
        with self._commit:
            if self._stale():
                now, start = self.arm_state(model.arm, motors=False, end=end, settle=0.0)  # under the lock: no wait
                near = clearance(now, q, now.body)
                part = near.part if near.distance < MARGIN - 1e-6 else None
                if part is None:
                    move = sweep_from(now, start, q, speed, self.way(now, start))
                    part = None if move.clear else move.part or "body"
                if part is not None:
                    other = OTHER_ARM[model.arm]
                    if part == OTHER_ARM_PART and self.unknown(other):  # it moves under another's command now
                        raise RuntimeError(f"{what}: {FOREIGN.format(arm=other)}")
                    why = MET if part == OTHER_ARM_PART else f"collision: the {part} is now where this motion would go"
                    raise RuntimeError(f"{what}: {why}; nothing {'more ' if more else ''}sent")
            self.send(model.arm, names, q, speed, end)

    def _stale(self) -> bool:
        """Whether a command was recorded since this thread last read the body (:meth:`arm_state`): a check against it
        is done again (the caller holds the commit lock)."""
        return self._aims != getattr(self._seen, "aims", None)

    def reading(self, arm: str) -> tuple:
        """(when it was asked for (monotonic s), the commanded posture): the arm's newest reading of ALMotion's command
        (its :class:`~nao_ik.motion.truth.Watch`; (None, None) before the first)."""
        watch = self.record.watch[arm]
        with self._commit:
            return watch.asked, None if watch.commanded is None else list(watch.commanded)

    def send_streamed(self, arm: str, names: list, angles: list, speed: float, end: float) -> Aimed | None:
        """:meth:`send` a streamed command certified against the body this thread read last (:meth:`arm_state`): its
        record (when it went, its call's future); None (nothing sent) where another command went since that
        reading: the stream reads the robot again."""
        with self._commit:
            if self._stale():
                return None
            self.send(arm, names, angles, speed, end)
            return self.last(arm)

    def call_aimed(self, aims: list, names: list, angles: list, speed: float, end: float,
                   ahead: list | None = None) -> None:  # fmt: skip
        """``setAngles`` waiting for ALMotion's answer; each arm's command (``aims``: (arm, posture)) is
        remembered once the answer came, and also when none came in time (it may have gone out and run: raises
        :class:`NoAnswer`); not when it could not be sent or ALMotion answered with an error (it did not run).
        ``ahead``: a path's point that was promised (:meth:`promise`), and the commands still to come after it."""
        pending = self.motion.start("setAngles", names, angles, speed, budget=left(end))
        try:
            self.motion.result(pending)
        except RuntimeError as e:
            if not self.motion.failure(pending):  # no answer (timed out, cancelled): it may run
                self._aim_all(aims, speed, ahead, answered=False)
                self._lost.update(arm for arm, _ in aims)
                raise NoAnswer(str(e)) from None
            raise
        self._aim_all(aims, speed, ahead)

    def _aim_all(self, aims: list, speed: float, ahead: list | None = None, answered: bool = True) -> None:
        sent = time.monotonic()
        for arm, q in aims:
            self._aimed(arm, q, sent, speed, ahead, seen=sent if answered else None)

    def promise(self, arm: str, points: list, speed: float, lead: bool) -> bool:
        """Tell the other arm's checks that ``arm`` is to be sent ``points`` (a path checked against the body this
        thread last read, streamed one per cycle at ``speed``; with ``lead``, once the arm got within ARRIVED of
        the first, its own commands until then each a recorded one): from now the other arm's body holds it
        anywhere on them (:func:`nao_ik.geometry.sweep.stream_body`), until :meth:`release`. False where a command
        was recorded since that body was read: the path must be checked again first."""
        with self._commit:
            if self._stale():
                return False
            self._aims += 1  # the other arm's bodies read before are smaller
            self._seen.aims = self._aims
            last = self.last(arm)
            self._ahead[arm] = Promise([list(q) for q in points], speed, lead, [] if last is None else [last.aim])
            return True

    def release(self, arm: str) -> None:
        """The path on ``arm`` sends nothing more (:meth:`promise`)."""
        with self._commit:
            self._ahead.pop(arm, None)

    def _aimed(self, arm: str, angles: Any, sent: float, speed: float, ahead: list | None = None,
               future: Any = None, seen: float | None = None) -> None:  # fmt: skip
        """Remember a command to the arm: its posture, when it was sent, its speed.

        ``sent`` is taken once the call has gone out (not before): a reading asked later, even by
        another thread, reaches ALMotion after the command (:mod:`nao_ik.service.sensed`'s ``since``).
        ``ahead``: the command was promised (:meth:`promise`; the bodies read since hold it), and these still are.
        ``future``: its call's, not answered yet; else ``seen``: when its answer came (None: none came).
        """
        with self._commit:
            promised = self._ahead.get(arm)
            if promised is not None:
                # The commands sent last while a path is promised (its points, and a lead's or a jump's legs) stay
                # part of it: a reading of the arm may be older than the newest of them.
                recent = promised.recent[1 - STREAMED :] + [[float(q) for q in angles]]
                rest = promised.rest if ahead is None else [list(q) for q in ahead]
                self._ahead[arm] = Promise(rest, promised.speed, promised.lead and ahead is None, recent)
            if ahead is None:
                self._aims += 1
            self.record.add(arm, Aimed([float(q) for q in angles], speed, sent, future, seen))

    def settle(self, arm: str, end: float) -> None:
        """Raise the failure of an earlier command to the arm (the caller holds the arm); nothing is sent then. It also
        forgets the commands ALMotion has answered (a stream calls it every cycle)."""
        try:
            self._sent[arm].check(left(end))
        except RuntimeError as e:
            self._lost.add(arm)  # failed or unanswered: whether it ran is not known
            raise RuntimeError(f"an earlier command to {arm} failed, so this one was not sent: {e}") from None

    def arm_state(self, arm: str, motors: bool, end: float, fresh: bool = False, settle: float | None = None) -> tuple:
        """The arm's model with the robot's limits and the body at the robot's posture, and its sensed angles.

        The angles are at most two control cycles old (:mod:`nao_ik.service.sensed`), read now with ``fresh``.
        An arm that may be anywhere in its range (:meth:`unknown`: moving under commands the service did not send,
        or not seen at rest since the service started) is waited for, ``settle`` seconds at most (default
        FOREIGN_WAIT with ``motors``, a call that moves; else SETTLE), until it is seen at rest, and refused
        (:data:`FOREIGN`) if it is not then; with ``settle`` 0 (the hand's pose, a path's body between two of its
        points), neither: the body holds such an arm anywhere in its range.
        With ``motors``, refuse an arm whose motors are off, as read now (a cached "on" may be up to two
        cycles old: a command right after ``rest()`` reaches motors that are off, and moves nothing).
        The same reading has the other arm and the hips: the model's body
        (:func:`nao_ik.geometry.collision.posture_body`) has the thighs where they are and the other arm's links:
        where it is, and where it may be on its way to its last command (any profile, overshoot included).
        """
        model = self.model(arm, end)
        other = self.model(OTHER_ARM[arm], end)
        names = list(model.names)
        read = names + list(other.names) + BODY_JOINTS
        settle = (FOREIGN_WAIT if motors else SETTLE) if settle is None else settle
        until = min(end, time.monotonic() + settle)
        for again in (False, True):
            watches = self.record.watch
            if settle:  # a proof where an arm was not seen at rest (a new service), or moves by another's command
                self._await_rest((arm, other.arm), end, until)
            for a in (arm, other.arm):
                self._prove_stalled(a, end)
            last = self.last(arm)  # a reading asked before its last command went does not show it
            since = -math.inf if last is None else last.sent
            current, stiff, reading = self.sensed.read_timed(read, left(end), fresh, since)
            if again or self.record.watch is watches and not (self.unknown(arm) or self.unknown(other.arm)):
                break  # else it found an arm moving that none of the service's commands moves, or a new ALMotion
        for a in (arm, other.arm) if settle else ():
            if self.unknown(a):
                raise RuntimeError(FOREIGN.format(arm=a))
        if motors and not fresh and not all(v > 0.0 for v in stiff[:5]):
            # Off in a cached reading: read again before refusing (a wakeUp may have come since).
            current, stiff, reading = self.sensed.read_timed(read, left(end), fresh=True)
        if motors:
            check_motors(arm, names, stiff[:5])
        start = model.clamp(current[:5])
        with self._commit:  # the other arm's last command, and how many commands the body then holds
            self._seen.aims = self._aims
            asked = reading.asked if reading is not None else -math.inf
            self.record.at_aim(arm, start, asked)
            self.record.at_aim(other.arm, other.clamp(current[5:10]), asked)
            last = self.last(other.arm)  # the other arm may still be on its way there: all of it is the body
            aim, fraction = (None, 1.0) if last is None else (last.aim, last.fraction)
            earlier = self.record.earlier(other.arm)  # and the earlier commands it may still be braking toward
            if self.unknown(other.arm):  # moving under commands the service did not send: anywhere in its range
                aim, fraction, earlier = anywhere(other)
            promised = self._ahead.get(other.arm)
        if model.body:
            key = (tuple(current[5:18]), None if aim is None else tuple(aim), fraction,
                   tuple((tuple(a), f) for a, f in earlier))  # fmt: skip
            last = self._bodies.get(arm)
            if last is not None and last[0] == key and last[1] is promised and last[2] is other:
                return model._replace(body=last[3]), start
            seen = other.clamp(current[5:10])
            hips, head, legs = (current[10], current[11]), (current[12], current[13]), tuple(current[14:18])
            if promised and promised.rest and not promised.lead:  # streaming a path: anywhere on the rest of it
                body = posture_body(hips, None, head=head, legs=legs) + stream_body(
                    other, seen, promised.recent + promised.rest, promised.speed, CYCLE
                )
            else:  # where it is or on its way to its last command; and the path it streams once it got there
                moving = aim is not None and (earlier or apart(aim, seen) > 1e-9)
                body = posture_body(hips, (other, seen), aim if moving else None, fraction, head, earlier, legs)
                if promised and promised.rest:
                    # Its first shape, the arm's shoulder, is in the body already.
                    body += stream_body(other, promised.rest[0], promised.rest, promised.speed, CYCLE, ARRIVED)[1:]
            self._bodies[arm] = (key, promised, other, body)
            model = model._replace(body=body)
        return model, start

    def _new_motion(self) -> None:
        """A new ALMotion: its limits and readings are read again, and the arms are seen at rest again before they
        are taken as still (what ran meanwhile is not known)."""
        self._models.clear()
        self.sensed.invalidate()
        self.record.reset()

    def model(self, arm: str, end: float) -> ArmModel:
        model = self._models.get(arm)
        if model is None:
            base = arm_model(arm) if self._body else arm_model(arm)._replace(body=())
            names = list(base.names)
            reported = reply_limits(self.motion.call("getLimits", names, budget=left(end)), names)
            try:
                model = base.with_limits(reported)
            except ValueError as e:  # the robot's fault, not the caller's
                raise RuntimeError(f"ALMotion.getLimits returned unusable limits: {e}") from None
            self._models[arm] = model
        return model
