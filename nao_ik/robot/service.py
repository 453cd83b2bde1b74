# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010, UP031, N802, N803, B904  (Python 2.7 and 3; lowerCamelCase: qi's names)
"""The NaoArmIK qi service of the robot runtime (the ``analytic`` method, the joint limits, the body).

The same method names and answers as the computer-side service (:mod:`nao_ik.service`) for
the calls it has: ``reachTo``, ``reachToWithArm``, ``reachToWithSpeed``, ``computeAngles``,
``getMethods``, ``setSpeed``, ``getSpeed``; the method may be left out (:mod:`nao_ik.service.methods`).
Every argument is checked first (:mod:`nao_ik.robot.checks`); bad input gets a one-line ValueError
naming it and the robot receives no command. The default speed a caller set survives the runtime's restarts on
the robot (:mod:`nao_ik.service.kept`), not a reboot.

The robot is the truth (:mod:`nao_ik.motion.truth`: the rule of the computer-side service too, by the same code).
Every reading of the robot has both arms' commanded angles (``getAngles(names, False)``) with their sensed angles,
the hips' and the head's, and the stiffnesses: three calls in flight together, one round trip
(:meth:`NaoArmIK._read`). The runtime's record of the commands it sent each arm is held against each reading
(:class:`~nao_ik.robot.record.Record`). An arm not seen at rest since the runtime started, or moving under commands
it did not send, may be anywhere in its range: a call waits for both arms to be seen at rest (FOREIGN_WAIT
seconds for a reach, SETTLE for ``computeAngles``, within its budget), then refuses where its own arm still may
be, in one line, the computer-side service's (:data:`~nao_ik.motion.truth.FOREIGN`); the other arm's rows then
cover its whole joint box. A reading may show the robot up to :data:`~nao_ik.motion.truth.LAG` late: the proofs
allow for it.

The body: answers keep :data:`~nao_ik.model.body_data.MARGIN` from NAO's standing body and from the
other arm (:mod:`nao_ik.robot.solve` with the other arm's rows of :mod:`nao_ik.robot.other`:
at its sensed posture, on its way to a command this runtime sent it, or anywhere in its range); the direct
``setAngles`` motion from the sensed posture to the answer is checked against the same shapes as
the library checks a command (:func:`nao_ik.robot.solve.motion`: the joint-space box between the
two postures certified to keep SWEEP_MARGIN, whatever setAngles' speed profile): where it would
cross them nothing is sent (``reason`` "motion: the move crosses the <part>"; the robot runtime has
no swung-out sequences). A reach whose motion is certified only once the arm's earlier command has ended waits for
that (:meth:`NaoArmIK._ended`), within the call's budget, and answers from where the arm is then; so does a reach
that the other arm's way to a command of this runtime bars. The last check before ``ALMotion.setAngles``: five
finite angles inside the limits, else nothing is sent.

Time: every ALMotion call has a time limit (:mod:`nao_ik.robot.link`) and every call of the
service a budget (CALL_BUDGET seconds): a call that runs out of it fails with a one-line error,
and a command computed from a reading older than the budget is never sent ("past the call's
budget; nothing sent"). Calls are served concurrently (``qi.multiThreaded``; the reaches and
``computeAngles`` on threads of their own, :meth:`NaoArmIK._submit`): one call at a time commands an
arm (the arm's :class:`Turn`), the two arms independently; a command and the other arm's check of it
are ordered by a short commit (:meth:`NaoArmIK._send`).
"""

from __future__ import division

import collections
import threading
import time

import qi

from ..geometry.scalar.clearance import clearance
from ..geometry.scalar.sweep import CYCLE
from ..model.body_data import BODY_JOINTS, MARGIN, OTHER_ARM, body_rows
from ..motion.truth import FOREIGN, FOREIGN_WAIT, SETTLE, check_motors
from ..service.kept import Kept, robot
from ..service.methods import publish
from . import checks
from .arms import MODELS
from .link import MOTION_TIMEOUT, Link, first_line, now
from .other import rows
from .record import Record
from .solve import EPS, distance, forward, motion, other_direct, solve

