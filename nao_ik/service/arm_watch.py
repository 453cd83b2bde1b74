"""The engine's watch of each arm: what the robot shows of it (``getArmState``), waiting until it stops or arrives,
proving it at rest, and asking the robot whether its collision protection holds it.

A mixin of :class:`nao_ik.service.engine.Engine`: its methods read the robot through the engine's readings
(:mod:`nao_ik.service.sensed`) and judge them with its record (:mod:`nao_ik.service.record`).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable

from ..geometry.scalar.sweep import CYCLE, SAG, STILL, STOPPED_CYCLES, apart
from ..geometry.sweep import ARRIVED, sweep_from
from ..model.arm import ArmModel
from ..model.body_data import BODY_JOINTS
from ..motion.truth import FOREIGN, FOREIGN_WAIT, arrived
from .jobs import Job
from .link import first_line
from .motions import MOVING, ROBOT_PROTECTION, RobotProtection, StoppedOnItsWay, StoppedShort, Way, left
from .record import SHORT

#: A step has arrived when every sensed angle is within this of the command (rad); a step may take
#: twice its computed time plus this margin (s).
ARRIVAL_TOLERANCE = 1e-3
ARRIVAL_MARGIN = 1.0
#: An arm still this long (s) farther than SAG from a posture it was sent to, every command to it answered by
#: ALMotion and the robot's protection not holding it, stays where it is (bent elsewhere by the protection,
#: which has let go, or held by something): the sequence ends there with :class:`StoppedShort` at once, not
#: when the call's budget runs out.
GIVE_UP = 15 * CYCLE
#: The speed of the command that keeps a still arm where it stands (:meth:`Engine._stays`): it moves the arm by the
#: joints' noise at most, and the next command's check grows the arm's way by the overshoot at this speed.
HOLD_SPEED = 0.05

def still_for(still: int, now: Any, last: Any) -> int:
    """Readings in a row the arm has not moved (by more than STILL a cycle), counting ``now``."""
    return still + 1 if last is not None and apart(now, last) <= STILL else 0


class ArmWatch:
    """The engine's methods that watch an arm (a mixin of :class:`~nao_ik.service.engine.Engine`)."""

    def state(self, arm: str, end: float) -> dict:
        """The arm as the robot shows it now (``getArmState``): whether it moves, arrived at the service's last
        command, stopped short of it (and why), or stands still with no command of the service's under way.

        Returns:
            ``state`` ("moving", "arrived", "stopped" or "still"), ``reason`` ("" where it moves toward the
            service's command or arrived), ``moving``, ``motors``, and the arm's ``target`` (the service's last
            command; [] if none), ``commanded`` (ALMotion's command this cycle) and ``sensed`` angles.
        """
        model = self.model(arm, end)
        names = list(model.names)
        sensed, stiffness, reading = self.sensed.read_timed(names, left(end), fresh=True)
        commanded = [reading.commanded[n] for n in names]
        self._prove_stalled(arm, end)
        with self._commit:
            last, watch, fate = self.last(arm), self.record.watch[arm], self.record.fate(arm)
            busy = self.arms[arm].busy()
        motors = all(v > 0.0 for v in stiffness)
        if busy:  # a job still sends to it: a path, or a reach's legs
            state, reason = "moving", ""
        elif last is not None and arrived(commanded, last.aim):  # ALMotion's command ended there
            state, reason = ("arrived", "") if apart(sensed, last.aim) <= SAG else ("moving", "")
        elif last is not None and not (last.seen is not None and watch.still_after(last.seen)):
            state, reason = "moving", ""  # on its way (or setting off: ALMotion took the command a moment ago)
        elif self.unknown(arm):
            state, reason = "moving", "moving under commands this service did not send"
        elif last is None:
            state, reason = "still", fate
        else:
            state, reason = "stopped", fate or f"the {arm} stays short of its last command"
            if not motors:
                reason = "its motors are off"
            try:
                self._protected(arm, end, "short of its last command")
            except RobotProtection as e:
                reason = first_line(e)
        return {"arm": arm, "state": state, "reason": reason, "moving": state == "moving", "motors": motors,
                "target": [] if last is None else list(last.aim), "commanded": commanded, "sensed": sensed}  # fmt: skip

    def at_rest(self, model: ArmModel, start: Any, end: float) -> bool:
        """Whether an arm seen still at ``start`` stays there: ALMotion has answered every command to it (none went
        unanswered), the last one was sent over STOPPED_CYCLES ago, and the readings of STOPPED_CYCLES cycles
        taken after those answers came keep it within STILL of ``start`` (a command taken sets the arm off within
        them). Where it does, a motion from ``start`` alone is its motion, not one from anywhere on its way to that
        command.

        And ALMotion commands the arm where it is (``getAngles`` without the sensors, within SAG of ``start``):
        else something holds it short of ALMotion's command (a hand, a table), and lets go of it when it will.
        Where the robot's collision protection holds it (``isCollision``: an arm stopped short of that command,
        or put near the body by another client, ``rest()``'s posture for one), the protection may let go and the
        arm set off toward that command: it is first commanded to stay where it is (:meth:`_stays`), which
        replaces that command.
        """
        arm, names = model.arm, list(model.names)
        last = self.last(arm)
        if last is None or apart(last.aim, start) <= 1e-9:
            return True  # no command it may still be on its way to (:meth:`way`)
        recent = time.monotonic() - last.sent <= STOPPED_CYCLES * CYCLE
        if arm in self._lost or not self._sent[arm].answered() or recent:
            return False
        try:
            self._protected(arm, end, "short of its last command")
            held = False
        except RobotProtection:
            held = True
        for k in range(STOPPED_CYCLES + 1):
            if k:
                time.sleep(CYCLE)
            now, _ = self.sensed.read(names, left(end), fresh=True)
            if apart(model.clamp(now), start) > STILL:
                return False
        if self.last(arm) is not last:
            return False  # sent to meanwhile
        if not self._stays(model, list(start), end, held):
            return False
        self.record.seen_still(arm, rested=True)
        return True

    def _stays(self, model: ArmModel, here: list, end: float, hold: bool) -> bool:
        """Whether ALMotion commands a still arm, read at ``here``, within SAG of there (``getAngles`` without the
        sensors; a joint under load sags off its command). With ``hold``, command it to stay at that command (the
        reading ``here`` is not sent: its sensor may be off too): ALMotion takes a joint's newest command, so the one
        it was on its way to is gone, and the joints' command does not change: it moves nothing; at HOLD_SPEED;
        under the lock that orders every command, so the other arm's checks see it."""
        names = list(model.names)
        try:
            commanded = [float(q) for q in model.clamp(self.motion.numbers("getAngles", names, False, count=5,
                                                                          budget=left(end)))]  # fmt: skip
        except RuntimeError:
            return False
        if apart(commanded, here) > SAG:
            return False
        if not hold:
            return True
        with self._commit:
            last = self.last(model.arm)
            if last is None or apart(commanded, last.aim) > 1e-9:  # else its last command is ALMotion's
                self.send(model.arm, names, commanded, HOLD_SPEED, end)
        return True

    def _await_rest(self, arms: Iterable[str], end: float, until: float) -> None:
        """Wait, until ``until`` (monotonic s) at most, until none of ``arms`` is :meth:`unknown`: the readings the
        robot's poller takes every cycle while calls come (:class:`SensedCache`) are held against the arms
        (:meth:`~nao_ik.service.record.Record.observe`)."""
        while any(self.unknown(arm) for arm in arms) and time.monotonic() < until:
            self.sensed.read(BODY_JOINTS, left(end))  # keeps the poller reading
            time.sleep(CYCLE / 2)

    def _onward(self, model: ArmModel, goal: list, now: list) -> bool:
        """Whether a command to ``goal`` is certified with the arm at the reading ``now`` on its way (:meth:`way`):
        one check per reading while an arm is waited for, so it is the direct motion's alone."""
        start = model.clamp(now)
        return not self.unknown(model.arm) and sweep_from(model, start, goal, 1.0, self.way(model, start)).clear

    def wait_still(self, model: ArmModel, job: Job, end: float, what: str, state: bool = True,
                   ready: Callable[[list], bool] | None = None) -> tuple | None:  # fmt: skip
        """Wait until the arm stops (at its last command, or wherever it was stopped), or until ``ready`` says
        yes to a fresh reading of it; its state then.

        Returns:
            (model, start) as :meth:`arm_state` reads them then (None without ``state``).
        """
        arm, names, last = model.arm, list(model.names), self.last(model.arm)
        aim = None if last is None else last.aim
        last, still, since = None, 0, time.monotonic()
        while True:
            now, _ = self.sensed.read(names, left(end), fresh=True)
            if self.unknown(arm):  # until it is seen at rest: its commanded angles tell, not a sensed stillness
                if time.monotonic() - since > FOREIGN_WAIT:
                    raise RuntimeError(f"{what}: {FOREIGN.format(arm=arm)}")
            elif aim is None or apart(now, aim) <= ARRIVED or ready is not None and ready(now):
                break
            # Still over two cycles: a command not yet begun (or a smooth start) can look still over one.
            still = still_for(still, now, last)
            if still >= 2 and not self.unknown(arm):
                self.record.seen_still(arm)
                break
            last = now
            if job.stop.wait(CYCLE):
                raise RuntimeError(f"{what}: motion: waiting for the arm to stop, {job.reason}; nothing sent")
            if time.monotonic() > end:
                raise RuntimeError(f"{what}: {MOVING}, past the call's budget; nothing sent")
        return self.arm_state(arm, motors=True, end=end, fresh=True) if state else None

    def arrive(self, model: ArmModel, via: list, job: Job | None, end: float, speed: float,
               ready: Callable[[list], bool] | None = None) -> Way | None:  # fmt: skip
        """Wait until the arm has stopped at ``via`` (a sequence's intermediate posture): within ARRIVED of
        it, or within SAG (a sagging joint), and no joint moving more than STILL over a cycle; or, with
        ``ready``, until it says yes to a fresh reading of the arm on its way there.

        Returns:
            The arm's way from there (:meth:`way`: where it stopped, or from the reading toward ``via``), or
            None where the job was stopped first (a later call took the arm).

        Raises:
            RobotProtection: the arm stopped short and the robot says its collision protection did it.
            StoppedShort: the arm stays short of ``via`` (GIVE_UP), the robot's protection not holding it.
            StoppedOnItsWay: the call's budget ran out before the arm got there.
        """
        last, still, since = None, 0, None
        while True:
            if time.monotonic() > end:
                raise StoppedOnItsWay(
                    "the arm did not reach its swung-out posture within the budget; nothing more sent"
                )
            now, _ = self.sensed.read(list(model.names), left(end), fresh=True)
            off = apart(now, via)
            still = still_for(still, now, last)
            if still and off <= ARRIVED or still >= 2 and off <= SAG:
                self.record.seen_still(model.arm, rested=off <= ARRIVED)  # at it: the next leg replaces it
                return Way(list(now), list(now), speed)
            if ready is not None and ready(now):
                with self._commit:
                    return Way(list(now), list(via), speed, self.record.earlier(model.arm))
            # Still since when, counted once ALMotion has taken every command (a command it has not taken yet may
            # still set the arm off).
            taken = still >= 2 and self._sent[model.arm].answered()
            since = (since if since is not None else time.monotonic()) if taken else None
            stays = since is not None and time.monotonic() - since >= GIVE_UP and not (job and job.stop.is_set())
            if stays or still >= STOPPED_CYCLES and still % STOPPED_CYCLES == 0:
                state = self._protected(model.arm, end, "on its way to a swung-out posture")
            if stays:
                raise StoppedShort(f"the {model.arm} stopped {off:.2f} rad short of the posture it was sent to and "
                                   f"stays there (isCollision: {state}); nothing more sent")  # fmt: skip
            last = now
            if job is None:
                time.sleep(CYCLE)
            elif job.stop.wait(CYCLE):
                return None

    def _protected(self, arm: str, end: float, where: str) -> str:
        """Raise :class:`RobotProtection` if ALMotion's ``isCollision`` says the arm's protection holds it; else
        its answer ("unknown" where ALMotion has no such call or did not answer)."""
        try:
            state = self.motion.call("isCollision", arm, budget=min(left(end), self.motion.timeout))
        except RuntimeError:  # an ALMotion without it, or no answer
            return "unknown"
        if state == "collision":
            raise RobotProtection(f"{ROBOT_PROTECTION}: the robot stopped the {arm} {where} (isCollision: "
                                  "collision); nothing more sent")  # fmt: skip
        return str(state)

    def _prove_stalled(self, arm: str, end: float) -> None:
        """A command seen at rest short of its goal (:meth:`~nao_ik.service.record.Record.observe`) runs no more
        unless the robot's collision protection holds the arm (it goes on when that lets go): where ``isCollision``
        says it does not, drop it."""
        last = self.last(arm)
        if last is None or not last.stalled or arm in self._lost:
            return
        try:
            state = self._protected(arm, end, "short of its last command")
        except RobotProtection:  # held: it goes on when the protection lets go
            return
        if state != "unknown":  # an ALMotion without isCollision, or no answer: it may still run
            self.record.drop(arm, SHORT, only=last)

    def wait_arrival(self, names: list, angles: list, seconds: float, job: Job, end: float,
                      arm: str | None = None) -> None:  # fmt: skip
        """Wait until the sensed angles are at the command (1 mrad, or SAG once still), the job is stopped, or
        time is up; an ``arm`` stopped short that the robot's protection holds raises :class:`RobotProtection`."""
        allowed = 2.0 * seconds + ARRIVAL_MARGIN
        limit = min(end, time.monotonic() + allowed)
        last, still = None, 0
        while True:
            now = self.motion.numbers("getAngles", names, True, count=len(names), budget=left(end))
            off = apart(now, angles)
            still = still_for(still, now, last)
            if off <= ARRIVAL_TOLERANCE or still >= 2 and off <= SAG:
                return
            if arm is not None and still >= STOPPED_CYCLES and still % STOPPED_CYCLES == 0:
                self._protected(arm, end, "on its way")
            last = now
            if job.stop.wait(CYCLE):
                raise RuntimeError(job.reason)
            if time.monotonic() > limit:
                raise RuntimeError(f"the robot did not get there within {allowed:.1f} s (or the call's budget)")
