"""``nao-ik bench-pose``: full hand poses (position and orientation) against TRAC-IK and ikpy, same poses, same run.

The poses are those of random configurations inside the limits (all five
joints random), so every one is a pose the arm can take. Each solver starts
from the neutral posture and is judged alike: the forward kinematics of its
answer (nao-ik's chain, tested against the URDF) within 0.1 mm and 0.1 degree
of the pose.

- ``nao-ik analytic``: :func:`nao_ik.solve_pose`, axisMask 63 (the closed form).
- ``nao-ik dls``: :func:`nao_ik.solve_pose` with ``method="dls"`` (the weighted
  least squares from the start alone, without the closed form).
- ``TRAC-IK``: PyPI ``pytracik`` (the C++ TRAC-IK through its bindings), the
  NAO URDF from torso to ``l_gripper`` / ``r_gripper`` (the Hand joint fixed),
  "Speed" mode, epsilon 1e-5, 5 ms timeout. Timed is its C++ call alone: the
  target's quaternion is computed before the clock starts.
- ``ikpy``: ``Chain.inverse_kinematics`` with ``orientation_mode="all"`` on the
  same URDF, five joints active (on fewer poses: it takes milliseconds).

nao-ik's analytic solver and TRAC-IK take turns on the same slices of poses
(:func:`nao_ik.evidence.protocol.interleaved_times`), so machine load falls on both alike,
after WARMUP untimed calls each.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Callable, NamedTuple, Sequence

import numpy as np

from ..api import pose as pose_api
from ..kinematics.hand_pose import hand_frame, rotation_angle, rotation_from_angles
from ..model.arm import ARMS, arm_model
from .protocol import Tee, interleaved_times

DATA = Path(__file__).resolve().parent.parent / "data" / "naoV50_arms.urdf"
#: The documented hand offset z (the URDF's RHand -0.01213 is a typo of it, see NAO_ARM.md).
HAND_Z = -0.01231
POSITION_TOL = 1e-4
ROTATION_TOL = math.radians(0.1)
TRACIK = "TRAC-IK (Speed)"
#: Untimed calls of each fast solver before the measurement.
WARMUP = 200
IKPY = "ikpy (orientation all)"


class PoseRow(NamedTuple):
    method: str
    poses: int
    success: float
    median_us: float
    p99_us: float
    pos_median_mm: float
    pos_max_mm: float
    rot_median_deg: float
    rot_max_deg: float
    out_of_limits: int


def gripper_urdf(arm: str) -> str:
    """The arm's chain from torso to its gripper as a URDF with links, the Hand joint fixed (documented offset)."""
    side = arm[0]
    src = ET.parse(DATA).getroot()
    robot = ET.Element("robot", {"name": "nao_" + arm})
    links: set = set()
    for j in src.findall("joint"):
        if not j.get("name").startswith(side):
            continue
        j = ET.fromstring(ET.tostring(j))
        if j.get("name") == side + "Hand":
            j.set("type", "fixed")
            for tag in ("axis", "limit"):
                j.remove(j.find(tag))
            o = j.find("origin")
            x, y, _ = o.get("xyz").split()
            o.set("xyz", f"{x} {y} {HAND_Z}")
        robot.append(j)
        links |= {j.find("parent").get("link"), j.find("child").get("link")}
    for name in sorted(links):
        ET.SubElement(robot, "link", {"name": name})
    return ET.tostring(robot, encoding="unicode")


def _write(text: str, arm: str) -> Path:
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"nao_ik_pose_{os.getpid()}_{arm}.urdf"
    path.write_text(text)
    return path


def tracik_solver(arm: str) -> Callable | None:
    """One TRAC-IK call: (position, quaternion xyzw, seed) -> angles or None; None without pytracik."""
    try:
        import pytracik
    except ImportError:
        return None
    path = _write(gripper_urdf(arm), arm)
    try:
        tip = "l_gripper" if arm == "LArm" else "r_gripper"
        solver = pytracik.TRAC_IK("torso", tip, path.read_text(), 0.005, 1e-5, pytracik.SolveType.Speed)
    finally:
        path.unlink()

    def solve(p: Sequence[float], quat: Sequence[float], seed: np.ndarray):
        r = pytracik.ik(solver, seed, p[0], p[1], p[2], quat[0], quat[1], quat[2], quat[3])
        return r[1:] if r[0] >= 0 else None

    solve.keep = solver  # the C++ solver lives as long as the closure
    return solve