#: The name the service registers under (what it keeps across its restarts is kept under it too).
SERVICE = "NaoArmIK"
DEFAULT_SPEED = 0.2
#: Seconds one call of the service may take, from its arrival to its command (waiting for the arm included).
CALL_BUDGET = 4.0
#: Seconds of its budget a call keeps to answer once it waited for an arm (the solve and the motion check).
ANSWER_TIME = 0.25
#: Calls computed at the same time at most (each on a thread of its own); one more is refused at once.
MAX_CALLS = 8
#: Why nothing was sent while the arm may still be on its way to its last command (a reach waits for that command
#: to end, within its budget, then answers from there).
ON_ITS_WAY = "motion: the move from where the arm may still be on its way to its last command"
#: How such a refusal ends: the arm may still be moving (the budget ended first), or it stopped short of that
#: command and may still go on (:meth:`NaoArmIK._ended`).
AGAIN = "(call again once it stopped)"
STILL_HELD = "(it stopped, short of that command or with a command ALMotion did not answer: not proven at rest)"
#: The other arm of each arm.
OTHER = {"LArm": "RArm", "RArm": "LArm"}
_ANSWER = qi.Map(qi.String, qi.Dynamic)
#: One reading of the robot (:meth:`NaoArmIK._read`): when it was asked for (:func:`~nao_ik.robot.link.now`), the
#: sensed angles of the arm, the other arm and BODY_JOINTS, both arms' commanded angles and their stiffnesses.
Reading = collections.namedtuple("Reading", "asked sensed commanded stiffness")


def _concurrent(cls):
    """``qi.multiThreaded`` where this libqi-python has it (the calls then run at the same time)."""
    threads = getattr(qi, "multiThreaded", None)
    return threads()(cls) if threads is not None else cls


class Turn(object):
    """One call at a time: an arm's commands (``take`` until a deadline; Python 2's Lock has no timeout)."""

    def __init__(self):
        self._cond = threading.Condition(threading.Lock())
        self._busy = False

    def take(self, end):
        # type: (float) -> bool
        """Wait for the turn until ``end`` (:func:`~nao_ik.robot.link.now` seconds); whether it was taken."""
        with self._cond:
            while self._busy:
                left = end - now()
                if left <= 0:
                    return False
                self._cond.wait(left)
            self._busy = True
            return True

    def give(self):
        # type: () -> None
        with self._cond:
            self._busy = False
            self._cond.notify()


