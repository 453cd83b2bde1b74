"""The result types and the interface every solver shares."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from ..kinematics.ops import Ops
from ..model.arm import ArmModel

#: The stall rule every solver loop follows: an iteration that improves the
#: best error by less than MIN_PROGRESS metres does not count as progress, and
#: PATIENCE such iterations in a row end the loop for that target (it is out
#: of reach, or pinned against the limits; the driver may restart it).
MIN_PROGRESS = 1e-8
PATIENCE = 5


class Solution(NamedTuple):
    """The answer of one solve.

    Attributes:
        angles: the five joint angles in chain order, radians, inside the limits.
        names: the ALMotion joint names of ``angles``.
        reached: True if the hand is within the tolerance of the target.
        error: distance from the hand (FK of ``angles``) to the target, metres.
        iterations: iterations used, summed over restarts.
        method: the solver that produced it.
        arm: ``"LArm"`` or ``"RArm"``.
        clamped: joints whose raw value (a network's output) was outside the
            limits and was clamped; empty for the iterative solvers, which
            stay inside the limits throughout.
        shortfall: metres by which the hand is farther from the target than
            the arm can get (0 when reached; an unreachable target's answer is
            the closest attainable pose, :mod:`nao_ik.geometry.closest`).
            None for the papers' approximations (``nn-paper``, ``cells``),
            which keep their own answers.
        refined: True where the method's own answer stopped farther than
            attainable and was replaced by the closest attainable pose.
        reason: why the target is not reached, ``""`` when it is:
            ``"out of reach"`` (nearer or farther than the links allow),
            ``"joint limits"`` (the limits allow no swivel there), or
            ``"collision: <part>"`` (only configurations through the body
            reach it; the answer is the nearest clear pose toward it). An
            answer of the papers' approximations that goes through the body
            is reported the same way (``reached`` False), not replaced.
    """

    angles: tuple[float, ...]
    names: tuple[str, ...]
    reached: bool
    error: float
    iterations: int
    method: str
    arm: str
    clamped: tuple[str, ...] = ()
    shortfall: float | None = 0.0
    refined: bool = False
    reason: str = ""


class BatchSolution(NamedTuple):
    """The answers of a batch solve; arrays over targets.

    Attributes:
        angles: (N, 5) joint angles.
        names: joint names of the columns of ``angles``.
        reached: (N,) bool.
        error: (N,) metres.
        iterations: (N,) int.
        method: the solver.
        arm: the arm.
        clamped: (N, 5) bool, as :attr:`Solution.clamped`.
        shortfall: (N,) metres, as :attr:`Solution.shortfall` (NaN for the papers' approximations).
        refined: (N,) bool, as :attr:`Solution.refined`.
        reason: (N,) str, as :attr:`Solution.reason`.
        searched: (N,) bool, True where the body check's batch pass could not settle the target and the
            one-target search answered it (:func:`nao_ik.solvers.safety.check_batch`): how much of the
            batch ran at single-solve speed.
    """

    angles: np.ndarray
    names: tuple[str, ...]
    reached: np.ndarray
    error: np.ndarray
    iterations: np.ndarray
    method: str
    arm: str
    clamped: np.ndarray | None = None
    shortfall: np.ndarray | None = None
    refined: np.ndarray | None = None
    reason: np.ndarray | None = None
    searched: np.ndarray | None = None


class Run(NamedTuple):
    """What a solver loop returns: final angles (5 components), error, iterations.

    ``clamped`` (5 flags, or None) marks joints of a network's raw answer that
    were clamped into the limits. ``shortfall``, ``refined`` and ``reason``:
    see :class:`Solution` (set by the driver); ``searched``: see :class:`BatchSolution`.
    """

    q: list
    error: Any
    iterations: Any
    clamped: Any = None
    shortfall: Any = 0.0
    refined: Any = False
    reason: Any = ""
    searched: Any = False
    #: The closest attainable pose the driver computed for a target its answer stopped short of (single: a
    #: :class:`~nao_ik.geometry.closest.Closest` or None; batch: {row: Closest}): the body check's, not computed again.
    closest: Any = None


# A start rule: (model, target components, caller's start, ops) -> (start
# angles, clamped flags or None). The network methods start from a prediction.
Start = Callable[[ArmModel, Sequence[Any], Sequence[Any], Ops], tuple]


# A solver loop: (model, target components, start angles, tolerance, max
# iterations, ops) -> Run. Written elementwise so that one definition serves a
# single target (floats) and a batch (arrays). It must keep every angle inside
# the model's limits at every iteration and stop on its own when the error no
# longer decreases.
Loop = Callable[[ArmModel, Sequence[Any], Sequence[Any], float, int, Ops], Run]


class SolverSpec(NamedTuple):
    """A registered solver.

    Attributes:
        name: the method name users pass.
        loop: the elementwise iteration.
        max_iterations: default iteration cap per start.
        summary: one line for ``--help`` and the README.
        start: where the first attempt starts; default: the caller's start.
        restarts: whether a failed first attempt is retried from other seeds.
        seeds: the method's own restart postures, tried before the common
            ones: (model, targets (N, 3), WristYaw (N,)) -> (N, K, 5).
        own_answer: the method keeps its own answer even where it jumps away
            from the start posture (the papers' approximations, reproduced
            as published); every other method answers on the start's side.
        nearest: the method's answer where it reaches is the nearest
            solution itself (``analytic``): nothing to compare it with.
    """

    name: str
    loop: Loop
    max_iterations: int
    summary: str
    start: Start | None = None
    restarts: bool = True
    seeds: Callable[[ArmModel, np.ndarray, np.ndarray], np.ndarray] | None = None
    own_answer: bool = False
    nearest: bool = False