def ikpy_solver(arm: str) -> Callable | None:
    """ikpy's full-pose IK on the same URDF (five joints active); None without ikpy."""
    try:
        from ikpy.chain import Chain
    except ImportError:
        return None
    path = _write(gripper_urdf(arm), arm)
    model = arm_model(arm)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            names = [link.name for link in Chain.from_urdf_file(str(path), base_elements=["torso"]).links]
            mask = [n in model.names for n in names]
            chain = Chain.from_urdf_file(str(path), base_elements=["torso"], active_links_mask=mask)
    finally:
        path.unlink()
    index = [names.index(n) for n in model.names]
    start = np.zeros(len(names))
    start[index] = model.neutral

    def solve(p: Sequence[float], r: np.ndarray):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            full = chain.inverse_kinematics(np.asarray(p), r, orientation_mode="all", initial_position=start)
        return np.asarray(full)[index]

    return solve


def quaternion_xyzw(r: np.ndarray) -> tuple[float, float, float, float]:
    """A rotation matrix's unit quaternion (x, y, z, w), w >= 0 (Shepperd's method)."""
    t = r[0, 0] + r[1, 1] + r[2, 2]
    if t > 0:
        s = 2.0 * math.sqrt(1.0 + t)
        q = ((r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s, 0.25 * s)
    else:
        i = int(np.argmax([r[0, 0], r[1, 1], r[2, 2]]))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * math.sqrt(1.0 + r[i, i] - r[j, j] - r[k, k])
        v = [0.0, 0.0, 0.0]
        v[i] = 0.25 * s
        v[j] = (r[j, i] + r[i, j]) / s
        v[k] = (r[k, i] + r[i, k]) / s
        q = (v[0], v[1], v[2], (r[k, j] - r[j, k]) / s)
    return q if q[3] >= 0 else tuple(-x for x in q)


def _row(name: str, arm: str, poses: list, answers: list, times: np.ndarray) -> PoseRow:
    model = arm_model(arm)
    pos, rot, ok, oob = [], [], 0, 0
    for p6, q in zip(poses, answers):
        if q is None:
            continue
        q = [float(x) for x in q]
        oob += not model.within_limits(q, 1e-9)
        hand, r = hand_frame(model, q)
        pe = math.dist(hand, p6[:3])
        re = rotation_angle(rotation_from_angles(*p6[3:]), r)
        pos.append(pe)
        rot.append(re)
        ok += pe <= POSITION_TOL and re <= ROTATION_TOL and model.within_limits(q, 1e-9)
    pos_mm = np.array(pos) * 1e3 if pos else np.array([math.nan])
    rot_deg = np.degrees(rot) if rot else np.array([math.nan])
    return PoseRow(
        name, len(poses), ok / len(poses), float(np.median(times) * 1e6), float(np.percentile(times, 99) * 1e6),
        float(np.median(pos_mm)), float(np.max(pos_mm)), float(np.median(rot_deg)), float(np.max(rot_deg)), oob,
    )  # fmt: skip


def run(arm: str, count: int, slow: int, seed: int, rounds: int, out=sys.stdout) -> list[PoseRow]:
    """Measure and print the pose table for one arm.

    Args:
        arm: ``"LArm"`` or ``"RArm"``.
        count: poses for nao-ik analytic and TRAC-IK.
        slow: poses (the first ones) for nao-ik dls and ikpy.
        seed: random seed of the configurations.
        rounds: slices the fast methods take turns on.
        out: where the table goes.

    Returns:
        The rows.
    """
    model = arm_model(arm)
    rng = np.random.default_rng(seed)
    qs = rng.uniform(model.lower, model.upper, (count, 5))
    poses = [pose_api.forward_pose(q.tolist(), arm) for q in qs]
    start = list(model.neutral)
    quats = [quaternion_xyzw(np.array(rotation_from_angles(*p[3:]))) for p in poses]
    tracik = tracik_solver(arm)
    ikpy = ikpy_solver(arm)
    seed_q = np.array(start)
    answers: dict[str, list] = {"nao-ik analytic": [], TRACIK: []}

    def ours(i: int) -> None:
        answers["nao-ik analytic"].append(pose_api.solve_pose(poses[i], arm, 63, initial=start).angles)

    calls: dict[str, Callable] = {"nao-ik analytic": ours}
    if tracik is not None:
        calls[TRACIK] = lambda i: answers[TRACIK].append(tracik(poses[i], quats[i], seed_q))
    order = list(range(count))
    for call in calls.values():  # warm-up, untimed: the first calls of a process run slower
        for i in order[:WARMUP]:
            call(i)
    for name in answers:
        answers[name].clear()
    times = interleaved_times(calls, order, rounds=rounds)
    rows = [_row(name, arm, poses, answers[name], times[name]) for name in calls]
    sub = poses[:slow]
    for name, solve in (
        ("nao-ik dls", lambda p: pose_api.solve_pose(p, arm, 63, initial=start, method="dls").angles),
        (IKPY, (lambda p: ikpy(p[:3], np.array(rotation_from_angles(*p[3:])))) if ikpy else None),
    ):
        if solve is None:
            continue
        got, t = [], []
        for p in sub:
            t0 = time.perf_counter()
            got.append(solve(p))
            t.append(time.perf_counter() - t0)
        rows.append(_row(name, arm, sub, got, np.array(t)))
    _print(arm, rows, count, slow, seed, tracik is not None, ikpy is not None, out)
    return rows


def _print(arm: str, rows: list[PoseRow], count: int, slow: int, seed: int, has_tracik: bool, has_ikpy: bool,
           out) -> None:  # fmt: skip
    ref = next((r for r in rows if r.method == TRACIK), None)
    print(f"\n### {arm}: full poses (axisMask 63) of {count} random in-limit configurations (seed {seed})\n", file=out)
    print(
        "| method | poses | success (0.1 mm, 0.1 deg) | median time | p99 time | position error median / max (mm) "
        "| rotation error median / max (deg) | out-of-limit answers | median speed-up against TRAC-IK |",
        file=out,
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|", file=out)
    for r in rows:
        ratio = ref.median_us / r.median_us if ref else 0.0
        speed = (f"{ratio:.1f} x" if ratio >= 1 else f"{ratio:.2g} x") if ref else "-"
        print(
            f"| {r.method} | {r.poses} | {r.success * 100:.1f} % | {r.median_us:,.1f} us | {r.p99_us:,.1f} us "
            f"| {r.pos_median_mm:.2e} / {r.pos_max_mm:.2e} | {r.rot_median_deg:.2e} / {r.rot_max_deg:.2e} "
            f"| {r.out_of_limits} | {speed} |",
            file=out,
        )
    notes = []
    if not has_tracik:
        notes.append("TRAC-IK is not installed (`pip install .[compare]`: pytracik), so it is missing")
    if not has_ikpy:
        notes.append("ikpy is not installed (`pip install .[compare]`), so it is missing")
    if ref:
        ours = rows[0]
        notes.append(
            f"target (10 x TRAC-IK's median with at least its success): {ref.median_us / ours.median_us:.1f} x, "
            f"success {ours.success * 100:.1f} % against {ref.success * 100:.1f} % -> "
            f"{'met' if ref.median_us >= 10 * ours.median_us and ours.success >= ref.success else 'NOT met'}"
        )
    notes.append(f"nao-ik dls and ikpy on the first {min(slow, count)} poses; errors over the answers given "
                 "(TRAC-IK gives none when it fails)")  # fmt: skip
    for n in notes:
        print(f"\n{n}.", file=out)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    p = argparse.ArgumentParser(
        prog="nao-ik bench-pose",
        description="Full hand poses: nao-ik's solve_pose against TRAC-IK (pytracik) and ikpy, same poses, same run.",
        epilog="example: nao-ik bench-pose --poses 2000 --slow 100 --out pose-bench.md",
    )
    p.add_argument("--poses", type=int, default=2000, help="poses per arm (default 2000)")
    p.add_argument("--slow", type=int, default=100, help="poses for the slow solvers, nao-ik dls and ikpy")
    p.add_argument("--arms", nargs="+", choices=ARMS, default=["LArm"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rounds", type=int, default=20, help="slices the fast solvers take turns on")
    p.add_argument("--out", help="also write the tables to this markdown file")
    a = p.parse_args(argv)
    tee = Tee()
    for arm in a.arms:
        run(arm, a.poses, a.slow, a.seed, a.rounds, out=tee)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as fh:
            command = " ".join(argv if argv is not None else sys.argv[1:])
            fh.write(f"# nao-ik bench-pose\n\nGenerated by `nao-ik bench-pose {command}`.\n{tee.text()}")
    return 0
