"""nao-ik: inverse kinematics for the arms of the NAO robot.

Library core (numpy only)::

    import nao_ik
    sol = nao_ik.solve([0.15, 0.10, 0.10], arm="LArm", method="fabrik")
    sol.angles, sol.reached, sol.error

The qi service lives in :mod:`nao_ik.service` (needs the ``qi`` package).
"""

from .all_solutions import AllSolutions, solve_all
from .api import METHODS, forward, solve, solve_batch
from .model import ARMS, ArmModel, arm_model
from .solvers import BatchSolution, Solution

__all__ = [
    "ARMS",
    "METHODS",
    "AllSolutions",
    "ArmModel",
    "BatchSolution",
    "Solution",
    "arm_model",
    "forward",
    "solve",
    "solve_all",
    "solve_batch",
]
__version__ = "0.1.0"
