"""Following a Cartesian path: the tracking control of Oyama & Tachi (2001), section 3.

For desired hand positions x_d(0..T), with Phi the method's answer for a
point (for ``nn`` and ``nn-paper`` the network; for ``nn-modular`` the one
expert chosen for the path as in their section 3; for the iterative methods
a solve started from the previous answer, so Phi follows one branch):

    dtheta_fb(0)   = theta(0) - Phi(x_d(0))                          (6)
    theta(k+1)     = Phi(x_d(k+1)) + dtheta_fb(k+1)                  (7)
    dtheta_fb(k+1) = alpha dtheta_fb(k) + J^+(theta(k)) e(k)         (8)
    e(k)           = x_d(k) - f(theta(k))                            (9)

with alpha = 0.9 as in the paper, theta(0) a precise solve of the first
point, and every theta clamped into the joint limits. As in the paper, the
tracking is given up when the hand is more than 5 cm off the path.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from ..api.position import ArmLike, resolve_arm, resolve_method, solve
from ..kinematics.chain import forward, jacobian
from ..model import validate
from ..model.arm import ArmModel

ALPHA = 0.9
GIVE_UP = 0.05  # metres
MAX_POINTS = 2000


class Track(NamedTuple):
    """A tracked path.

    Attributes:
        angles: (K, 5) joint angles per point tracked (K <= number of points).
        errors: (K,) distance from the hand to each desired point, metres.
        completed: False if the tracking was given up (error > 5 cm).
        method: the method used for Phi.
        arm: the arm.
    """

    angles: np.ndarray
    errors: np.ndarray
    completed: bool
    method: str
    arm: str


def reach(target: Sequence[float], model: ArmModel, initial: Sequence[float] | None, iterations: int | None) -> tuple:
    """The reaching motion of Oyama & Tachi's controller: damped least squares from ``initial``.

    Returns:
        (angles, reached).
    """
    sol = solve(target, model, "dls", initial=initial, max_iterations=iterations)
    return sol.angles, sol.reached


def validate_points(points: Any) -> np.ndarray:
    """A path: a list of 1..MAX_POINTS targets [x, y, z], none that no arm reaches by over a metre
    (:func:`nao_ik.model.validate.metres`)."""
    if isinstance(points, (str, bytes)) or not hasattr(points, "__len__"):
        raise ValueError(f"points must be a list of [x, y, z] targets, got {points!r:.60}")
    if not 1 <= len(points) <= MAX_POINTS:
        raise ValueError(f"points must hold 1 to {MAX_POINTS} targets, got {len(points)}")
    path = None
    if isinstance(points, np.ndarray) and points.dtype.kind == "f" and points.shape[1:] == (3,):
        # A float array (a caller's own path): the same checks on all points at once.
        if np.isfinite(points).all() and (np.abs(points) <= validate.MAX_COORDINATE).all():
            path = points.astype(float)
    if path is None:
        out = []
        for i, p in enumerate(points):
            try:
                out.append(validate.target(p))
            except ValueError as e:
                raise ValueError(f"points[{i}]: {e}") from None
        path = np.array(out)
    validate.metres(path, "points")
    return path


def track_path(
    points: Sequence[Sequence[float]],
    arm: ArmLike = "LArm",
    method: str = "nn",
    initial: Sequence[float] | None = None,
    alpha: float = ALPHA,
    check: Callable[[int], None] | None = None,
) -> Track:
    """Follow the points with equations (6)-(9).

    Args:
        points: desired hand positions, FRAME_TORSO metres.
        arm: ``"LArm"``, ``"RArm"`` or an ``ArmModel``.
        method: one of ``nao_ik.METHODS``, used as Phi.
        initial: start posture for the first point (default: neutral).
        alpha: the feedback's memory, 0 < alpha <= 1.
        check: called with each point's index before it is solved; raising there abandons the path (a
            caller's budget or stop request: :meth:`nao_ik.service.NaoArmIK.trackPath`).

    Returns:
        :class:`Track`.
    """
    model = resolve_arm(arm)
    name = resolve_method(method)
    x = validate_points(points)
    alpha = validate.number(alpha, "alpha")
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha must be in (0, 1], got {alpha!r}")
    if name == "nn-modular":
        from ..nn import modular

        theta, phi_m = modular.path_inverse(model, modular.shipped(), x, reach, initial)
        return follow(model, x, theta, phi_m, alpha, check)._replace(method=name)

    def phi(target: np.ndarray, previous: np.ndarray | None) -> np.ndarray:
        start = None if previous is None else previous.tolist()
        return np.asarray(solve(target.tolist(), model, name, initial=start).angles)

    if check is not None:
        check(0)
    theta = np.asarray(solve(x[0].tolist(), model, name, initial=initial).angles)
    return follow(model, x, theta, phi, alpha, check)._replace(method=name)


def follow(
    model: ArmModel,
    x: np.ndarray,
    theta: np.ndarray,
    phi: Callable[[np.ndarray, np.ndarray], np.ndarray],
    alpha: float = ALPHA,
    check: Callable[[int], None] | None = None,
) -> Track:
    """Equations (6)-(9) along points x (K, 3) from a precise solution theta of x[0].

    Args:
        phi: the inverse model, (point, previous angles) -> angles (5,).
        check: called with each later point's index before it is solved (see :func:`track_path`).
    """
    lo, hi = np.asarray(model.lower), np.asarray(model.upper)
    act = list(model.active)
    fb = theta - phi(x[0], theta)  # (6)
    angles, errors = [theta], [float(np.linalg.norm(x[0] - forward(model, theta)))]
    for k in range(len(x) - 1):
        if check is not None:
            check(k + 1)
        e = x[k] - forward(model, theta)  # (9)
        step = np.zeros(5)
        step[act] = np.linalg.pinv(jacobian(model, theta)[:, act]) @ e
        fb = alpha * fb + step  # (8)
        theta = np.clip(phi(x[k + 1], theta) + fb, lo, hi)  # (7)
        err = float(np.linalg.norm(x[k + 1] - forward(model, theta)))
        angles.append(theta)
        errors.append(err)
        if err > GIVE_UP:
            return Track(np.array(angles), np.array(errors), False, "", model.arm)
    return Track(np.array(angles), np.array(errors), True, "", model.arm)


class TrackFigures(NamedTuple):
    """Oyama & Tachi's tracking figures over many paths.

    Attributes:
        completed: fraction of paths tracked to the end (not given up at 5 cm).
        within_1cm: fraction tracked within 1 cm at every point.
        rms_mm: RMS tracking error over the points of the completed paths.
    """

    completed: float
    within_1cm: float
    rms_mm: float


def track_figures(tracks: Sequence[Track]) -> TrackFigures:
    """:class:`TrackFigures` of tracked paths."""
    done = [t.errors for t in tracks if t.completed]
    within = sum(t.completed and t.errors.max() <= 0.01 for t in tracks)
    rms = float(np.sqrt(np.mean(np.concatenate(done) ** 2)) * 1e3) if done else float("nan")
    return TrackFigures(len(done) / len(tracks), within / len(tracks), rms)


def random_lines(arm: ArmLike, count: int, points: int = 21, seed: int = 0, step: float = 0.05) -> list[np.ndarray]:
    """Random straight paths as in Oyama & Tachi's tracking trials.

    A start at the hand position of a uniformly random in-limit posture, a
    normally distributed total step (``step`` metres per axis; the paper's
    0.2 m is for a 1.3 m arm, NAO's is 0.22 m), ``points`` evenly spaced
    points; like theirs, only paths whose every point the arm can reach.

    Returns:
        ``count`` arrays (points, 3).
    """
    from ..geometry.collision import clear_of_body
    from .reachability import reachable_batch

    model = resolve_arm(arm)
    clear = clear_of_body if model.body else None
    rng = np.random.default_rng(seed)
    s = np.linspace(0.0, 1.0, points)[:, None]
    out: list[np.ndarray] = []
    while len(out) < count:
        q = rng.uniform(model.lower, model.upper, 5)
        q[4] = model.neutral[4]
        a = forward(model, q)
        path = a + s * rng.normal(0.0, step, 3)
        # Every point exactly reachable (the closed-form intervals; clear of the body where the model has one).
        if reachable_batch(path, model, float(q[4]), clear)[0].all():
            out.append(path)
    return out
