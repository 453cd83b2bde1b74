"""The strongest peers on the same targets in the same run, like for like: TRAC-IK (``pytracik``) beside
nao-ik's ``solve_pose`` on the same 6-D poses; pinocchio (``pin``) and ikpy beside nao-ik's ``solve`` on the same
positions.

The peers load the URDF nao-ik ships (``nao_ik/data/naoV50_arms.urdf``, the
arm's joints of ros-naoqi's naoV50.urdf). They are optional (the ``compare``
extra); a peer that does not import is reported missing.

- pinocchio: its damped least squares (the CLIK loop of pinocchio's
  documentation) on the hand position only, the four position joints
  (WristYaw held, like nao-ik), clamped to the URDF's limits every step, from
  the neutral posture. The same problem as nao-ik's ``solve``.
- ikpy: its own solver on the position, the four position joints
  (:class:`nao_ik.evidence.alternatives.IkpyArm`).
- TRAC-IK: the full 6-D pose (position and orientation) of torso ->
  l_gripper of the random configuration that made each target, all six
  joints of the chain free, seeded with the neutral posture. nao-ik's
  ``solve_pose`` (axisMask 63) gets the same poses (its hand frame is the
  URDF's l_gripper).

Every answer is judged by nao-ik's forward kinematics: the position within the
tolerance, and for a pose also the orientation within ``solve_pose``'s
default (0.1 degree); TRAC-IK's own pose flag is reported beside it.
"""

from __future__ import annotations

import time
from typing import Callable, NamedTuple

import numpy as np

from ...api.pose import DEFAULT_ROTATION_TOLERANCE, forward_pose, solve_pose
from ...kinematics.chain import forward_batch
from ...kinematics.hand_pose import rotation_from_angles
from ...model.arm import arm_model
from ..alternatives import arm_urdf

ARM = "LArm"
#: pinocchio's CLIK example: damping, step, iteration cap (position only, so full steps converge).
PIN_DAMP = 1e-6
PIN_IT_MAX = 100
#: TRAC-IK's own settings: timeout (s) and pose epsilon, the defaults of trac_ik_python.
TRAC_TIMEOUT = 0.005
TRAC_EPS = 1e-5
#: The two problems of the table.
POSITION, POSE = "position", "6-D pose"


class Peer(NamedTuple):
    """A peer ready to run: its name, version, the problem it solves, and one call per target index."""

    name: str
    version: str
    problem: str
    solve: Callable[[int], np.ndarray]  # target index -> 5 nao-ik joint angles (NaN: no answer)
    pose_ok: Callable[[int], bool] | None  # TRAC-IK: its own pose-success flag for the last call


def pinocchio_peer(targets: np.ndarray) -> Peer | None:
    """pinocchio's DLS on the arm's position, or None if ``pin`` does not import."""
    try:  # a compiled wheel can fail to load with more than ImportError (a missing shared library)
        import pinocchio as pin

        model = pin.buildModelFromXML(arm_urdf())
    except Exception:
        return None
    data = model.createData()
    fid = model.getFrameId("l_gripper")
    nao = arm_model(ARM)._replace(body=())
    lo, hi = model.lowerPositionLimit.copy(), model.upperPositionLimit.copy()
    q_start = np.zeros(model.nq)
    q_start[:5] = nao.neutral
    eye = PIN_DAMP * np.eye(3)

    def solve(i: int) -> np.ndarray:
        t = targets[i]
        q = q_start.copy()
        for _ in range(PIN_IT_MAX):
            pin.forwardKinematics(model, data, q)
            pin.updateFramePlacement(model, data, fid)
            err = t - data.oMf[fid].translation
            if err @ err <= 1e-8:  # 0.1 mm
                break
            J = pin.computeFrameJacobian(model, data, q, fid, pin.LOCAL_WORLD_ALIGNED)[:3, :4]
            dq = J.T @ np.linalg.solve(J @ J.T + eye, err)
            q[:4] = np.clip(q[:4] + dq, lo[:4], hi[:4])
        return q[:5]

    return Peer("pinocchio DLS", pin.__version__, POSITION, solve, None)


def tracik_peer(configs: np.ndarray) -> Peer | None:
    """TRAC-IK on the full pose of each configuration, or None if ``pytracik`` does not import."""
    try:  # as for pinocchio: any failure to load or to parse the URDF reports the peer missing
        import pytracik

        ik = pytracik.TRAC_IK("torso", "l_gripper", arm_urdf(), TRAC_TIMEOUT, TRAC_EPS, pytracik.SolveType.Speed)
    except Exception:
        return None
    from importlib.metadata import version

    n = pytracik.get_num_joints(ik)
    full = np.zeros((len(configs), n))
    full[:, :5] = configs
    # The poses to reach, as (x, y, z, qx, qy, qz, qw), computed before any timing.
    poses = np.array([_pose(pytracik.fk(ik, q)) for q in full])
    nao = arm_model(ARM)._replace(body=())
    seed = np.zeros(n)
    seed[:5] = nao.neutral
    last = {"ok": False}

    def solve(i: int) -> np.ndarray:
        p = poses[i]
        r = pytracik.ik(ik, seed, p[0], p[1], p[2], p[3], p[4], p[5], p[6])
        last["ok"] = bool(r[0] >= 0)
        return np.asarray(r[1:6]) if last["ok"] else np.full(5, np.nan)

    return Peer("TRAC-IK", version("pytracik"), POSE, solve, lambda i: last["ok"])


