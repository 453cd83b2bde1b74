"""The engine's routes: the safe commands from where an arm is (or may be, on its way) to a goal.

A mixin of :class:`nao_ik.service.engine.Engine`: the plans come from :func:`nao_ik.geometry.sweep.plan` (swung out
around the body where the straight motion is not certified), judged from everywhere the arm may be on its way to
its last command (:meth:`Routing.way`, the record's :mod:`nao_ik.service.record`).
"""

from __future__ import annotations

import functools
import time
from typing import Any, Callable, Iterable

from ..geometry.collision import clearance
from ..geometry.scalar.sweep import apart
from ..geometry.sweep import Plan, Sweep, first_direct, plan, sweep_from
from ..geometry.sweep import seconds as move_seconds
from ..model.arm import ArmModel
from ..model.body import MARGIN
from ..motion.truth import anywhere
from .jobs import Job
from .motions import MOVING, OTHER_ARM, StoppedOnItsWay, Way


class Routing:
    """The engine's methods that plan an arm's commands (a mixin of :class:`~nao_ik.service.engine.Engine`)."""

    def _next_leg(self, model: ArmModel, via: list, q: list, goal: list, speed: float, job: Job | None, end: float,
                  what: str, waited: list) -> ArmModel | None:  # fmt: skip
        """Wait until the leg from ``via`` (the last command sent) to ``q`` may go: once it is certified from the
        rest of the arm's way to ``via`` (its reading toward it, a retarget's overshoot included); where the body
        now says no to that (the other arm moved), once the arm stopped there, as where it says no from the start.

        Returns:
            The arm's model now (the body where it is now), or None where a later call took the arm.

        Raises:
            StoppedOnItsWay: the sequence ends here (the arm stopped short, or the body now bars the rest).
        """
        for ready in (functools.partial(self._onward, model, q), None):
            t1 = time.perf_counter()
            try:
                way = self.arrive(model, via, job, end, speed, ready)
            finally:
                waited[0] += time.perf_counter() - t1
            if way is None:
                return None
            # The body now: the other arm may have moved, or been sent somewhere, since the plan.
            model = self.arm_state(model.arm, motors=True, end=end, fresh=True)[0]
            near = clearance(model, goal, model.body)
            if near.distance >= MARGIN - 1e-6 and sweep_from(model, way.reading, q, speed, way).clear:
                return model
            if way.reading == way.aim:  # stopped there (the second pass always is): the body says no from there
                break
        if near.distance < MARGIN - 1e-6:
            raise StoppedOnItsWay(f"{what}: collision: the {near.part} is now where the arm was going; "
                                  "nothing more sent")  # fmt: skip
        # The leg was planned from the via itself; the arm stopped near it (within SAG): from there.
        raise StoppedOnItsWay(f"{what}: motion: from where the arm reached its last posture on the way the "
                              "next move would cross the body; nothing more sent")  # fmt: skip

    def _plan(self, model: ArmModel, start: Any, goal: list, speed: float, move: bool, job: Job | None, end: float,
              what: str, waited: list, still: bool = False, others: Callable | None = None) -> tuple:  # fmt: skip
        """The safe commands to ``goal`` from the arm's posture ``start`` (None: read it now, fresh).

        ``goal`` must be clear of the body where the arm's state puts it. Where, for a move, the arm is still
        moving and from somewhere on its way the new motion would cross the body, wait until it stops there,
        or until it is far enough on its way that the motion is certified from the rest of it, and plan from
        where it is.

        Where that motion needs legs or a wait and ``others`` gives postures doing the same task, the first whose
        motion goes direct (:meth:`_other`) is the goal instead.

        Returns:
            (model, start, the goal's clearance, the plan (None: the goal is within the body's margin), the
            goal); the seconds spent waiting for an arm are added to ``waited[0]``.
        """
        if start is None:
            model, start = self.arm_state(model.arm, motors=True, end=end, fresh=True)
        near = clearance(model, goal, model.body)
        route = way = direct = None
        tried = False  # other postures tried (from anywhere on the arm's way): again once it is at rest
        if near.distance >= MARGIN - 1e-6:
            if others is not None and not self.unknown(model.arm):  # :meth:`route`'s first test, first
                moving = self.way(model, start)
                direct = sweep_from(model, start, goal, speed, moving)
                if not direct.clear:
                    tried = True
                    other = self._other(model, start, speed, moving, others)
                    if other is not None:
                        goal, route = other
            if route is None:
                route, way = self.rested_route(model, start, goal, speed, still, end, direct)
        while move and route is not None and route.reason == MOVING:  # until it may go, or the budget ends
            # Until the arm stops, or is far enough on its way that the motion is certified from the rest of it.
            early = False

            def onward(now: list, model: ArmModel = model, goal: list = goal) -> bool:
                nonlocal early
                early = self._onward(model, goal, now)
                return early

            t0 = time.perf_counter()
            model, start = self.wait_still(model, job, end, what, ready=onward)
            waited[0] += time.perf_counter() - t0
            near = clearance(model, goal, model.body)  # the body now (the other arm may have moved)
            route, way = (self.rested_route(model, start, goal, speed, not early, end) if near.distance >= MARGIN - 1e-6
                          else (None, None))  # fmt: skip
            if tried and route is not None and route.commands and route.commands != [goal] and way is None:
                # The arm at rest now: its other postures again, from where it is alone.
                tried = False
                other = self._other(model, start, speed, None, others)
                if other is not None:
                    goal, route = other
        other = self.model(OTHER_ARM[model.arm], end)
        if move and (route is None or not route.commands) and (self.last(other.arm) is not None
                                                                or self.unknown(other.arm)):  # fmt: skip
            # The other arm, anywhere on its way to its last command (as read), may be what is in the way: wait
            # until it is there (at once if it is), and plan again from a fresh reading.
            t0 = time.perf_counter()
            self.wait_still(other, job, end, what, state=False)
            model, start = self.arm_state(model.arm, motors=True, end=end, fresh=True)
            waited[0] += time.perf_counter() - t0
            near = clearance(model, goal, model.body)
            route, way = self.route(model, start, goal, speed) if near.distance >= MARGIN - 1e-6 else (None, None)
        return model, start, near, route, goal

    @staticmethod
    def _other(model: ArmModel, start: Any, speed: float, way: Way | None,
               others: Callable[[ArmModel, list], Iterable[list]]) -> tuple | None:  # fmt: skip
        """(goal, its plan): the first posture of ``others(model, start)`` whose one command is certified
        (:func:`nao_ik.geometry.sweep.first_direct`); None."""
        q = first_direct(model, start, others(model, list(start)), speed, way)
        return None if q is None else (q, Plan([q], "", move_seconds(model, start, q, speed)))

    def rested_route(self, model: ArmModel, start: Any, goal: list, speed: float, still: bool, end: float,
                     direct: Sweep | None = None) -> tuple:  # fmt: skip
        """:meth:`route` (``direct``: its first test, done already); where the arm's way to its last command bars
        the move and, with ``still`` (the arm may have stopped at ``start``: the proof is worth its cycles), it is
        :meth:`at_rest` there, stopped short of that command (a sagging joint, the robot's protection; it will not
        set off toward it any more), again from where it is alone."""
        route, way = self.route(model, start, goal, speed, direct=direct)
        if still and route.reason == MOVING and self.at_rest(model, start, end):
            route, way = self.route(model, start, goal, speed, True)
        return route, way

    def route(self, model: ArmModel, start: Any, goal: list, speed: float, stopped: bool = False,
              direct: Sweep | None = None) -> tuple[Plan, Way | None]:  # fmt: skip
        """The safe commands from the arm's posture to ``goal`` (:func:`nao_ik.geometry.sweep.plan`), the arm maybe
        moving.

        While the arm may still be moving toward its last command, the first command arrives with the
        arm somewhere on its way there (:meth:`way`): its motion must be clear from all of it, at any timing
        (:func:`nao_ik.geometry.sweep.sweep_moving`); else the plan from that posture, if its first motion is;
        else no commands, with the reason :data:`MOVING`.

        With ``stopped`` (the arm seen still, long after its last command), from ``start`` alone. ``direct``: the
        direct motion's check (:func:`~nao_ik.geometry.sweep.sweep_from`, from the arm's way) where the caller
        has it already.

        Returns:
            (the plan, the arm's way as checked, or None when the arm is still).
        """
        way = None if stopped else self.way(model, start)
        direct = None if stopped else direct
        if way is None:
            return plan(model, start, goal, speed, direct=direct), None
        if self.unknown(model.arm):  # from anywhere in its range: nothing is certified
            return Plan([], MOVING, move_seconds(model, start, goal, speed)), way
        if (sweep_from(model, start, goal, speed, way) if direct is None else direct).clear:  # from all the way
            return Plan([goal], "", move_seconds(model, start, goal, speed)), way
        route = plan(model, start, goal, speed)
        if len(route.commands) > 1 and sweep_from(model, way.reading, route.commands[0], speed, way).clear:
            return route, way
        alt = plan(model, way.aim, goal, speed)  # planned from where the arm is going instead
        if alt.commands and sweep_from(model, way.reading, alt.commands[0], speed, way).clear:
            return alt, way
        return Plan([], MOVING, route.seconds), way

    def way(self, model: ArmModel, start: Any) -> Way | None:
        """The arm's way from its reading ``start`` toward its last command (and the earlier ones it may still be
        braking toward: :meth:`_earlier`); None when it is at its last command and heads for no other."""
        with self._commit:
            if self.unknown(model.arm):  # moving under commands the service did not send: anywhere in its range
                return Way(list(start), *anywhere(model))
            last = self.last(model.arm)
            earlier = self.record.earlier(model.arm)
            # Any difference: the last stretch to the command counts too (0.01 rad a joint moves the arm 12 mm).
            if last is None or not earlier and apart(last.aim, start) <= 1e-9:
                return None
            return Way(list(start), list(last.aim), last.fraction, earlier)
