"""nao-ik: inverse kinematics for the arms of the NAO robot.

Library core (numpy only)::

    import nao_ik
    sol = nao_ik.solve([0.15, 0.10, 0.10], arm="LArm", method="fabrik")
    sol.angles, sol.reached, sol.error
    pose = nao_ik.solve_pose([0.15, 0.10, 0.10, 0.0, 0.0, 0.5], arm="LArm", axis_mask=63)

ALMotion's frames (FRAME_TORSO, FRAME_WORLD, FRAME_ROBOT and the conversions to FRAME_TORSO) are
``nao_ik.frames``, :mod:`nao_ik.kinematics.frames` by its short name. The qi service lives in
:mod:`nao_ik.service` (needs the ``qi`` package).
"""

from .api.all_solutions import AllSolutions, solve_all
from .api.pose import POSE_METHODS, PoseSolution, forward_pose, solve_pose
from .api.position import METHODS, forward, solve, solve_batch
from .kinematics import frames
from .model.arm import ARMS, ArmModel, arm_model
from .recipes.path_plan import Jump, PathPlan, plan_path
from .solvers import BatchSolution, Solution

__all__ = [
    "ARMS",
    "METHODS",
    "POSE_METHODS",
    "AllSolutions",
    "ArmModel",
    "BatchSolution",
    "Jump",
    "PathPlan",
    "PoseSolution",
    "Solution",
    "arm_model",
    "forward",
    "forward_pose",
    "frames",
    "plan_path",
    "solve",
    "solve_all",
    "solve_batch",
    "solve_pose",
]
__version__ = "0.1.0"
