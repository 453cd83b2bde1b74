"""The nearest clear pose toward many blocked targets at once: :func:`~nao_ik.geometry.clear.closest_clear`'s
search, with the work that cannot change its answer left out.

A batch meets many targets that only configurations through the body reach
(about a sixth of random reachable targets with NAO's body). The single
solve answers each with :func:`~nao_ik.geometry.clear.closest_clear`: RAYS
rays from the target, on each the first of STEPS steps where some sampled
swivel (:func:`~nao_ik.geometry.sampled.swivel_samples`, both ElbowRoll
branches) is clear, that step bisected BISECT times, the point nearest the
target kept, and there the sampled clear configuration with the shortest
move. It evaluates every step of every ray and every sample of every point;
this search asks the same question of each point and gets the same steps and
brackets, but:

- **steps**: a ray's first clear step f gives it a distance in
  (step f-1, step f]; once some ray of a target is clear at step b, a ray not
  yet clear at step b+1 can only end beyond step b+1, farther than that ray:
  it stops there.
- **bisections**: a ray whose bracket starts beyond the end of another's
  bracket (by more than TIE) cannot be the nearest: it stops.
- **samples**: a point is clear as soon as one of its samples is; they are
  tried in rounds (:func:`~nao_ik.geometry.sampled.first_clear`), nearest
  first to the swivel that was clear at the target's last clear point (at
  first: the clearest sample at the target itself); only a blocked point
  costs all of them.

The answer is the single solve's up to the ties among rays whose distances
differ by rounding only (TIE): there the configuration with the shortest move
is taken among them. A target no ray finds clear gets its start posture, as
the single solve's search does (``found`` False).
"""

from __future__ import annotations

import numpy as np

from ..kinematics.chain import forward_batch
from ..kinematics.ops import ARRAY
from ..model.arm import ArmModel
from ..model.body import MARGIN
from .clear import BISECT, STEP, STEPS, ray_directions
from .collision import clearance_batch
from .nearest import move_time
from .sampled import first_clear, sampled_clear, swivel_samples

#: Distances (metres) within this of each other are one distance: they differ by rounding only.
TIE = 1e-12


def clear_toward(model: ArmModel, targets: np.ndarray, q0: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The nearest clear pose toward each target, see the module docstring.

    Args:
        model: the arm, with its body.
        targets: (M, 3) FRAME_TORSO metres.
        q0: (M, 5) start postures (WristYaw held).

    Returns:
        (angles (M, 5), distances (M,), found (M,)); where nothing clear was found, the start posture.
    """
    targets, q0 = np.asarray(targets, dtype=float), np.asarray(q0, dtype=float)
    m = targets.shape[0]
    dirs = ray_directions(model, targets)  # (M, K, 3)
    k = dirs.shape[1]
    wrist = q0[:, 4]
    steps = STEP * np.arange(1, STEPS + 1)
    # The hint: the clearest sample at the target itself (swivel index into both branches' samples).
    angles, inside = swivel_samples(model, targets, wrist)
    gap = np.full(inside.shape, -np.inf)
    # Measured up to the margin (exact below it, where a blocked target's samples all are), in full where one
    # reaches it: the clearest is the same sample either way.
    gap[inside] = clearance_batch(model, angles[inside], model.body, MARGIN)[0]
    again = inside & (gap == MARGIN).reshape(m, -1).any(axis=1)[:, None, None]
    if again.any():
        gap[again] = clearance_batch(model, angles[again], model.body)[0]
    hint = np.repeat(gap.reshape(m, -1).argmax(axis=1), k)  # per ray
    first = np.full(m * k, -1)
    bq = np.zeros((m * k, 5))
    best = np.full(m, STEPS + 1)  # the first step at which some ray of the target is clear
    target_of = np.repeat(np.arange(m), k)
    flat_dirs, flat_t, flat_w = dirs.reshape(-1, 3), np.repeat(targets, k, axis=0), np.repeat(wrist, k)
    for s in range(STEPS):
        rows = np.flatnonzero((first < 0) & (s <= best[target_of] + 1))
        if not rows.size:
            break
        ok, q, where = first_clear(model, flat_t[rows] + steps[s] * flat_dirs[rows], flat_w[rows], hint[rows])[:3]
        got = rows[ok]
        first[got], bq[got], hint[got] = s, q[ok], where[ok]
        np.minimum.at(best, target_of[got], s)
    live = np.flatnonzero((first >= 0) & (first <= best[target_of] + 1))
    lo = np.where(first[live] > 0, steps[np.maximum(first[live] - 1, 0)], 0.0)
    hi = steps[first[live]]
    for _ in range(BISECT):
        nearest_hi = np.full(m, np.inf)
        np.minimum.at(nearest_hi, target_of[live], hi)
        keep = lo <= nearest_hi[target_of[live]] + TIE
        live, lo, hi = live[keep], lo[keep], hi[keep]
        mid = 0.5 * (lo + hi)
        ok, q, where = first_clear(model, flat_t[live] + mid[:, None] * flat_dirs[live], flat_w[live], hint[live])[:3]
        hi, lo = np.where(ok, mid, hi), np.where(ok, lo, mid)
        bq[live[ok]], hint[live[ok]] = q[ok], where[ok]
    out_q, found = q0.copy(), np.zeros(m, dtype=bool)
    if live.size:
        dist = np.linalg.norm(forward_batch(model, bq[live]) - flat_t[live], axis=1)
        nearest_d = np.full(m, np.inf)
        np.minimum.at(nearest_d, target_of[live], dist)
        tied = live[dist <= nearest_d[target_of[live]] + TIE]
        # There, the sampled clear configuration with the shortest move from the start (of the tied rays').
        owner = target_of[tied]
        ok, nq = sampled_clear(model, forward_batch(model, bq[tied]), flat_w[tied], q0[owner])
        nq = np.where(ok[:, None], nq, bq[tied])
        sec = move_time(model, [nq[:, j] for j in range(5)], [q0[owner, j] for j in range(5)], ARRAY)
        order = np.lexsort((sec, owner))
        pick = order[np.r_[True, owner[order][1:] != owner[order][:-1]]]
        out_q[owner[pick]], found[owner[pick]] = nq[pick], True
    return out_q, np.linalg.norm(forward_batch(model, out_q) - targets, axis=1), found