def ikpy_peer(targets: np.ndarray) -> Peer | None:
    """ikpy on the arm's position, or None if ``ikpy`` does not import."""
    from ..alternatives import IKPY, ikpy_arm

    ik = ikpy_arm()
    if ik is None:
        return None
    return Peer(IKPY, __import__("ikpy").__version__, POSITION, lambda i: ik.solve(targets[i]), None)


def _pose(h: np.ndarray) -> np.ndarray:
    """(x, y, z, qx, qy, qz, qw) of a 4x4 transform."""
    m = h[:3, :3]
    w = np.sqrt(max(1.0 + m[0, 0] + m[1, 1] + m[2, 2], 1e-12)) / 2
    x, y, z = (m[2, 1] - m[1, 2]) / (4 * w), (m[0, 2] - m[2, 0]) / (4 * w), (m[1, 0] - m[0, 1]) / (4 * w)
    if w < 1e-3:  # near a half turn: the eigenvector form, robust everywhere
        k = np.array(
            [
                [m[0, 0] - m[1, 1] - m[2, 2], 0, 0, 0],
                [m[0, 1] + m[1, 0], m[1, 1] - m[0, 0] - m[2, 2], 0, 0],
                [m[0, 2] + m[2, 0], m[1, 2] + m[2, 1], m[2, 2] - m[0, 0] - m[1, 1], 0],
                [m[2, 1] - m[1, 2], m[0, 2] - m[2, 0], m[1, 0] - m[0, 1], m[0, 0] + m[1, 1] + m[2, 2]],
            ]
        )
        vals, vecs = np.linalg.eigh(k / 3.0)
        x, y, z, w = vecs[:, np.argmax(vals)]
    return np.array([h[0, 3], h[1, 3], h[2, 3], x, y, z, w])


class PeerRow(NamedTuple):
    """One line of the peer table."""

    name: str
    problem: str
    targets: int
    success: float  # hand within the tolerance of the target position (a pose: and within 0.1 degree of its turn)
    pose_success: float | None  # TRAC-IK's own flag (pose within its epsilon)
    median_us: float
    p99_us: float
    out_of_limits: int
    no_answer: int


def peer_row(peer: Peer, targets: np.ndarray, times: np.ndarray, answers: np.ndarray, flags, tol: float,
             rotations: np.ndarray | None = None) -> PeerRow:  # fmt: skip
    """Judge a peer's answers like nao-ik's: FK of the angles against the target position, and for a pose
    (``rotations``: the targets' (N, 3, 3) hand rotations) the hand's turn within 0.1 degree too."""
    nao = arm_model(ARM)._replace(body=())
    finite = np.all(np.isfinite(answers), axis=1)
    err = np.full(len(targets), np.inf)
    err[finite] = np.linalg.norm(forward_batch(nao, answers[finite]) - targets[finite], axis=1)
    if peer.problem == POSE:
        turn = np.array([_turn(nao, q, r) if ok else np.inf for q, r, ok in zip(answers, rotations, finite)])
        err[turn > DEFAULT_ROTATION_TOLERANCE] = np.inf
    lo, hi = np.asarray(nao.lower), np.asarray(nao.upper)
    oob = int(np.sum(finite & np.any((answers < lo - 1e-9) | (answers > hi + 1e-9), axis=1)))
    pose = None if flags is None else float(np.mean(flags))
    return PeerRow(peer.name, peer.problem, len(targets), float(np.mean(err <= tol)), pose,
                   float(np.median(times) * 1e6), float(np.percentile(times, 99) * 1e6), oob,
                   int(np.sum(~finite)))  # fmt: skip


def _rotation(model, q: np.ndarray) -> np.ndarray:
    """The hand's rotation matrix at ``q`` (nao-ik's forward kinematics)."""
    return np.array(rotation_from_angles(*forward_pose(q.tolist(), model)[3:]), dtype=float).reshape(3, 3)


def _turn(model, q: np.ndarray, target: np.ndarray) -> float:
    """The angle (rad) between the hand's rotation at ``q`` and ``target``."""
    c = (np.trace(_rotation(model, q).T @ target) - 1.0) / 2.0
    return float(np.arccos(np.clip(c, -1.0, 1.0)))


