"""FABRIK (Aristidou & Lasenby 2011) on NAO's shoulder-elbow-hand chain, with limits inside the loop.

The chain has three points: the shoulder S (fixed), the elbow E (the
ElbowYaw/ElbowRoll centre) and the hand H. Both links are rigid vectors in
their joint frames, so their lengths are constant even though neither lies on
the line of the arm: the upper-arm vector u = (105, +-15, 0) mm includes the
elbow offset, the forearm vector f = (55.95 + 57.75, 0, 0) + Rx(WristYaw)
(0, 0, -12.31) mm includes the hand offset turned by the (held) WristYaw.

Each iteration does the backward pass (H onto the target, E toward it at
|f|) and a forward pass in which every point is placed and then projected onto
what the joint limits allow, by recovering the joint angles of the placed
point, clamping them, and recomputing the point from the clamped angles:

- shoulder: E - S = Ry(q1) Rz(q2) u. With u = L1 (cos p, sin p, 0):
  (E - S)_y = L1 sin(q2 + p), so q2 = asin((E-S)_y / L1) - p (the other root has
  cos(q2 + p) < 0, outside ShoulderRoll's limits), and q1 = atan2(-(E-S)_z, (E-S)_x).
- elbow: g = (Ry(q1) Rz(q2))^T (H - E) = Rx(q3) Rz(q4) f. Its x component is
  r cos(q4 + s) with r = |(f_x, f_y)|, s = atan2(f_y, f_x), so
  q4 = +-acos(g_x / r) - s (the root inside ElbowRoll's limits), and q3 =
  atan2(g_z, g_y) - atan2(f_z, f_x sin q4 + f_y cos q4).

These replace the recovery equations of Poddighe (2013) section 5.3. The
paper's model has no offsets (links along y), so that is not where it goes
wrong; as printed, eq. 16 is wrong for every configuration (it should read
y1 = l1 cos th1 cos th2, z1 = +l1 sin th1 cos th2), eqs. 17, 18, 23 and 24
divide the arcsin/arccos *result* by the link length instead of its argument,
and even corrected, arcsin loses the quadrant past 90 degrees, which
ShoulderPitch and ElbowYaw reach (``nao-ik report`` measures all three on the
paper's own chain). The round trip FK -> points -> angles here is tested to
1e-9. Because the loop keeps the angles and the points consistent, the answer
needs no final conversion.

:func:`fabrik_loop` adds Aitken extrapolation of the elbow near full
stretch, which is not part of FABRIK; :func:`plain_fabrik_loop` is the
algorithm alone (the same passes and limits, no extrapolation).
"""

from __future__ import annotations

from typing import Any, Sequence

from ..geometry.recovery import elbow_angles, forearm, shoulder_angles, shoulder_trig
from ..kinematics.chain import chain
from ..kinematics.ops import Ops
from ..model.arm import ArmModel
from .base import MIN_PROGRESS, PATIENCE, Run

#: Finite-difference step and largest correction of the swivel projection, radians.
SWIVEL_EPS = 1e-3
MAX_SWIVEL = 0.6

#: Aitken extrapolation of the elbow: largest ratio of successive steps
#: accepted, and largest jump, metres.
MAX_RATIO = 0.995
MAX_ELBOW_JUMP = 0.05


def plain_fabrik_loop(model: ArmModel, t: Sequence[Any], q0: Sequence[Any], tol: float, max_iter: int, ops: Ops) -> Run:
    """FABRIK alone: :func:`fabrik_loop` without the Aitken extrapolation of the elbow."""
    return fabrik_loop(model, t, q0, tol, max_iter, ops, extrapolate=False)


