"""``nao-ik bench --body``'s section 4: moves between random clear postures that the old and the new motion check
approve, run through the simulated robot's three setAngles profiles (:mod:`sim_stub.profiles`: its per-cycle steps,
the collision protection left out) and measured for entering the body (:mod:`nao_ik.evidence.body_report` prints it
with the other three sections).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from ..geometry.collision import clearance_batch
from ..geometry.scalar.clearance import checker
from ..geometry.scalar.sweep import BOX_BUDGET, advance
from ..geometry.sweep import SWEEP_MARGIN, Motion, sweep
from ..model.arm import ArmModel, arm_model
from ..model.body import MARGIN

#: The arm of the body report's sections 1, 3 and 4.
ARM = "LArm"
#: Section 4's fractionMaxSpeed values.
FRACTIONS = (0.2, 0.6)
#: Section 4's "near" moves: a start or an end whose clearance is below this (and at least MARGIN), metres.
NEAR = 0.030


def simulate(model: ArmModel, start: Sequence[float], goal: Sequence[float], fraction: float, profile: str,
             cycle: float | None = None) -> np.ndarray:  # fmt: skip
    """The postures, one per control cycle, of the simulated robot's arm moved by one ``setAngles`` command.

    The stub's own per-cycle steps (:func:`sim_stub.profiles.linear_step` / :func:`~sim_stub.profiles.smooth_step`),
    each joint's move set up as :class:`sim_stub.motion.StubMotion` sets it up for a command to an arm at rest
    (peak ``fraction`` x the joint's maximum speed, its limit acceleration, :func:`~sim_stub.profiles.synchronise`
    for ``"synchronised"``); its collision protection is not applied (nothing bends the motion).

    Returns:
        (cycles + 1, 5) postures, the start first, the goal last.
    """
    from sim_stub.body import JOINTS
    from sim_stub.profiles import DEFAULT_CYCLE, Move, limit_acceleration, linear_step, smooth_step, synchronise

    dt = DEFAULT_CYCLE if cycle is None else cycle
    speeds = [JOINTS[name].max_velocity for name in model.names]
    q = [float(x) for x in start]
    peaks = [fraction * v for v in speeds]
    accels = [limit_acceleration(v) for v in speeds]
    setup = list(zip(peaks, accels))
    if profile == "synchronised":
        setup = synchronise([abs(float(g) - s) for s, g in zip(q, goal)], peaks, accels)
    moves = {
        j: Move(float(g), peak, accel if profile != "linear" else 0.0, accels[j], 0.0)
        for j, (g, (peak, accel)) in enumerate(zip(goal, setup))
    }
    step = linear_step if profile == "linear" else smooth_step
    out = [list(q)]
    while moves:
        for j, move in list(moves.items()):
            q[j], arrived = step(move, q[j], dt)
            if arrived:
                del moves[j]
        out.append(list(q))
    return np.array(out)


class ProfileRuns(NamedTuple):
    """Section 4's moves and what became of them.

    Attributes:
        a, b: (pairs, 5) starts and goals; near: (pairs,) a start or goal closer than NEAR.
        after: the new check approves; budget: it refused for want of budget.
        before: fraction -> the old check approves.
        closest: (profile, fraction) -> (pairs,) the least clearance along the simulated motion (NaN: not run).
        robot: the same, by the simulated robot's own shapes (:func:`sim_stub.body_shapes.part_gaps`).
    """

    a: np.ndarray
    b: np.ndarray
    near: np.ndarray
    after: np.ndarray
    budget: np.ndarray
    before: dict
    closest: dict
    robot: dict


def profile_runs(pairs: int, seed: int) -> ProfileRuns:
    """Section 4's moves, checked and run through the stub's profiles."""
    from sim_stub.body_shapes import part_gaps
    from sim_stub.profiles import PROFILES

    from ..nn.data import random_configurations

    model = arm_model(ARM)
    rng = np.random.default_rng(seed + 2)
    q, d = np.empty((0, 5)), np.empty(0)
    while len(q) < 2 * pairs:
        more = random_configurations(model, 4 * pairs, rng, 0.0)
        dist = clearance_batch(model, more)[0]
        keep = dist >= MARGIN
        q, d = np.concatenate([q, more[keep]]), np.concatenate([d, dist[keep]])
    a, b = q[:pairs], q[pairs : 2 * pairs]
    near = (d[:pairs] < NEAR) | (d[pairs : 2 * pairs] < NEAR)
    check = checker(model, model.body)
    swept = [sweep(model, x, y, FRACTIONS[0]) for x, y in zip(a, b)]
    after = np.array([w.clear for w in swept])
    budget = np.array([not w.clear and w.samples >= BOX_BUDGET for w in swept])
    before = {f: np.array([advance(Motion(model, x, y, f), check)[0] for x, y in zip(a, b)]) for f in FRACTIONS}
    closest, robot = {}, {}
    for profile in PROFILES:
        for f in FRACTIONS:
            low, real = np.full(pairs, np.nan), np.full(pairs, np.nan)
            for i in np.flatnonzero(before[f] | after):
                path = simulate(model, a[i], b[i], f, profile)
                low[i] = clearance_batch(model, path)[0].min()
                real[i] = min(min(part_gaps(ARM, q)) for q in path)
            closest[profile, f], robot[profile, f] = low, real
    return ProfileRuns(a, b, near, after, budget, before, closest, robot)


def print_profiles(out, pairs: int, seed: int, runs: ProfileRuns) -> None:
    """Section 4, from :func:`profile_runs`."""
    a, b, near, after, budget, before, closest, robot = runs
    print("## 4. Moves entering the body under each profile, before and after", file=out)
    print(file=out)
    print(f"{pairs} random pairs of {ARM} postures (`nao_ik.nn.data.random_configurations`, seed {seed + 2}; "
          f"WristYaw 0), both ends clear of the body by at least {1e3 * MARGIN:g} mm "
          f"(`nao_ik.geometry.collision.clearance_batch`); near: the start or the end closer than {1e3 * NEAR:g} mm "
          f"({int(near.sum())} of the {pairs}). Approved before: the old constant-speed check clear at that "
          f"fractionMaxSpeed; approved after: `sweep(model, start, goal, fraction).clear` (the box does not "
          f"depend on the fraction: {int(after.sum())} approved, {int((after & near).sum())} of them near). Each "
          "approved move is run through the simulated robot's setAngles profiles (sim_stub.profiles: linear, "
          "smooth, synchronised; its per-cycle steps, one posture per 20 ms cycle, the stub's collision "
          "protection off) and its clearance taken at every cycle.", file=out)  # fmt: skip
    _profile_table(out, "Entering the body (clearance < 0 at some cycle): approved moves that do, and the worst "
                   "depth.", closest, before, after, near, 0.0, a, b)  # fmt: skip
    _profile_table(out, "Entering the simulated robot's own shapes (`sim_stub.body_shapes.part_gaps`: its torso, "
                   "head, pelvis and thighs and its arm, measured from the robot's meshes independently of the "
                   "library's model; the robot's body as a test meets it) at some cycle: approved moves that do, and "
                   "the worst depth.", robot, before, after, near, 0.0, a, b)  # fmt: skip
    _profile_table(out, f"Closer than SWEEP_MARGIN ({1e3 * SWEEP_MARGIN:g} mm, what the checks promise a motion "
                   "keeps) at some cycle: approved moves that do, and the least clearance.",
                   closest, before, after, near, SWEEP_MARGIN, a, b)  # fmt: skip
    # What the new check costs in moves: those the old one approved and it refuses, run through every profile.
    lost = np.zeros(pairs, dtype=bool)
    for f in FRACTIONS:
        lost |= before[f] & ~after
    low = np.fmin.reduce(np.array(list(closest.values())), axis=0)  # NaN only where no profile ran it
    print(file=out)
    print(f"Refused after, approved before (at either fraction): {int(lost.sum())} moves "
          f"({int((lost & budget).sum())} of them for want of budget: the box not certified within {BOX_BUDGET} "
          f"postures); {int((lost & (low < 0.0)).sum())} of them enter the body under some profile at some "
          f"fraction, {int((lost & (low < SWEEP_MARGIN)).sum())} come closer than SWEEP_MARGIN, "
          f"{int((lost & (low >= SWEEP_MARGIN)).sum())} keep SWEEP_MARGIN under all three profiles at both "
          "fractions.", file=out, flush=True)  # fmt: skip


def _profile_table(out, title: str, closest: dict, before: dict, after: np.ndarray, near: np.ndarray,
                   limit: float, a: np.ndarray, b: np.ndarray) -> None:  # fmt: skip
    """One table of section 4: per profile and fraction, approved moves coming below ``limit``, before and after,
    all and near; an example of the worst one of every nonzero "after" cell."""
    print(file=out)
    print(title, file=out)
    print(file=out)
    print("| profile | fractionMaxSpeed | before, all moves | after, all moves | before, near moves | "
          "after, near moves |", file=out)  # fmt: skip
    print("|---|---|---|---|---|---|", file=out)
    examples = []
    for (profile, f), low in closest.items():
        cells = []
        for moves in (np.ones_like(near), near):
            for approved in (before[f], after):
                sel = approved & moves
                bad = sel & (low < limit)
                cell = f"{int(bad.sum())} / {int(sel.sum())}"
                if bad.any():
                    worst = float(low[bad].min())
                    size = f"{-1e3 * worst:.1f} mm deep" if limit == 0.0 else f"{1e3 * worst:.1f} mm"
                    cell += f" ({100 * bad.sum() / sel.sum():.2f} %), {size}"
                cells.append(cell)
        print(f"| {profile} | {f:g} | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} |", file=out)
        bad = after & (low < limit)
        if bad.any():
            i = int(np.flatnonzero(bad)[np.argmin(low[bad])])
            examples.append((profile, f, i, float(low[i])))
    for profile, f, i, low_i in examples:
        print(file=out)
        print(f"Approved after, yet {profile} at fractionMaxSpeed {f:g} comes to {1e3 * low_i:.1f} mm of the body "
              f"(worst of its cell): start {np.round(a[i], 4).tolist()}, goal {np.round(b[i], 4).tolist()}.",
              file=out)  # fmt: skip
    out.flush()