def time_peer(peer: Peer, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray, list | None]:
    """Seconds per call, the answers, and the pose flags (TRAC-IK) for the given target indices."""
    times = np.empty(len(indices))
    answers = np.empty((len(indices), 5))
    flags = [] if peer.pose_ok else None
    for k, i in enumerate(indices):
        t0 = time.perf_counter()
        answers[k] = peer.solve(int(i))
        times[k] = time.perf_counter() - t0
        if flags is not None:
            flags.append(peer.pose_ok(int(i)))
    return times, answers, flags


#: nao-ik's methods set beside the peers: ``solve`` on the positions, ``solve_pose`` on the poses.
NAO_METHODS = ("analytic", "dls")


def measure(targets: np.ndarray, configs: np.ndarray, tol: float, rounds: int = 10,
            ikpy: int | None = None) -> tuple[list[PeerRow], list[str]]:  # fmt: skip
    """Peers and nao-ik on the same targets, taking turns over ``rounds`` slices of them.

    Args:
        targets: (N, 3) target positions (the hand of ``configs``).
        configs: (N, 5) the configurations that made them (the pose solvers get their full pose).
        tol: success distance, metres.
        ikpy: how many of the targets ikpy solves (the first ones of every slice; it is slow); default all.

    Returns:
        The rows (position first, then pose; nao-ik's first in each) and the names of the peers that are missing.
    """
    from ...api import position as api

    kin = arm_model(ARM)._replace(body=())  # like the peers: the kinematics alone, no body
    poses = [forward_pose(q.tolist(), kin) for q in configs]
    rotations = np.array([_rotation(kin, q) for q in configs]) if len(configs) else np.zeros((0, 3, 3))
    position = {f"nao-ik {m}": Peer(f"nao-ik {m}", "", POSITION, lambda i, m=m: np.asarray(
        api.solve(targets[i].tolist(), kin, m, tolerance=tol).angles), None) for m in NAO_METHODS}  # fmt: skip
    pose = {f"nao-ik solve_pose {m}": Peer(f"nao-ik solve_pose {m}", "", POSE, lambda i, m=m: np.asarray(
        solve_pose(poses[i], kin, method=m, tolerance=tol).angles), None) for m in NAO_METHODS}  # fmt: skip
    peers = {"pinocchio DLS": pinocchio_peer(targets), "ikpy": ikpy_peer(targets), "TRAC-IK": tracik_peer(configs)}
    missing = [name for name, p in peers.items() if p is None]
    runners = {**position, **{k: p for k, p in peers.items() if p is not None and p.problem == POSITION}, **pose,
               **{k: p for k, p in peers.items() if p is not None and p.problem == POSE}}  # fmt: skip
    n = len(targets)
    bounds = np.linspace(0, n, rounds + 1).astype(int)
    share = None if ikpy is None or ikpy >= n else max(1, -(-ikpy // rounds))
    done = {k: [] for k in runners}  # per runner: (indices, times, answers, flags) of every slice
    for a, b in zip(bounds[:-1], bounds[1:]):
        for k, p in runners.items():
            idx = np.arange(a, b if k != "ikpy" or share is None else min(b, a + share))
            done[k].append((idx, *time_peer(p, idx)))
    rows = []
    for k, p in runners.items():
        idx = np.concatenate([d[0] for d in done[k]])
        times = np.concatenate([d[1] for d in done[k]])
        answers = np.concatenate([d[2] for d in done[k]])
        flags = [f for d in done[k] for f in d[3]] if p.pose_ok else None
        rows.append(peer_row(p, targets[idx], times, answers, flags, tol, rotations[idx]))
    return rows, missing


def table(rows: list[PeerRow], tol_mm: float) -> str:
    """The peer table: success, median and p99 time, out-of-limit answers, and each solver's time over nao-ik
    ``analytic``'s on the same problem (``solve`` on positions, ``solve_pose`` on poses)."""
    ref = {r.problem: r for r in reversed(rows) if r.name in ("nao-ik analytic", "nao-ik solve_pose analytic")}
    lines = [
        f"| solver | problem | targets | success ({tol_mm:g} mm; a pose also 0.1°) | pose success (its own test) | "
        "median time | p99 time | out-of-limit answers | no answer | time / nao-ik analytic's (same problem) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        pose = "" if r.pose_success is None else f"{100 * r.pose_success:.2f} %"
        ratio = f"{r.median_us / ref[r.problem].median_us:.2f} x" if r.problem in ref else "n/a"
        lines.append(
            f"| {r.name} | {r.problem} | {r.targets} | {100 * r.success:.2f} % | {pose} | "
            f"{r.median_us:,.1f} µs | {r.p99_us:,.0f} µs | {r.out_of_limits} | {r.no_answer} | {ratio} |"
        )
    return "\n".join(lines)