def fabrik_loop(
    model: ArmModel,
    t: Sequence[Any],
    q0: Sequence[Any],
    tol: float,
    max_iter: int,
    ops: Ops,
    extrapolate: bool = True,
) -> Run:
    """FABRIK iterations from q0; see the module docstring.

    Args:
        extrapolate: Aitken extrapolation of the elbow's track (nao-ik's
            addition); False runs the plain passes.
    """
    lo, hi = model.lower, model.upper
    sh = model.shoulder
    q5 = q0[4]
    f = forearm(model, q5, ops)
    l2 = ops.sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2])
    q = list(q0)
    ch = chain(model, q, ops)
    elbow = elbow_raw = ch.origins[2]
    prev_step = [0.0, 0.0, 0.0]
    e = [t[k] - ch.hand[k] for k in range(3)]
    err = ops.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
    best_q, best_err = q, err
    stale = 0 * err
    iters = 0
    for _ in range(max_iter):
        live = (best_err > tol) & (stale < PATIENCE)
        if not ops.any(live):
            break
        iters = iters + ops.count(live)
        # Backward: hand on the target, elbow toward it at the forearm length.
        d = [elbow[k] - t[k] for k in range(3)]
        k2 = l2 / ops.maximum(ops.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), 1e-12)
        eb = [t[k] + d[k] * k2 for k in range(3)]
        # Forward: elbow from the shoulder toward eb, within the shoulder's
        # limits, then the hand from the elbow toward the target.
        q1, q2, q3, q4 = _forward_pass(model, lo, hi, [eb[k] - sh[k] for k in range(3)], t, f, ops)
        # ElbowYaw past its limit: swivel the elbow about the shoulder-target
        # axis (which keeps the reach) by the Newton step that brings ElbowYaw
        # back to the limit, measured by a finite difference.
        over = q3 - ops.clip(q3, lo[2], hi[2])
        if ops.any(over != 0.0):
            v = _elbow_vector(model, shoulder_trig(q1, q2, ops))
            axis = _unit([t[k] - sh[k] for k in range(3)], ops)
            q3e = _forward_pass(model, lo, hi, _rotate(v, axis, SWIVEL_EPS, ops), t, f, ops)[2]
            slope = (q3e - q3) / SWIVEL_EPS
            ok = (over != 0.0) & (ops.abs(slope) > 1e-3)
            phi = ops.where(ok, ops.clip(-over / ops.where(ok, slope, 1.0), -MAX_SWIVEL, MAX_SWIVEL), 0.0)
            r1, r2, r3, r4 = _forward_pass(model, lo, hi, _rotate(v, axis, phi, ops), t, f, ops)
            q1, q2, q3, q4 = ops.where_list(ok, [r1, r2, r3, r4], [q1, q2, q3, q4])
        q3, q4 = ops.clip(q3, lo[2], hi[2]), ops.clip(q4, lo[3], hi[3])
        q = ops.where_list(live, [q1, q2, q3, q4, q5], q)
        ch = chain(model, q, ops)
        # Near full stretch FABRIK's alternating projections converge slowly
        # and geometrically; Aitken extrapolation of the elbow's track feeds the
        # next backward pass (the forward pass re-projects it onto the limits).
        new_elbow = ch.origins[2]
        e = [t[k] - ch.hand[k] for k in range(3)]
        err = ops.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
        if not extrapolate:
            elbow = new_elbow
            better = live & (err < best_err - MIN_PROGRESS)
            stale = ops.where(better, 0 * stale, stale + 1)
            best_q = ops.where_list(better, q, best_q)
            best_err = ops.where(better, err, best_err)
            continue
        step = [new_elbow[k] - elbow_raw[k] for k in range(3)]
        ss = step[0] * step[0] + step[1] * step[1] + step[2] * step[2]
        pp = prev_step[0] * prev_step[0] + prev_step[1] * prev_step[1] + prev_step[2] * prev_step[2]
        sp = step[0] * prev_step[0] + step[1] * prev_step[1] + step[2] * prev_step[2]
        r = sp / ops.maximum(pp, 1e-30)
        # Only where the steps line up (r close to |step|/|prev|): a smooth, slow approach.
        smooth = (r > 0.0) & (r < MAX_RATIO) & (sp * sp > 0.9 * ss * pp) & (err < best_err)
        gain = ops.where(smooth, r / (1.0 - ops.where(smooth, r, 0.0)), 0.0)
        gain = ops.minimum(gain, MAX_ELBOW_JUMP / ops.maximum(ops.sqrt(ss), 1e-30))
        elbow = [new_elbow[k] + gain * step[k] for k in range(3)]
        # After a jump, two plain passes before the next one (Aitken's rhythm).
        prev_step = ops.where_list(smooth, [0.0, 0.0, 0.0], step)
        elbow_raw = new_elbow
        # Against the limits a pass can make things worse before better: keep
        # the best pose and give up after PATIENCE passes without progress.
        better = live & (err < best_err - MIN_PROGRESS)
        stale = ops.where(better, 0 * stale, stale + 1)
        best_q = ops.where_list(better, q, best_q)
        best_err = ops.where(better, err, best_err)
    return Run(best_q, best_err, iters)


def _forward_pass(
    model: ArmModel, lo: tuple, hi: tuple, v: Sequence[Any], t: Sequence[Any], f: Sequence[Any], ops: Ops
):
    """Shoulder angles toward v (clamped), then unclamped elbow angles toward the target."""
    sh = model.shoulder
    q1, q2 = shoulder_angles(model, v, ops)
    q1, q2 = ops.clip(q1, lo[0], hi[0]), ops.clip(q2, lo[1], hi[1])
    trig = shoulder_trig(q1, q2, ops)
    e = _elbow_vector(model, trig)
    q3, q4, _ = elbow_angles(model, q1, q2, [t[k] - sh[k] - e[k] for k in range(3)], f, ops, None, trig)
    return q1, q2, q3, q4


def _elbow_vector(model: ArmModel, trig: tuple) -> list:
    """E - S = Ry(q1) Rz(q2) u, from (cos q1, sin q1, cos q2, sin q2)."""
    ux, uy, _ = model.joints[2].offset
    c1, s1, c2, s2 = trig
    w = ux * c2 - uy * s2
    return [c1 * w, ux * s2 + uy * c2, -s1 * w]


def _unit(v: Sequence[Any], ops: Ops) -> list:
    n = ops.maximum(ops.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]), 1e-12)
    return [v[0] / n, v[1] / n, v[2] / n]


def _rotate(v: Sequence[Any], a: Sequence[Any], phi: Any, ops: Ops) -> list:
    """Rodrigues: v turned by phi about the unit axis a."""
    c, s = ops.cos_sin(phi)
    ad = (a[0] * v[0] + a[1] * v[1] + a[2] * v[2]) * (1 - c)
    cx = [a[1] * v[2] - a[2] * v[1], a[2] * v[0] - a[0] * v[2], a[0] * v[1] - a[1] * v[0]]
    return [v[k] * c + cx[k] * s + a[k] * ad for k in range(3)]