@_concurrent
@publish
class NaoArmIK(object):
    """The service object.

    Args:
        session: a qi session connected to the robot's NAOqi.
        speed: the configured default ``fractionMaxSpeed`` of ``setAngles`` (the one a caller set over it, kept
            across the runtime's restarts, wins: :mod:`nao_ik.service.kept`).
        call_budget: seconds each call may take (CALL_BUDGET).
        motion_timeout: seconds each ALMotion call may take (:data:`nao_ik.robot.link.MOTION_TIMEOUT`).
        name: the name it registers under (SERVICE).
    """

    def __init__(self, session, speed=DEFAULT_SPEED, call_budget=CALL_BUDGET, motion_timeout=MOTION_TIMEOUT,
                 name=SERVICE):  # fmt: skip
        self._configured = checks.speed(speed)
        self._budget = float(call_budget)
        self._link = Link(session, motion_timeout)
        self._kept = Kept(robot(session, float(motion_timeout)), name)  # the speed a caller set, across restarts
        self._speed = self._kept.speed(self._configured)
        self._turns = dict((arm, Turn()) for arm in MODELS)
        self._record = Record(MODELS)
        self._commit = threading.Lock()
        self._slots = threading.BoundedSemaphore(MAX_CALLS)

    # ------------------------------------------------------------ qi methods

    @qi.bind(_ANSWER, [qi.Dynamic] * 4)
    def reachTo(self, x, y, z, method):
        """Move the hand of the arm on the target's side (y >= 0: LArm) to (x, y, z) in FRAME_TORSO metres."""
        t, m = checks.target(x, y, z), checks.method(method)
        return self._submit(lambda end: self._reach("LArm" if t[1] >= 0 else "RArm", t, m, None, True, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def reachToWithArm(self, arm, x, y, z, method):
        """Move ``arm``'s hand ("LArm" or "RArm") to (x, y, z)."""
        a, t, m = checks.arm(arm), checks.target(x, y, z), checks.method(method)
        return self._submit(lambda end: self._reach(a, t, m, None, True, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 6)
    def reachToWithSpeed(self, arm, x, y, z, method, fractionMaxSpeed):
        """As reachToWithArm, at ``fractionMaxSpeed`` of the joints' maximum speed."""
        a, t, m, f = checks.arm(arm), checks.target(x, y, z), checks.method(method), checks.speed(fractionMaxSpeed)
        return self._submit(lambda end: self._reach(a, t, m, f, True, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def computeAngles(self, arm, x, y, z, method):
        """The joint angles that reachToWithArm would send, without moving."""
        a, t, m = checks.arm(arm), checks.target(x, y, z), checks.method(method)
        return self._submit(lambda end: self._reach(a, t, m, None, False, end))

    @qi.bind(qi.List(qi.String), [])
    def getMethods(self):
        """The IK methods this runtime has (the others run on the computer-side service)."""
        return list(checks.METHODS)

    @qi.bind(qi.Void, [qi.Dynamic])
    def setSpeed(self, fraction):
        """Default fraction of the joints' maximum speed for motions, in [0.01, 1]; kept across the runtime's
        restarts on this robot (:mod:`nao_ik.service.kept`)."""
        self._speed = checks.speed(fraction)
        self._kept.set_speed(self._configured, self._speed)

    @qi.bind(qi.Double, [])
    def getSpeed(self):
        """The current fraction of maximum speed."""
        return self._speed

    # ------------------------------------------------------------- internals

    @qi.nobind
    def _submit(self, work):
        """Run ``work(deadline)`` on a thread of its own; the caller gets a qi future of its answer.

        libqi's threads are not held while a call waits for ALMotion or for its arm (libqi adds threads to its
        pool only slowly: held, they would delay every other call). At most MAX_CALLS run at once; one more
        is refused at once. The budget runs from here.
        """
        end = now() + self._budget
        if not self._slots.acquire(False):
            raise RuntimeError("NaoArmIK is busy with %d calls; nothing sent" % MAX_CALLS)
        promise = qi.Promise()

        def run():
            try:
                answer = work(end)
            except Exception as e:  # one line, as methods.one_line answers
                self._slots.release()
                promise.setError("%s: %s" % (type(e).__name__, first_line(e)))
            else:
                self._slots.release()  # before the answer: a caller's next call finds the slot free
                promise.setValue(answer)

        thread = threading.Thread(target=run, name="NaoArmIK call")
        thread.daemon = True
        try:
            thread.start()
        except Exception:
            self._slots.release()
            raise
        return promise.future()

    @qi.nobind
    def _reach(self, arm, target, method, speed, move, end):
        """The answer for ``target``; with ``move``, its command sent (one call at a time on the arm)."""
        if not move:
            return self._answer(arm, target, method, speed, False, end)
        turn = self._turns[arm]
        if not turn.take(end):
            raise RuntimeError("%s: another call commanded it until past the call's budget (%.1f s); nothing sent"
                               % (arm, self._budget))  # fmt: skip
        try:
            got = self._answer(arm, target, method, speed, True, end)
            if got["reason"].startswith(ON_ITS_WAY):
                # Once its last command has ended, from where the arm is then; an arm that stopped short of it and
                # may still go on is refused at once, rather than spin out the budget.
                why = self._ended(arm, end)
                if why:
                    got["reason"] = got["reason"].replace(AGAIN, why)
                else:
                    got = self._answer(arm, target, method, speed, True, end)
            return got
        finally:
            turn.give()

    @qi.nobind
    def _read(self, arm, end):
        """A reading of the robot (:data:`Reading`), its three calls in flight together (one round trip): the sensed
        angles of both arms (this one's first) and BODY_JOINTS, both arms' commanded angles and their stiffnesses;
        held against the record (:meth:`~nao_ik.robot.record.Record.observe`)."""
        other = OTHER[arm]
        mine, theirs = MODELS[arm], MODELS[other]
        names = list(mine.names) + list(theirs.names)
        calls = []
        asked = now()
        try:
            for method, args in (("getAngles", (names + BODY_JOINTS, True)), ("getAngles", (names, False)),
                                 ("getStiffnesses", (names,))):  # fmt: skip
                calls.append(self._link.start(method, args, end))
            replies = [self._link.result(call) for call in calls]
        except RuntimeError as e:
            for call in calls:
                call.future.cancel()
            raise RuntimeError("%s; nothing sent" % first_line(e))
        sensed, commanded = _floats(replies[0], 10 + len(BODY_JOINTS)), _floats(replies[1], 10)
        stiffness = _floats(replies[2], 10)
        if sensed is None or not (mine.within_limits(sensed[:5], 1e6) and theirs.within_limits(sensed[5:10], 1e6)
                                  and all(abs(q) < 4.0 for q in sensed[10:])):  # fmt: skip
            raise RuntimeError("ALMotion.getAngles answered something else than 18 angles for %s, %s, the legs and "
                               "the head; nothing sent" % (arm, other))  # fmt: skip
        if commanded is None or not (mine.within_limits(commanded[:5], 1e6)
                                     and theirs.within_limits(commanded[5:], 1e6)):  # fmt: skip
            raise RuntimeError("ALMotion.getAngles answered something else than 10 commanded angles for %s and %s; "
                               "nothing sent" % (arm, other))  # fmt: skip
        if stiffness is None:
            raise RuntimeError("ALMotion.getStiffnesses answered something else than 10 numbers for %s and %s; "
                               "nothing sent" % (arm, other))  # fmt: skip
        self._record.observe(
            asked,
            {arm: commanded[:5], other: commanded[5:]},
            {arm: all(s > 0.0 for s in stiffness[:5]), other: all(s > 0.0 for s in stiffness[5:])},
        )
        return Reading(asked, sensed, commanded, stiffness)

    @qi.nobind
    def _state(self, arm, move, end):
        """A reading to answer from (:meth:`_read`), once neither arm may be anywhere in its range, waited for
        FOREIGN_WAIT seconds at most for a reach (``move``), SETTLE for ``computeAngles``, within the budget:
        refused (:data:`~nao_ik.motion.truth.FOREIGN`) where this arm still may be (the other arm's rows then cover
        its whole joint box, :meth:`_body`). With ``move``, an arm whose motors are off is refused at once."""
        until = min(end - ANSWER_TIME, now() + (FOREIGN_WAIT if move else SETTLE))
        other = OTHER[arm]
        while True:
            reading = self._read(arm, end)
            if move:
                check_motors(arm, MODELS[arm].names, reading.stiffness[:5])
            if not (self._record.unknown(arm) or self._record.unknown(other)) or now() + CYCLE > until:
                break
            time.sleep(CYCLE)
        if self._record.unknown(arm):
            raise RuntimeError(FOREIGN.format(arm=arm))
        for a in (arm, other):
            self._prove(a, end)
        return reading

    @qi.nobind
    def _body(self, arm, sensed, posture):
        """NAO's body at its sensed hips and head (``posture``: BODY_JOINTS' angles) and the other arm (its rows,
        :mod:`nao_ik.robot.other`, over the box of :meth:`~nao_ik.robot.record.Record.box` from its reading
        ``sensed``), and the version of the other arm's record."""
        other = MODELS[OTHER[arm]]
        lo, hi, version = self._record.box(other, sensed)
        standing = body_rows(posture[0], posture[1], (posture[2], posture[3]), tuple(posture[4:8]))
        return standing + rows(other, lo, hi), version

    @qi.nobind
    def _answer(self, arm, target, method, speed, move, end):
        model = MODELS[arm]
        names = list(model.names)
        speed = self._speed if speed is None else speed
        for again in (False, True):
            reading = self._state(arm, move, end)
            current, asked = reading.sensed, reading.asked
            start = model.clamp(current[:5])
            sensed = MODELS[OTHER[arm]].clamp(current[5:10])
            posture = current[10:]
            body, version = self._body(arm, sensed, posture)
            t0 = now()
            sol = solve(model, target, start, body)
            solve_ms = (now() - t0) * 1e3
            angles = [float(q) for q in sol.angles]
            reached, reason, safe, error, other = bool(sol.reached), str(sol.reason), sol.found, sol.error, False
            # Where a command this runtime sent the arm may still move it, the arm may be anywhere on its way there
            # (its overshoot included) when this one takes it: the motion is checked from all of it.
            lo, hi, _ = self._record.box(model, start)
            way = None if lo == hi else (lo, hi)
            if sol.found:
                # The direct motion setAngles makes from the sensed posture: nothing sent where it would cross the
                # body, unless another exact solution of the target moves there direct.
                why = _crossing(model, start, angles, body, False, way)
                if why and sol.reached:
                    q = other_direct(model, target, start, body, way)
                    if q is not None:
                        angles, why, other = q, "", True
                        error = distance(forward(model, q), target)
                if why:
                    reached, reason, safe = False, why, False
            # The other arm's way to a command this runtime sent it bars the reach: once that command has ended, again
            # from where the other arm is then.
            if again or not move or OTHER_ARM not in reason or not self._record.running(OTHER[arm]):
                break
            if self._ended(OTHER[arm], end):
                break
        sent = False
        if move and safe:
            # The last line of defence: five finite angles inside the limits, or nothing is sent.
            if not model.within_limits(angles):
                raise RuntimeError("%s for %r produced %r outside the limits; nothing sent" % (method, target, angles))
            why = self._send(arm, start, way, (sensed, posture), angles, speed, asked, version, end)
            if why:
                reached, reason, safe = False, why, False
            sent = not why
        seconds = max(abs(q - q0) / j.max_velocity for q, q0, j in zip(angles, start, model.joints)) / speed
        return {
            "arm": arm,
            "method": method,
            "target": list(target),
            "names": names,
            "angles": angles,
            "reached": reached,
            "error": float(error),
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
            # Another exact solution of the target than the method's answer, whose motion is certified where the
            # answer's is not (:func:`nao_ik.robot.solve.other_direct`).
            "otherSolution": other,
        }

    @qi.nobind
    def _ended(self, arm, end):
        """Wait, reading the robot every cycle, until the last command this runtime sent the arm has ended
        (:class:`~nao_ik.robot.record.Record`: ALMotion's command reached its goal, or a reading left its way, or
        it stalled and ``isCollision`` says nothing holds the arm, as the computer-side service proves it); "" then,
        ANSWER_TIME before the budget ends at the latest. Else why not: STILL_HELD at once where the arm stopped
        short of it and may still go on (the robot's protection holds it, ``isCollision`` did not answer, or
        ALMotion never answered the command); AGAIN where the budget ends first."""
        while now() + ANSWER_TIME < end:
            if self._record.stalled(arm) is not None and not self._prove(arm, end):
                return STILL_HELD
            if not self._record.running(arm):
                return ""
            if self._record.held(arm):
                return STILL_HELD
            time.sleep(CYCLE)
            try:
                self._read(arm, end)
            except RuntimeError:
                break
        return AGAIN

    @qi.nobind
    def _prove(self, arm, end):
        """Where the arm's last command has stalled (seen at rest short of its goal), whether it runs no more: the
        robot's ``isCollision`` says nothing holds the arm (the record is then dropped, as the computer-side service
        drops it); not where the protection holds it (it goes on when that lets go) or where ALMotion did not
        answer (it may still run). True where nothing stalled."""
        stalled = self._record.stalled(arm)
        if stalled is None:
            return True
        try:
            state = self._link.result(self._link.start("isCollision", (arm,), end))
        except RuntimeError:  # an ALMotion without it, or no answer
            return False
        if state == "collision":
            return False
        self._record.drop(arm, stalled)
        return True

    @qi.nobind
    def _send(self, arm, start, way, reading, angles, speed, asked, version, end):
        """Send the command, or say why not ("" when sent).

        ``way``: the bounds of the postures the arm may be in from the reading on (:meth:`Record.box`), or None.
        ``reading``: the other arm's sensed angles and BODY_JOINTS'. Under the commit lock, so that a command to
        the other arm cannot slip between this check and this command: if the other arm was commanded since this
        call's check (or became one that may be anywhere), the answer and its motion (from ``way`` too) are checked
        again against where that arm may now go; then the stale-command guard (a reading older than the budget,
        or the call past it: nothing sent); then ``setAngles`` goes out and is recorded
        (:meth:`~nao_ik.robot.record.Record.add`) before the lock is left. Its answer is waited for after (within
        the budget).
        """
        model, names = MODELS[arm], list(MODELS[arm].names)
        other = OTHER[arm]
        while True:
            with self._commit:
                if self._record.version(other) == version:
                    late = now()
                    if late > end or late - asked > self._budget:
                        raise RuntimeError("%s: the command was computed from a reading %.2f s old, past the call's "
                                           "budget; nothing sent" % (arm, late - asked))  # fmt: skip
                    pending = self._link.start("setAngles", (names, angles, speed), end)
                    entry = self._record.add(arm, angles, speed, pending.future)
                    break
            body, version = self._body(arm, reading[0], reading[1])  # the other arm commanded meanwhile: again
            why = _crossing(model, start, angles, body, True, way)
            if why:
                return why
        try:
            self._link.result(pending)
        except RuntimeError as e:
            entry.future, entry.lost = None, True  # ALMotion may still take it, later
            raise RuntimeError("%s; the command was sent and ALMotion may still take it" % first_line(e))
        entry.answered = now()
        return ""


def _floats(reply, count):
    """``count`` floats from an ALMotion reply, or None."""
    try:
        out = [float(x) for x in reply]
    except (TypeError, ValueError):
        return None
    return out if len(out) == count else None


def _crossing(model, start, angles, body, answer, way=None):
    """Why the answer (``answer``: itself too) or the direct motion to it (from ``way`` too: an arm that may still
    be on its way to an earlier command) is not clear of ``body`` ("" if clear)."""
    if answer:
        near = clearance(model, angles, body)
        if near.distance < MARGIN - EPS:
            return "collision: %s" % (near.part or "body")
    clear, _, part, _ = motion(model, start, angles, body, way=way)
    if clear:
        return ""
    if way is None:
        return "motion: the move crosses the %s" % (part or "body")
    return "%s crosses the %s %s" % (ON_ITS_WAY, part or "body", AGAIN)
