"""``nao-ik demo``: a simulated robot, the service, and a few reaches with every method.

Everything runs in this process over real libqi on loopback: a standalone
session plays the robot's NAOqi with the stub ALMotion, a second session
registers ``NaoArmIK`` (as ``nao-ik serve`` would), a third one is the user
calling ``reachTo``. After each reach the demo waits for the simulated joints
to arrive and asks ALMotion where the hand is.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import NamedTuple, Sequence

import numpy as np

from .api import METHODS
from .kinematics import joint_positions
from .latency import format_costs, measure
from .model import arm_model

# A handful of targets in front of the robot (FRAME_TORSO, metres), and one out of reach.
TARGETS = [
    ("in front, left", (0.16, 0.13, 0.10)),
    ("out to the left", (0.10, 0.25, 0.12)),
    ("up, near the chin", (0.12, 0.05, 0.22)),
    ("in front, right", (0.16, -0.13, 0.10)),
    ("low, right", (0.12, -0.16, -0.02)),
    ("out of reach", (0.34, 0.10, 0.10)),
]


class Reach(NamedTuple):
    method: str
    label: str
    arm: str
    target: tuple
    reached: bool
    ik_error_mm: float
    robot_error_mm: float
    iterations: int
    solve_ms: float
    round_trip_ms: float
    angles: list


def run_demo(
    out_dir: str = "demo_out",
    methods: Sequence[str] | None = None,
    speed: float = 1.0,
    view_port: int | None = None,
    view_wait: float = 0.0,
    rounds: int = 300,
    latency_ms: float = 0.0,
) -> list[Reach]:
    """Run the demo; print the table; write ``demo.png`` and ``demo.md`` into ``out_dir``.

    Args:
        out_dir: where ``demo.png`` and ``demo.md`` go.
        methods: the methods to run (default: all).
        speed: fractionMaxSpeed of the simulated motions.
        view_port: if given, serve the live view (:mod:`nao_ik.view`) on this port while the demo runs.
        view_wait: seconds the view stays up after the last reach.
        rounds: rounds of single calls timed against ALMotion.getAngles (:mod:`nao_ik.latency`); 0: none.
        latency_ms: the simulated robot's latency, milliseconds per ALMotion call (half each way).
    """
    import qi

    from sim_stub.robot import SimulatedRobot

    from .service import register

    methods = list(methods or [m for m in METHODS if m != "jacobian"])
    rows: list[Reach] = []
    with SimulatedRobot(latency=latency_ms / 1e3) as robot:
        server = qi.Session()
        server.connect(robot.url)
        server.listen("tcp://127.0.0.1:0")
        service, _ = register(server)
        user = qi.Session()
        user.connect(robot.url)
        ik = user.service("NaoArmIK")
        motion = user.service("ALMotion")
        print(f"simulated robot at {robot.url}; NaoArmIK registered; methods: {', '.join(ik.getMethods())}")
        viewer = None
        if view_port is not None:
            from .view.viewer import Viewer, ViewOptions

            viewer = Viewer(robot.motion, user, ViewOptions(port=view_port), source=f"nao-ik demo, {robot.url}")
            print(f"view: {viewer.url}  (open it in a browser while the demo runs)", flush=True)
        motion.wakeUp()
        ik.setSpeed(speed)
        for method in methods:
            for label, target in TARGETS:
                t0 = time.perf_counter()
                r = ik.reachTo(*target, method)
                rtt = (time.perf_counter() - t0) * 1e3
                if viewer is not None:
                    viewer.note_reach(target, dict(r))
                _wait_until_still(motion, r["names"], r["angles"])
                hand = motion.getPosition(r["arm"], 0, True)[:3]
                rows.append(
                    Reach(
                        method,
                        label,
                        r["arm"],
                        target,
                        r["reached"],
                        r["error"] * 1e3,
                        float(np.linalg.norm(np.subtract(hand, target)) * 1e3),
                        r["iterations"],
                        r["solveTimeMs"],
                        rtt,
                        list(r["angles"]),
                    )
                )
        # What a call costs against one robot round trip, measured in the same run, the reaches at the
        # service's default speed (the demo's own moves are faster) like nao-ik loadtest's.
        costs = measure(ik, motion, rounds) if rounds > 0 else []
        if viewer is not None:
            if view_wait > 0:
                print(f"view: {viewer.url} stays open {view_wait:g} s", flush=True)
                time.sleep(view_wait)
            viewer.stop()
        motion.rest()
        service.close()  # its reader of the arms stops before the sessions close
        user.close()
        server.close()
    table = format_table(rows)
    reach_med = statistics.median(r.round_trip_ms for r in rows)
    summary = f"median reachTo round trip over qi in the table: {reach_med:.2f} ms"
    if costs:
        summary += "\n\n" + format_costs(costs, latency_ms)
    print()
    print(table)
    print()
    print(summary)
    os.makedirs(out_dir, exist_ok=True)
    png = os.path.join(out_dir, "demo.png")
    draw(rows, methods, png)
    with open(os.path.join(out_dir, "demo.md"), "w", encoding="utf-8") as fh:
        fh.write(table + "\n\n" + summary + "\n")
    print(f"picture: {png}")
    return rows


def _wait_until_still(motion, names: list, angles: list, timeout: float = 5.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        now = motion.getAngles(names, True)
        if max(abs(a - b) for a, b in zip(now, angles)) < 1e-9:
            return
        time.sleep(0.02)


def format_table(rows: Sequence[Reach]) -> str:
    """The demo's markdown table."""
    lines = [
        "| method | target | arm | x, y, z (m) | reached | IK error (mm) | hand on robot (mm) | iterations "
        "| solve (ms) | reachTo round trip (ms) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        x, y, z = r.target
        lines.append(
            f"| {r.method} | {r.label} | {r.arm} | {x:.2f}, {y:.2f}, {z:.2f} | {'yes' if r.reached else 'no'} | "
            f"{r.ik_error_mm:.4f} | {r.robot_error_mm:.4f} | {r.iterations} | {r.solve_ms:.2f} | "
            f"{r.round_trip_ms:.2f} |"
        )
    return "\n".join(lines)


def draw(rows: Sequence[Reach], methods: Sequence[str], path: str) -> None:
    """One 3D panel per method: both arms at every answer, targets marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = min(3, len(methods))
    nrows = (len(methods) + cols - 1) // cols
    fig = plt.figure(figsize=(5.2 * cols, 4.8 * nrows))
    for k, method in enumerate(methods):
        ax = fig.add_subplot(nrows, cols, k + 1, projection="3d")
        for arm in ("LArm", "RArm"):
            s = arm_model(arm).shoulder
            ax.scatter(*s, color="k", s=25)
        ax.plot([0, 0], [0.098, -0.098], [0.1, 0.1], color="k", lw=3)
        ax.plot([0, 0], [0, 0], [-0.05, 0.1], color="k", lw=3)
        for r in (r for r in rows if r.method == method):
            p = joint_positions(arm_model(r.arm), r.angles)
            pts = np.array([p["shoulder"], p["elbow"], p["wrist"], p["hand"]])
            color = "tab:blue" if r.reached else "tab:orange"
            ax.plot(pts[:, 0], pts[:, 1], pts[:, 2], "-o", color=color, ms=3, lw=2)
            ax.scatter(*r.target, marker="x", color="red" if not r.reached else "green", s=40)
        ax.set_title(method)
        ax.set_xlabel("x (m)")
        ax.set_ylabel("y (m)")
        ax.set_zlabel("z (m)")
        ax.set_xlim(-0.05, 0.35)
        ax.set_ylim(-0.3, 0.3)
        ax.set_zlim(-0.1, 0.3)
        ax.view_init(elev=22, azim=35)
    fig.suptitle("nao-ik demo: NAO's arms (FRAME_TORSO) reaching targets (x): within 0.1 mm in blue, missed in orange")
    fig.tight_layout(rect=(0.0, 0.0, 1.0, 1.0 - 0.35 / fig.get_figheight()))  # the title's own strip at the top
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    p = argparse.ArgumentParser(
        prog="nao-ik demo",
        description="Simulated robot + NaoArmIK in one process: reach a few targets with every method, "
        "print a table and draw the arms.",
        epilog="example: nao-ik demo --out demo_out",
    )
    p.add_argument("--out", default="demo_out", help="folder for demo.png and demo.md (default demo_out)")
    p.add_argument("--methods", nargs="+", choices=METHODS, help="methods (default: all)")
    p.add_argument("--speed", type=float, default=1.0, help="fractionMaxSpeed of the simulated motions (default 1.0)")
    p.add_argument("--view", action="store_true", help="serve the live 3-D view while the demo runs (extra 'view')")
    p.add_argument("--view-port", type=int, default=8080, help="the view's port (default 8080, or the next free one)")
    p.add_argument("--view-wait", type=float, default=0.0, help="seconds the view stays up after the reaches")
    p.add_argument(
        "--rounds", type=int, default=300, help="rounds of single calls timed against getAngles (default 300; 0: none)"
    )
    p.add_argument("--latency-ms", type=float, default=0.0, help="the simulated robot's latency (default 0)")
    a = p.parse_args(argv)
    if not 0 <= a.rounds <= 100000 or not 0 <= a.latency_ms <= 10000:
        p.error("--rounds must be in [0, 100000] and --latency-ms in [0, 10000]")
    if a.view:
        try:
            import viser  # noqa: F401
        except ImportError:
            p.error("--view needs the 'view' extra: pip install 'nao-ik[view]'")
    run_demo(a.out, a.methods, a.speed, a.view_port if a.view else None, a.view_wait, a.rounds, a.latency_ms)
    return 0


if __name__ == "__main__":
    sys.exit(main())
