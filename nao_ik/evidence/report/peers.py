"""The strongest peers on the same targets in the same run: TRAC-IK (``pytracik``) and pinocchio (``pin``).

Both load the URDF nao-ik ships (``nao_ik/data/naoV50_arms.urdf``, the arm's
joints of ros-naoqi's naoV50.urdf). They are optional (the ``compare``
extra); a peer that does not import is reported missing.

- pinocchio: its damped least squares (the CLIK loop of pinocchio's
  documentation) on the hand position only, the four position joints
  (WristYaw held, like nao-ik), clamped to the URDF's limits every step, from
  the neutral posture. The same problem as nao-ik's.
- TRAC-IK: the full 6-D pose (position and orientation) of torso ->
  l_gripper of the random configuration that made each target, all six
  joints of the chain free, seeded with the neutral posture. A different,
  harder-constrained problem (pose, not position): its success is judged on
  the position like everyone's, and on the pose by its own flag.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from typing import Callable, NamedTuple

import numpy as np

from ...kinematics.chain import forward_batch
from ...model.arm import arm_model
from ...nn.networks import DATA_DIR

ARM = "LArm"
#: pinocchio's CLIK example: damping, step, iteration cap (position only, so full steps converge).
PIN_DAMP = 1e-6
PIN_IT_MAX = 100
#: TRAC-IK's own settings: timeout (s) and pose epsilon, the defaults of trac_ik_python.
TRAC_TIMEOUT = 0.005
TRAC_EPS = 1e-5


def arm_urdf(arm: str = ARM) -> str:
    """The shipped URDF cut to one arm's joints, with the links URDF parsers need."""
    src = ET.parse(DATA_DIR / "naoV50_arms.urdf").getroot()
    robot = ET.Element("robot", {"name": "nao_" + arm})
    links = set()
    for j in src.findall("joint"):
        if j.get("name").startswith(arm[0]):
            robot.append(j)
            links |= {j.find("parent").get("link"), j.find("child").get("link")}
    for name in sorted(links):
        ET.SubElement(robot, "link", {"name": name})
    return ET.tostring(robot, encoding="unicode")


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

    return Peer("pinocchio DLS", pin.__version__, "position (same as nao-ik)", solve, None)


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

    return Peer("TRAC-IK", version("pytracik"), "6-D pose (position and orientation)", solve, lambda i: last["ok"])


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
    success: float  # hand within the tolerance of the target position
    pose_success: float | None  # TRAC-IK's own flag (pose within its epsilon)
    median_us: float
    p99_us: float
    out_of_limits: int
    no_answer: int


def peer_row(peer: Peer, targets: np.ndarray, times: np.ndarray, answers: np.ndarray, flags, tol: float) -> PeerRow:
    """Judge a peer's answers like nao-ik's: FK of the angles against the target position."""
    nao = arm_model(ARM)._replace(body=())
    finite = np.all(np.isfinite(answers), axis=1)
    err = np.full(len(targets), np.inf)
    err[finite] = np.linalg.norm(forward_batch(nao, answers[finite]) - targets[finite], axis=1)
    lo, hi = np.asarray(nao.lower), np.asarray(nao.upper)
    oob = int(np.sum(finite & np.any((answers < lo - 1e-9) | (answers > hi + 1e-9), axis=1)))
    pose = None if flags is None else float(np.mean(flags))
    return PeerRow(peer.name, peer.problem, len(targets), float(np.mean(err <= tol)), pose,
                   float(np.median(times) * 1e6), float(np.percentile(times, 99) * 1e6), oob,
                   int(np.sum(~finite)))  # fmt: skip


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


#: nao-ik's methods set beside the peers (production variants, through ``nao_ik.solve``).
NAO_METHODS = ("dls", "fabrik", "nn-refined")


def measure(targets: np.ndarray, configs: np.ndarray, tol: float, rounds: int = 10) -> tuple[list[PeerRow], list[str]]:
    """Peers and nao-ik on the same targets, taking turns over ``rounds`` slices of them.

    Args:
        targets: (N, 3) target positions (the hand of ``configs``).
        configs: (N, 5) the configurations that made them (TRAC-IK gets their full pose).
        tol: success distance, metres.

    Returns:
        The rows (nao-ik's first) and the names of the peers that are missing.
    """
    from ...api import position as api

    peers = {"pinocchio DLS": pinocchio_peer(targets), "TRAC-IK": tracik_peer(configs)}
    missing = [name for name, p in peers.items() if p is None]
    kin = arm_model(ARM)._replace(body=())  # like the peers: the kinematics alone, no body
    nao = {m: Peer(f"nao-ik {m}", "", "position", lambda i, m=m: np.asarray(
        api.solve(targets[i].tolist(), kin, m, tolerance=tol).angles), None) for m in NAO_METHODS}  # fmt: skip
    runners = {**nao, **{k: p for k, p in peers.items() if p is not None}}
    n = len(targets)
    times = {k: np.empty(n) for k in runners}
    answers = {k: np.empty((n, 5)) for k in runners}
    flags = {k: [] for k in runners}
    bounds = np.linspace(0, n, rounds + 1).astype(int)
    for a, b in zip(bounds[:-1], bounds[1:]):
        for k, p in runners.items():
            t, ans, fl = time_peer(p, np.arange(a, b))
            times[k][a:b], answers[k][a:b] = t, ans
            if fl is not None:
                flags[k] += fl
    rows = [peer_row(p, targets, times[k], answers[k], flags[k] if p.pose_ok else None, tol)
            for k, p in runners.items()]  # fmt: skip
    return rows, missing


def table(rows: list[PeerRow], tol_mm: float, reference: str = "nao-ik dls") -> str:
    """The peer table: success, median and p99 time, out-of-limit answers, and the speed ratio."""
    ref = next(r for r in rows if r.name == reference)
    lines = [
        f"| solver | problem | targets | success ({tol_mm:g} mm, position) | pose success (its own test) | "
        f"median time | p99 time | out-of-limit answers | no answer | time / {reference}'s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        pose = "" if r.pose_success is None else f"{100 * r.pose_success:.2f} %"
        lines.append(f"| {r.name} | {r.problem} | {r.targets} | {100 * r.success:.2f} % | {pose} | "
                     f"{r.median_us:,.0f} µs | {r.p99_us:,.0f} µs | {r.out_of_limits} | {r.no_answer} | "
                     f"{r.median_us / ref.median_us:.2f} x |")  # fmt: skip
    return "\n".join(lines)
