# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010, UP031, N802, N803, B904  (Python 2.7 and 3; lowerCamelCase: qi's names)
"""The NaoArmIK qi service of the robot runtime (the ``analytic`` method, the joint limits, the body).

The same method names and answers as the computer-side service (:mod:`nao_ik.service`) for
the calls it has: ``reachTo``, ``reachToWithArm``, ``reachToWithSpeed``, ``computeAngles``,
``getMethods``, ``setSpeed``, ``getSpeed``; the method may be left out (:mod:`nao_ik.service.methods`).
Every argument is checked first (:mod:`nao_ik.robot.checks`); bad input gets a one-line ValueError
naming it and the robot receives no command.

The body: answers keep :data:`~nao_ik.model.body_data.MARGIN` from NAO's standing body and from the
other arm (:mod:`nao_ik.robot.solve` with the other arm's rows of :mod:`nao_ik.robot.other`:
at its sensed posture, and wherever a command this runtime sent it may still take it); the direct
``setAngles`` motion from the sensed posture to the answer is checked against the same shapes as
the library checks a command (:func:`nao_ik.robot.solve.motion`: the joint-space box between the
two postures certified to keep SWEEP_MARGIN, whatever setAngles' speed profile): where it would
cross them nothing is sent (``reason`` "motion: the move crosses the <part>"; the robot runtime has
no swung-out sequences). A reach whose motion is certified only once the arm has stopped at an earlier
command waits for that, within the call's budget, and answers from where the arm stopped. The last
check before ``ALMotion.setAngles``: five finite angles inside the limits, else nothing is sent.

Time: every ALMotion call has a time limit (:mod:`nao_ik.robot.link`) and every call of the
service a budget (CALL_BUDGET seconds): a call that runs out of it fails with a one-line error,
and a command computed from a reading older than the budget is never sent ("past the call's
budget; nothing sent"). Calls are served concurrently (``qi.multiThreaded``; the reaches and
``computeAngles`` on threads of their own, :meth:`NaoArmIK._submit`): one call at a time commands an
arm (the arm's :class:`Turn`), the two arms independently; a command and the other arm's check of it
are ordered by a short commit (:meth:`NaoArmIK._send`).
"""

from __future__ import division

import threading
import time

import qi

from ..geometry.scalar.clearance import clearance
from ..geometry.scalar.sweep import CYCLE, SAG, STILL, STOPPED_CYCLES, apart
from ..model.body_data import BODY_JOINTS, MARGIN, OTHER_ARM, body_rows
from ..service.methods import publish
from . import checks
from .arms import MODELS
from .link import MOTION_TIMEOUT, Link, first_line, now
from .other import KEEP, Commands, rows, run_time
from .solve import EPS, distance, forward, motion, other_direct, solve

