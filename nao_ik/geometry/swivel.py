"""The elbow swivel: the one redundant degree of freedom of the arm for a hand position.

With WristYaw held, both links are rigid (see :mod:`nao_ik.geometry.recovery`):
the elbow centre E is at |u| from the shoulder S and at |f| from the hand. For
a target t the elbow therefore lies on a circle about the axis S -> t, and
every point of that circle, turned into joint angles by
:func:`~nao_ik.geometry.recovery.recover_angles`, puts the hand exactly on t.
The joint limits decide which arcs of the circle are usable.

Swivel angle 0 is the elbow at its lowest (toward -z of FRAME_TORSO);
positive turns the elbow outward for the left arm (right-hand rule about S -> t).
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from ..kinematics.chain import chain
from ..kinematics.ops import ARRAY, SCALAR, Ops
from ..model.arm import ArmModel
from ..model.body import MARGIN
from .collision import clearance, clearance_batch
from .recovery import forearm, recover_angles_checked, upper_arm
from .scalar.clearance import (
    BODY_SCALE,  # the body's clearance enters margin_at at this scale (radians per metre)
    CAP,
)


class SwivelSet(NamedTuple):
    """Configurations at given swivel angles.

    Attributes:
        angles: (N, K, 5) joint angles (unclamped).
        violation: (N, K) summed distance outside the limits, radians (0 = feasible),
            plus, where no angles reach the point at all, by how much (see
            :func:`~nao_ik.geometry.recovery.elbow_angles`).
        reachable: (N,) False where the target is nearer or farther than the
            rigid links allow (the circle is then that of the nearest distance).
    """

    angles: np.ndarray
    violation: np.ndarray
    reachable: np.ndarray


_DOWN, _BACK = (0.0, 0.0, -1.0), (-1.0, 0.0, 0.0)


class Circle(NamedTuple):
    """The elbow's circle for one hand target (components: floats or arrays).

    Attributes:
        n: unit axis, shoulder -> hand.
        u, v: unit basis of the circle's plane; swivel phi puts the elbow at
            S + a n + r (cos phi u + sin phi v).
        a: distance from the shoulder to the circle's centre along n.
        r: the circle's radius.
        hand: the hand point the circle serves: the target, or, where the
            target is nearer or farther than the rigid links allow, the point
            toward it at the nearest distance they do.
        f: the forearm vector (ElbowRoll frame) for the held WristYaw.
        wrist: the held WristYaw.
        reachable: False where the target is nearer or farther than the links allow.
    """

    n: list
    u: list
    v: list
    a: Any
    r: Any
    hand: list
    f: list
    wrist: Any
    reachable: Any


def circle(model: ArmModel, t: Sequence[Any], wrist: Any, ops: Ops = SCALAR) -> Circle:
    """The elbow circle of target ``t`` with WristYaw ``wrist`` held (elementwise)."""
    s = model.shoulder
    l1, _ = upper_arm(model)
    f = forearm(model, wrist, ops)
    l2 = ops.sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2])
    dv = [t[0] - s[0], t[1] - s[1], t[2] - s[2]]
    d_raw = ops.sqrt(dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2])
    inv = 1.0 / ops.maximum(d_raw, 1e-12)
    n = [dv[0] * inv, dv[1] * inv, dv[2] * inv]
    d = ops.minimum(ops.maximum(d_raw, ops.abs(l1 - l2) + 1e-9), l1 + l2 - 1e-9)
    a = (d * d + l1 * l1 - l2 * l2) / (2 * d)
    r = ops.sqrt(ops.maximum(l1 * l1 - a * a, 0.0))
    # Zero swivel: the elbow at its lowest (-z projected on the circle's
    # plane), or toward -x when the arm points straight up or down.
    u = _project(_DOWN, n)
    un = ops.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
    ub = _project(_BACK, n)
    ubn = ops.sqrt(ub[0] * ub[0] + ub[1] * ub[1] + ub[2] * ub[2])
    tiny = un < 1e-6
    iu, iub = 1.0 / ops.maximum(un, 1e-12), 1.0 / ops.maximum(ubn, 1e-12)
    u = ops.where_list(tiny, [b * iub for b in ub], [c * iu for c in u])
    v = [n[1] * u[2] - n[2] * u[1], n[2] * u[0] - n[0] * u[2], n[0] * u[1] - n[1] * u[0]]
    hand = [s[k] + d * n[k] for k in range(3)]
    reachable = (d_raw >= ops.abs(l1 - l2) + 1e-9) & (d_raw <= l1 + l2 - 1e-9)
    return Circle(n, u, v, a, r, hand, f, wrist, reachable)


def take(c: Circle, rows: np.ndarray) -> Circle:
    """The circles of some targets (rows) of a batch."""

    def pick(x: Any) -> Any:
        if isinstance(x, list):
            return [pick(y) for y in x]
        return x[rows] if isinstance(x, np.ndarray) and x.ndim else x

    return Circle(*(pick(x) for x in c))


def elbow(model: ArmModel, c: Circle, phi: Any, ops: Ops = SCALAR) -> list:
    """The elbow centre at swivel ``phi`` on circle ``c``."""
    s = model.shoulder
    cp, sp = ops.cos_sin(phi)
    a, r, n, u, v = c.a, c.r, c.n, c.u, c.v
    return [s[k] + a * n[k] + r * (cp * u[k] + sp * v[k]) for k in range(3)]


def swivel_angle(model: ArmModel, c: Circle, e: Sequence[Any], ops: Ops = SCALAR) -> Any:
    """The swivel angle of elbow point ``e`` projected on circle ``c`` (the inverse of :func:`elbow`)."""
    s = model.shoulder
    w = [e[0] - s[0], e[1] - s[1], e[2] - s[2]]
    return ops.atan2(w[0] * c.v[0] + w[1] * c.v[1] + w[2] * c.v[2], w[0] * c.u[0] + w[1] * c.u[1] + w[2] * c.u[2])


def at(model: ArmModel, c: Circle, phi: Any, ops: Ops = SCALAR, branch: int | None = None) -> tuple[list, Any]:
    """The configuration at swivel ``phi`` on circle ``c``.

    Args:
        branch: which ElbowRoll root (0 or 1, see
            :func:`~nao_ik.geometry.recovery.elbow_angles`); default the one the limits allow.

    Returns:
        (five joint angles, unclamped; violation as in :class:`SwivelSet`).
    """
    # Where the forearm would have to point closer to the upper arm's x axis
    # than the 12.31 mm hand offset allows, no angles put the hand on the
    # point: that excess counts as violation too.
    q, violation = recover_angles_checked(model, elbow(model, c, phi, ops), c.hand, c.wrist, ops, branch)
    for qi, lo, hi in zip(q, model.lower, model.upper):
        violation = violation + ops.maximum(lo - qi, 0.0) + ops.maximum(qi - hi, 0.0)
    return q, violation


def margin_at(model: ArmModel, c: Circle, phi: Any, ops: Ops = SCALAR, branch: Any = None, cap: float = CAP
              ) -> tuple[list, Any]:  # fmt: skip
    """The configuration at swivel ``phi`` and its signed distance to the limits, radians.

    Where the model has a body (:attr:`~nao_ik.model.arm.ArmModel.body`), coming
    within the body's margin counts as a limit too (:func:`body_margin`, its clearance measured up to ``cap``:
    a caller that only asks whether a configuration is allowed, or how far outside it is, passes MARGIN).

    Returns:
        (five joint angles; the smallest distance of a joint to its limits,
        negative outside them, minus the excess where no ElbowRoll fits). A
        smooth function of the swivel where a single limit binds, so a root
        finder converges on the boundary.
    """
    q, excess = recover_angles_checked(model, elbow(model, c, phi, ops), c.hand, c.wrist, ops, branch)
    m = ops.where(excess > 0.0, -excess, 10.0)
    for qi, lo, hi in zip(q, model.lower, model.upper):
        m = ops.minimum(m, ops.minimum(qi - lo, hi - qi))
    if model.body:
        m = ops.minimum(m, body_margin(model, q, ops, cap))
    return q, m


def body_margin(model: ArmModel, q: Sequence[Any], ops: Ops = SCALAR, cap: float = CAP) -> Any:
    """(clearance to ``model.body`` - MARGIN) x BODY_SCALE: negative where the links come within the margin (the
    clearance measured up to ``cap``)."""
    if ops is SCALAR:
        return (clearance(model, q, model.body, cap).distance - MARGIN) * BODY_SCALE
    qa = np.stack(np.broadcast_arrays(*q), axis=1)
    return (clearance_batch(model, qa, model.body, cap)[0] - MARGIN) * BODY_SCALE


def point(
    model: ArmModel, t: Sequence[Any], wrist: Any, phi: Any, ops: Ops = SCALAR, branch: int | None = None
) -> tuple[list, Any]:
    """The configuration at swivel ``phi`` for target ``t``: :func:`at` on :func:`circle`."""
    return at(model, circle(model, t, wrist, ops), phi, ops, branch)


def _project(w: Sequence[float], n: Sequence[Any]) -> list:
    """w minus its component along n."""
    dot = w[0] * n[0] + w[1] * n[1] + w[2] * n[2]
    return [w[k] - dot * n[k] for k in range(3)]


def swivel_configurations(model: ArmModel, targets: np.ndarray, wrist: np.ndarray, swivels: np.ndarray) -> SwivelSet:
    """Joint angles for each target at each swivel angle.

    Args:
        model: the arm.
        targets: (N, 3) hand targets, metres.
        wrist: (N,) WristYaw held for each target.
        swivels: (K,) swivel angles shared by all targets, or (N, K) per target.

    Returns:
        The :class:`SwivelSet`.
    """
    t = np.asarray(targets, dtype=float).reshape(-1, 3)
    n = t.shape[0]
    phi = np.asarray(swivels, dtype=float)
    phi = np.broadcast_to(phi.reshape(1, -1) if phi.ndim == 1 else phi, (n, phi.shape[-1]))
    k = phi.shape[1]
    tf = np.repeat(t, k, axis=0)
    wf = np.repeat(np.broadcast_to(np.asarray(wrist, dtype=float), (n,)), k)
    q, violation = point(model, [tf[:, 0], tf[:, 1], tf[:, 2]], wf, phi.ravel(), ARRAY)
    angles = np.stack(np.broadcast_arrays(*q), axis=-1).reshape(n, k, 5)
    l1, _ = upper_arm(model)
    f = np.stack(np.broadcast_arrays(*forearm(model, wf[::k], ARRAY)), axis=-1)
    l2 = np.linalg.norm(f, axis=-1)
    d = np.linalg.norm(t - np.asarray(model.shoulder), axis=1)
    reachable = (d >= np.abs(l1 - l2) + 1e-9) & (d <= l1 + l2 - 1e-9)
    return SwivelSet(angles, np.broadcast_to(violation, (n * k,)).reshape(n, k), reachable)


#: Swivel angles tried for restarts: every 15 degrees.
SEED_SWIVELS = np.radians(np.arange(-180.0, 180.0, 15.0))


def swivel_seeds(model: ArmModel, targets: np.ndarray, wrist: np.ndarray, count: int) -> np.ndarray:
    """The ``count`` swivel configurations closest to the limits, clamped, per target.

    Returns:
        (N, count, 5) start postures inside the limits, least violating first.
    """
    sw = swivel_configurations(model, targets, wrist, SEED_SWIVELS)
    order = np.argsort(sw.violation, axis=1, kind="stable")[:, :count]
    seeds = np.take_along_axis(sw.angles, order[:, :, None], axis=1)
    return np.clip(seeds, model.lower, model.upper)


def swivel_of(model: ArmModel, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The swivel angle and ElbowRoll branch of configurations (N, 5): the inverse of :func:`point`.

    Returns:
        (swivel (N,), branch (N,) 0 or 1).
    """
    q = np.asarray(q, dtype=float)
    ch = chain(model, [q[:, i] for i in range(5)], ARRAY)
    c = circle(model, ch.hand, q[:, 4], ARRAY)
    phi = swivel_angle(model, c, ch.origins[2], ARRAY)
    primary, _ = recover_angles_checked(model, ch.origins[2], ch.hand, q[:, 4], ARRAY, 0)
    branch = (np.abs(np.broadcast_to(primary[3], q.shape[:1]) - q[:, 3]) > 1e-6).astype(np.int8)
    return np.broadcast_to(phi, q.shape[:1]).copy(), branch
