"""The result types and the interface every solver shares."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from ..model import ArmModel
from ..ops import Ops

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
    """

    angles: tuple[float, ...]
    names: tuple[str, ...]
    reached: bool
    error: float
    iterations: int
    method: str
    arm: str


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
    """

    angles: np.ndarray
    names: tuple[str, ...]
    reached: np.ndarray
    error: np.ndarray
    iterations: np.ndarray
    method: str
    arm: str


class Run(NamedTuple):
    """What a solver loop returns: final angles (5 components), error, iterations."""

    q: list
    error: Any
    iterations: Any


# A solver loop: (model, target components, start angles, tolerance, max
# iterations, ops) -> Run. Written elementwise so that one definition serves a
# single target (floats) and a batch (arrays). It must keep every angle inside
# the model's limits at every iteration and stop on its own when the error no
# longer decreases.
Loop = Callable[[ArmModel, Sequence[Any], Sequence[Any], float, int, Ops], Run]


class SolverSpec(NamedTuple):
    """A registered iterative solver.

    Attributes:
        name: the method name users pass.
        loop: the elementwise iteration.
        max_iterations: default iteration cap per start.
        summary: one line for ``--help`` and the README.
    """

    name: str
    loop: Loop
    max_iterations: int
    summary: str
