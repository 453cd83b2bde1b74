"""Continuity: does a method move the arm smoothly along a smooth path?

The protocol of the continuity issue: straight lines in joint space between
two random in-limit configurations (WristYaw fixed along each line), POINTS
points each, so that a solution one small joint step away always exists. Each
point is solved from the previous answer, as the service does from the
robot's current angles. A step *jumps* when some joint moves more than the
path's own step plus SLACK radians. A jump is *forced* when no solution of
the target lies that close to the posture the arm is in (checked against
``solve_all`` sampled every 0.5 degree of swivel): the arm may have followed
another continuation of the solution set than the path (at a fold where the
two ElbowRoll roots meet, or along a limit), whose end it has now reached.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from ..api import all_solutions
from ..api import position as api
from ..geometry.collision import clearance
from ..kinematics.chain import forward_batch
from ..model.arm import arm_model
from ..model.body import MARGIN

POINTS = 60
SLACK = 0.05


class Continuity(NamedTuple):
    """One method's figures over the paths.

    Attributes:
        steps: consecutive answers compared.
        jumps: steps where a joint moved more than the path's step + SLACK.
        forced: of those, the ones where no solution was that close.
        worst: the largest joint change beyond the path's own step, radians.
        median_us: the median time of one step's ``api.solve`` (the service's common case: a target near
            the arm's hand, solved from its posture), microseconds.
    """

    steps: int
    jumps: int
    forced: int
    worst: float
    median_us: float


def joint_paths(arm: str, count: int, seed: int = 0, points: int = POINTS) -> np.ndarray:
    """(count, points, 5) configurations on straight joint-space lines, WristYaw fixed per line."""
    model = arm_model(arm)
    rng = np.random.default_rng(seed)
    a = rng.uniform(model.lower, model.upper, (count, 5))
    b = rng.uniform(model.lower, model.upper, (count, 5))
    b[:, 4] = a[:, 4]
    s = np.linspace(0.0, 1.0, points)[None, :, None]
    return a[:, None, :] + s * (b - a)[:, None, :]


def measure(method: str, arm: str, paths: np.ndarray) -> Continuity:
    """Solve every point of every path from the previous answer (the first from the path's start)."""
    model = arm_model(arm)
    steps = jumps = forced = 0
    worst = 0.0
    times = []
    for path in paths:
        targets = forward_batch(model, path)
        prev = path[0]
        for k in range(1, len(path)):
            t0 = time.perf_counter()
            sol = api.solve(targets[k], arm, method, initial=prev)
            times.append(time.perf_counter() - t0)
            ans = np.asarray(sol.angles)
            allowed = float(np.max(np.abs(path[k] - path[k - 1]))) + SLACK
            change = float(np.max(np.abs(ans - prev)))
            steps += 1
            if change > allowed:
                jumps += 1
                near = all_solutions.solve_all(targets[k], arm, wrist=float(prev[4]), step_deg=0.5).solutions
                # Solutions through the body are not available to the arm (nao_ik.model.body).
                near = [s for s in near if not model.body or clearance(model, s.angles).distance >= MARGIN - 1e-9]
                forced += min((np.max(np.abs(np.asarray(s.angles) - prev)) for s in near), default=np.inf) > allowed
            worst = max(worst, change - allowed + SLACK)
            prev = ans
    return Continuity(steps, jumps, forced, worst, 1e6 * float(np.median(times)) if times else float("nan"))