DEFAULT_SPEED = 0.2
#: Seconds one call of the service may take, from its arrival to its command (waiting for the arm included).
CALL_BUDGET = 4.0
#: Calls computed at the same time at most (each on a thread of its own); one more is refused at once.
MAX_CALLS = 8
#: Why nothing was sent while the arm may still be on its way to an earlier command (a reach waits for it to stop,
#: within its budget, then answers from there).
ON_ITS_WAY = "motion: the move from where the arm may still be on its way to its last command"
#: How such a refusal ends: the arm may still be moving (the budget ended first), or it stopped and still is not
#: proven at rest (:meth:`NaoArmIK._at_rest`).
AGAIN = "(call again once it stopped)"
STILL_HELD = "(it stopped, short of that command or with a command ALMotion did not answer: not proven at rest)"
#: The other arm of each arm.
OTHER = {"LArm": "RArm", "RArm": "LArm"}
_ANSWER = qi.Map(qi.String, qi.Dynamic)


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
        speed: the default ``fractionMaxSpeed`` of ``setAngles``.
        call_budget: seconds each call may take (CALL_BUDGET).
        motion_timeout: seconds each ALMotion call may take (:data:`nao_ik.robot.link.MOTION_TIMEOUT`).
    """

    def __init__(self, session, speed=DEFAULT_SPEED, call_budget=CALL_BUDGET, motion_timeout=MOTION_TIMEOUT):
        self._speed = checks.speed(speed)
        self._budget = float(call_budget)
        self._link = Link(session, motion_timeout)
        self._turns = dict((arm, Turn()) for arm in MODELS)
        self._commands = Commands()
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
        """Default fraction of the joints' maximum speed for motions, in [0.01, 1]."""
        self._speed = checks.speed(fraction)

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
            if got["reason"].startswith(ON_ITS_WAY) and self._stopped(arm, end):
                # Once, from where it stopped: an arm still there and not proven at rest (held short of its command,
                # a command never answered) stays so, and the reach is refused rather than spin out its budget.
                got = self._answer(arm, target, method, speed, True, end)
                if got["reason"].startswith(ON_ITS_WAY):
                    got["reason"] = got["reason"].replace(AGAIN, STILL_HELD)
            return got
        finally:
            turn.give()

    @qi.nobind
    def _read(self, arm, move, end):
        """Both arms' sensed angles (this arm's first), then BODY_JOINTS', and when they were asked; this arm's
        motors checked."""
        model, other = MODELS[arm], MODELS[OTHER[arm]]
        names = list(model.names)
        stiff = None
        try:
            asked = now()
            reading = self._link.start("getAngles", (names + list(other.names) + BODY_JOINTS, True), end)
            stiff = self._link.start("getStiffnesses", (names,), end) if move else None
            current = self._link.result(reading)
            stiffness = self._link.result(stiff) if stiff is not None else []
        except RuntimeError as e:
            if stiff is not None:
                stiff.future.cancel()
            raise RuntimeError("%s; nothing sent" % first_line(e))
        current, stiffness = _floats(current, 10 + len(BODY_JOINTS)), _floats(stiffness, 5 if move else 0)
        if current is None or not (model.within_limits(current[:5], 1e6) and other.within_limits(current[5:10], 1e6)
                                   and all(abs(q) < 4.0 for q in current[10:])):  # fmt: skip
            raise RuntimeError("ALMotion.getAngles answered something else than 18 angles for %s, %s, the legs and "
                               "the head; nothing sent" % (arm, OTHER[arm]))  # fmt: skip
        if stiffness is None:
            raise RuntimeError("ALMotion.getStiffnesses answered something else than 5 numbers for %s; nothing sent"
                               % arm)  # fmt: skip
        off = [n for n, s in zip(names, stiffness) if not s > 0.0]
        if off:
            raise RuntimeError("%s motors are off (stiffness 0 on %s): call ALMotion.wakeUp() or setStiffnesses "
                               "first" % (arm, ", ".join(off)))  # fmt: skip
        return current, asked

    @qi.nobind
    def _body(self, arm, sensed, asked, posture):
        """NAO's body at its sensed hips and head (``posture``: BODY_JOINTS' angles) and the other arm
        (:mod:`nao_ik.robot.other`), and the version of its commands."""
        other = MODELS[OTHER[arm]]
        lo, hi, version = self._commands.box(other, sensed, asked)
        standing = body_rows(posture[0], posture[1], (posture[2], posture[3]), tuple(posture[4:8]))
        return standing + rows(other, lo, hi), version

    @qi.nobind
    def _answer(self, arm, target, method, speed, move, end):
        model = MODELS[arm]
        names = list(model.names)
        current, asked = self._read(arm, move, end)
        start = model.clamp(current[:5])
        sensed = MODELS[OTHER[arm]].clamp(current[5:10])
        posture = current[10:]
        speed = self._speed if speed is None else speed
        for again in (False, True):
            body, version = self._body(arm, sensed, asked, posture)
            t0 = now()
            sol = solve(model, target, start, body)
            solve_ms = (now() - t0) * 1e3
            angles = [float(q) for q in sol.angles]
            reached, reason, safe, error, other = bool(sol.reached), str(sol.reason), sol.found, sol.error, False
            # Where a command this runtime sent the arm may still run, the arm may be anywhere on its way there
            # (its overshoot included) when this one takes it: the motion is checked from all of it.
            lo, hi, _ = self._commands.box(model, start, asked)
            way = None if lo == hi else (lo, hi)
            if sol.found:
                # The direct motion setAngles makes from the sensed posture: nothing sent where it would cross the
                # body, unless another exact solution of the target moves there direct.
                why = _crossing(model, start, angles, body, False, way)
                if why and way is not None and self._at_rest(arm, start, asked, end):
                    way = None  # the arm is where it was read and stays there: from there alone
                    why = _crossing(model, start, angles, body, False)
                if why and sol.reached:
                    q = other_direct(model, target, start, body, way)
                    if q is not None:
                        angles, why, other = q, "", True
                        error = distance(forward(model, q), target)
                if why:
                    reached, reason, safe = False, why, False
            # The other arm's way to a command this runtime sent it bars the answer: once it is proven at rest where
            # it was read, again with the other arm there alone.
            if again or OTHER_ARM not in reason or not self._other_at_rest(arm, sensed, asked, end):
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
    def _other_at_rest(self, arm, sensed, asked, end):
        """Whether the other arm of ``arm``, read at ``sensed``, may be on its way to a command this runtime sent it
        and is proven at rest there (:meth:`_at_rest`)."""
        other = MODELS[OTHER[arm]]
        lo, hi, _ = self._commands.box(other, sensed, asked)
        return lo != hi and self._at_rest(other.arm, sensed, asked, end)

    @qi.nobind
    def _stopped(self, arm, end):
        """Wait until the arm stands still (two readings a cycle apart within STILL), leaving the call's budget time
        for the proof that it rests (:meth:`_at_rest`); False where the budget ends first or a reading fails."""
        names, last = list(MODELS[arm].names), None
        while now() + (STOPPED_CYCLES + 2) * CYCLE < end:
            time.sleep(CYCLE)
            q = self._angles(names, True, end)
            if q is None:
                return False
            if last is not None and apart(q, last) <= STILL:
                return True
            last = q
        return False

    @qi.nobind
    def _angles(self, names, sensors, end):
        """One arm's five angles from ALMotion.getAngles (``sensors``: sensed, else commanded); None where the call
        fails or answers something else."""
        try:
            return _floats(self._link.result(self._link.start("getAngles", (names, sensors), end)), 5)
        except RuntimeError:
            return None

    @qi.nobind
    def _at_rest(self, arm, start, asked, end):
        """Whether the arm, read at ``start`` (asked at ``asked``), stays there (its commands then recorded as done,
        :meth:`Commands.rest`): ALMotion answered every command this runtime sent it before that reading, the
        readings of the STOPPED_CYCLES cycles after it keep it within STILL of ``start`` (a command taken sets the
        arm off within them), ALMotion commands it within SAG of there (``getAngles`` without the sensors), and
        ``isCollision`` does not say the robot's protection holds it (it may let go, and
        the arm go on toward the command it was stopped short of). Asked only where the arm's way to a command this
        runtime sent it bars a move (as :meth:`nao_ik.service.engine.Engine.at_rest` does): the runtime holds a
        command as possibly running for the longest time it may take (:func:`~nao_ik.robot.other.run_time`), long
        after the arm got there or another client moved it."""
        if not self._commands.settled(arm, asked):
            return False
        model, names = MODELS[arm], list(MODELS[arm].names)
        try:
            if self._link.result(self._link.start("isCollision", (arm,), end)) == "collision":
                return False
        except RuntimeError:
            pass  # an ALMotion without it, or no answer: as the computer-side service (no protection known)
        for _ in range(STOPPED_CYCLES):
            time.sleep(CYCLE)
            q = self._angles(names, True, end)
            if q is None or apart(model.clamp(q), start) > STILL:
                return False
        # ALMotion commands it there (within SAG: a joint under load sags off its command), else something holds it
        # short of its command (a hand, a table) and may let go.
        q = self._angles(names, False, end)
        if q is None or apart(model.clamp(q), start) > SAG:
            return False
        self._commands.rest(arm, asked)
        return True

    @qi.nobind
    def _send(self, arm, start, way, reading, angles, speed, asked, version, end):
        """Send the command, or say why not ("" when sent).

        ``way``: the bounds of the postures the arm may be in from the reading on (:meth:`Commands.box`), or None.
        ``reading``: the other arm's sensed angles and BODY_JOINTS'. Under the commit lock, so that a command to
        the other arm cannot slip between this check and this command: if the other arm was commanded since this
        call's check, the answer and its motion (from ``way`` too) are checked again against where that arm may
        now go; then the stale-command guard (a reading older than the budget,
        or the call past it: nothing sent); then ``setAngles`` goes out and is recorded (:class:`Commands`)
        before the lock is left. Its answer is waited for after (within the budget).
        """
        model, names = MODELS[arm], list(MODELS[arm].names)
        other = OTHER[arm]
        while True:
            with self._commit:
                if self._commands.version(other) == version:
                    late = now()
                    if late > end or late - asked > self._budget:
                        raise RuntimeError("%s: the command was computed from a reading %.2f s old, past the call's "
                                           "budget; nothing sent" % (arm, late - asked))  # fmt: skip
                    lo, hi = way if way is not None else (start, start)  # this arm's box from the reading on
                    seconds = run_time(model, lo, hi, angles, speed)
                    pending = self._link.start("setAngles", (names, angles, speed), end)
                    entry = self._commands.add(arm, angles, speed, seconds, pending.future)
                    break
            body, version = self._body(arm, reading[0], asked, reading[1])  # the other arm commanded meanwhile: again
            why = _crossing(model, start, angles, body, True, way)
            if why:
                return why
        try:
            self._link.result(pending)
        except RuntimeError as e:
            entry.future, entry.answered, entry.lost = None, now() + KEEP, True  # ALMotion may still take it, later
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
