"""``nao-ik demo``: a simulated robot, the service, and a few reaches with every method.

Everything runs in this process over real libqi on loopback: a standalone
session plays the robot's NAOqi with the stub ALMotion, a second session
registers ``NaoArmIK`` (as ``nao-ik serve`` would), a third one is the user
calling ``reachTo``. After each reach the demo waits for the simulated joints
to arrive and asks ALMotion where the hand is.

With ``--view`` the live view serves the same robot while the demo runs and
after the table, until Enter is pressed (or for ``--view-seconds N``; at once
when stdin is not a terminal and no time is given). Then everything is closed
in order, and the demo returns only once libqi has let go of the objects
registered on its sessions (:func:`wait_released`).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import select
import statistics
import sys
import time
import weakref
from typing import IO, Any, NamedTuple, Sequence

import numpy as np

from ..api.position import DEFAULT_TOLERANCE, METHODS
from ..evidence.latency import format_costs, measure
from ..kinematics.chain import joint_positions
from ..model.arm import arm_model

# A handful of targets in front of the robot (FRAME_TORSO, metres), and one out of reach.
TARGETS = [
    ("up, before the shoulder", (0.14, 0.10, 0.19)),
    ("in front, left", (0.16, 0.13, 0.10)),
    ("out to the left", (0.10, 0.25, 0.12)),
    ("in front, right", (0.16, -0.13, 0.10)),
    ("low, right", (0.12, -0.16, -0.02)),
    ("out of reach", (0.34, 0.10, 0.10)),
]

#: Seconds the demo waits for the robot's session to unregister NaoArmIK when it stops.
UNREGISTER_TIMEOUT = 2.0
#: Seconds the demo waits, once everything is closed, for libqi to let go of the objects registered on it
#: (at once, as a rule; a machine busy with other work can keep libqi's threads waiting for seconds).
RELEASE_TIMEOUT = 15.0
RELEASE_POLL = 0.02


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
    view_seconds: float | None = None,
    rounds: int = 300,
    latency_ms: float = 0.0,
    stdin: IO[str] | None = None,
) -> list[Reach]:
    """Run the demo; print a line per method as it goes, then the table; write ``demo.md`` and (with matplotlib)
    ``demo.png`` into ``out_dir``.

    Args:
        out_dir: where ``demo.md`` and ``demo.png`` go.
        methods: the methods to run (default: all).
        speed: fractionMaxSpeed of the simulated motions.
        view_port: if given, serve the live view (:mod:`nao_ik.tools.view`) on this port while the demo runs
            and after the table (see :func:`hold_view`).
        view_seconds: how long the view stays up after the table: None, until Enter is pressed (at once
            when ``stdin`` is not a terminal); a number, that many seconds (Enter closes it sooner).
        rounds: rounds of single calls timed against ALMotion.getAngles (:mod:`nao_ik.evidence.latency`); 0: none.
        latency_ms: the simulated robot's latency, milliseconds per ALMotion call (half each way).
        stdin: where Enter is read from (default ``sys.stdin``).
    """
    from sim_stub.robot import SimulatedRobot

    methods = list(methods or [m for m in METHODS if m != "jacobian"])
    with SimulatedRobot(latency=latency_ms / 1e3) as robot:
        motion = weakref.ref(robot.motion)
        service: list[weakref.ref] = []
        rows = _run(robot, out_dir, methods, speed, view_port, view_seconds, rounds, latency_ms,
                    stdin or sys.stdin, service)  # fmt: skip
        # The sessions are closed and _run's frame (the proxies, the service) is gone: the robot closes
        # once libqi has let go of the service, so the last thing it does is not serving its peers'
        # disconnections (closing it sooner makes libqi warn "cancel: Bad file descriptor" now and then).
        wait_released([("NaoArmIK", ref) for ref in service])
    del robot
    wait_released([("the simulated ALMotion", motion)])
    return rows


def _run(
    robot: Any,
    out_dir: str,
    methods: list[str],
    speed: float,
    view_port: int | None,
    view_seconds: float | None,
    rounds: int,
    latency_ms: float,
    stdin: IO[str],
    service_ref: list[weakref.ref],
) -> list[Reach]:
    """The demo on ``robot``, up to closing its sessions; ``service_ref`` gets a weak reference to the
    service registered (see :func:`wait_released`)."""
    import qi

    from ..service import register
    from ..service.client import Session

    rows: list[Reach] = []
    with contextlib.ExitStack() as closing:
        # Closed in the reverse order of these callbacks, also after an error: the view (its thread joined),
        # the arms to rest, the user's session (no more calls), the service (its reader of the arms and its
        # workers stop), its registration, its session.
        server = qi.Session()
        closing.callback(server.close)
        server.connect(robot.url)
        server.listen("tcp://127.0.0.1:0")
        service, sid = register(server)
        service_ref.append(weakref.ref(service))
        # Unregistered explicitly: a closed session keeps its services, and NaoArmIK keeps its session
        # (through its ALMotion link), so without this libqi would hold the service until the
        # interpreter's exit and release it then, from its own thread, while Python finalizes.
        closing.callback(_unregister, server, sid)
        closing.callback(service.close)
        user = Session(robot.url)
        closing.callback(user.close)
        ik = user.service("NaoArmIK")
        motion = user.service("ALMotion")
        closing.callback(motion.rest)
        print(f"simulated robot at {robot.url}; NaoArmIK registered; methods: {', '.join(ik.getMethods())}",
              flush=True)  # fmt: skip
        viewer = None
        if view_port is not None:
            from .view.viewer import Viewer, ViewOptions

            viewer = Viewer(robot.motion, user, ViewOptions(port=view_port), source=f"nao-ik demo, {robot.url}")
            closing.callback(viewer.stop)
            print(f"view: {viewer.url}  (open it in a browser while the demo runs)", flush=True)
        motion.wakeUp()
        ik.setSpeed(speed)
        print(f"reaching {len(TARGETS)} targets with each of {len(methods)} method(s), a line per method; "
              "the table comes at the end", flush=True)  # fmt: skip
        for k, method in enumerate(methods):
            t_method, done = time.perf_counter(), len(rows)
            for label, target in TARGETS:
                t0 = time.perf_counter()
                try:
                    r = ik.reachTo(*target, method)
                except RuntimeError as e:  # a safety refusal: no certified way there from where the arm is
                    print(refused(label, str(e)), flush=True)
                    continue
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
            print(progress(k, len(methods), method, rows[done:], time.perf_counter() - t_method), flush=True)
        # What a call costs against one robot round trip, measured in the same run, the reaches at the
        # service's default speed (the demo's own moves are faster) like nao-ik loadtest's.
        if rounds > 0:
            print(f"timing {rounds} rounds of single calls against ALMotion.getAngles (--rounds 0 leaves it out)",
                  flush=True)  # fmt: skip
        costs = measure(ik, motion, rounds) if rounds > 0 else []
        report(rows, methods, costs, latency_ms, out_dir)
        if viewer is not None:
            hold_view(viewer.url, view_seconds, stdin)
    if viewer is not None:
        print("view: closed", flush=True)
    return rows


def refused(label: str, error: str) -> str:
    """The line a refused reach prints: the service's reason without its type (the reason names the method and
    the target, and says that nothing was sent)."""
    return f"refused ({label}): {error.split(': ', 1)[-1]}"


def progress(k: int, of: int, method: str, rows: Sequence[Reach], seconds: float) -> str:
    """The line the demo prints once a method's reaches are done (the ``k``-th of ``of``, from 0)."""
    reached = sum(r.reached for r in rows)
    return f"[{k + 1}/{of}] {method}: {reached} of {len(TARGETS)} targets reached, {seconds:.1f} s"


def _unregister(session: Any, sid: int) -> None:
    """Take a service off a session's directory, waiting at most UNREGISTER_TIMEOUT."""
    try:
        session.unregisterService(sid, _async=True).wait(int(UNREGISTER_TIMEOUT * 1000))
    except RuntimeError:
        pass  # the robot's session is gone already: it holds nothing


def wait_released(handed: Sequence[tuple[str, weakref.ref]], timeout: float = RELEASE_TIMEOUT) -> list[str]:
    """Wait until libqi has let go of the Python objects registered on its sessions; what it still holds.

    libqi releases a registered object on one of its own threads, some time after the service is
    unregistered or its session closed, and that thread takes the GIL to drop the object's Python
    references. Were the interpreter finalizing by then, Python would end that thread from inside a
    libqi destructor, and the process would abort ("terminate called without an active exception").
    The objects are gone once libqi let go of them (NaoArmIK is in a reference cycle: collected here).
    """
    end = time.monotonic() + timeout
    while True:
        gc.collect()
        alive = [name for name, ref in handed if ref() is not None]
        # Released or not, let libqi's threads take the GIL: the thread that dropped the last reference to
        # an object may have a few more references of the same object to drop (the stub ALMotion's helpers).
        time.sleep(RELEASE_POLL)
        if not alive:
            return []
        if time.monotonic() >= end:
            print(
                f"nao-ik demo: libqi still holds {', '.join(alive)} {timeout:g} s after its sessions closed",
                file=sys.stderr,
            )
            return alive


def hold_view(url: str, seconds: float | None, stdin: IO[str]) -> str:
    """Keep the view up after the table: until Enter, or ``seconds``; never wait on a stdin that is no terminal.

    Says on stdout what it does. Returns why it ended: ``"enter"``, ``"time"``, ``"interrupt"`` (Ctrl-C), or
    ``"at once"``.
    """
    terminal = _is_terminal(stdin)
    if seconds is not None and seconds <= 0:
        print(f"view: {url} closes now (--view-seconds {seconds:g})", flush=True)
        return "at once"
    if not terminal and seconds is None:
        print(
            f"view: {url} closes now: stdin is not a terminal, so no Enter can come "
            "(--view-seconds N keeps it open N s)",
            flush=True,
        )
        return "at once"
    if not terminal:
        print(f"view: {url} stays open {seconds:g} s (stdin is not a terminal: not waiting for Enter)", flush=True)
    elif seconds is None:
        print(f"view: {url} stays open; press Enter to close it", flush=True)
    else:
        print(f"view: {url} stays open {seconds:g} s; press Enter to close it sooner", flush=True)
    try:
        if not terminal:
            time.sleep(seconds)
            return "time"
        return _wait_for_enter(stdin, seconds)
    except KeyboardInterrupt:
        print("\nview: Ctrl-C", flush=True)
        return "interrupt"


def _is_terminal(stream: IO[str] | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (ValueError, OSError):  # closed, or no file behind it
        return False


def _wait_for_enter(stdin: IO[str], seconds: float | None) -> str:
    """Wait for a line (or end of input) on the terminal ``stdin``, at most ``seconds`` (None: no limit)."""
    end = None if seconds is None else time.monotonic() + seconds
    while True:
        left = None if end is None else end - time.monotonic()
        if left is not None and left <= 0:
            return "time"
        try:
            ready, _, _ = select.select([stdin], [], [], left)
        except (OSError, ValueError):  # a terminal select cannot watch (Windows' console)
            if left is None:
                stdin.readline()
                return "enter"
            time.sleep(left)
            return "time"
        if ready:
            stdin.readline()
            return "enter"


def report(rows: Sequence[Reach], methods: Sequence[str], costs: Sequence, latency_ms: float, out_dir: str) -> None:
    """Print the table and the costs; write ``demo.md`` and, where matplotlib is installed (the 'plot' extra),
    ``demo.png`` into ``out_dir`` (else say in one line how to get it)."""
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
    with open(os.path.join(out_dir, "demo.md"), "w", encoding="utf-8") as fh:
        fh.write(table + "\n\n" + summary + "\n")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print(f"picture: not drawn, it needs matplotlib (the 'plot' extra): pip install matplotlib (the table: "
              f"{out_dir}/demo.md)", flush=True)  # fmt: skip
        return
    png = os.path.join(out_dir, "demo.png")
    draw(rows, methods, png)
    print(f"picture: {png}", flush=True)


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


#: How the picture draws each kind of thing, and what its legend calls it: the legend's entries are
#: drawn from these same styles, so each shows the colour and marker of what it names.
STYLES: dict[str, dict] = {
    "arm reached": dict(color="tab:blue", marker="o", ms=3, lw=2),
    "arm missed": dict(color="tab:orange", marker="o", ms=3, lw=2),
    "target reached": dict(color="green", marker="x", ms=7, mew=1.5, ls=""),
    "target missed": dict(color="red", marker="x", ms=7, mew=1.5, ls=""),
    "torso": dict(color="k", lw=3),
    "shoulder": dict(color="k", marker="o", ms=5, ls=""),
}


def legend_labels() -> dict[str, str]:
    """The legend's text for each of :data:`STYLES`."""
    tol = DEFAULT_TOLERANCE * 1e3
    return {
        "arm reached": f"arm at a reached target (within {tol:g} mm)",
        "arm missed": "arm at a missed target",
        "target reached": "target, reached",
        "target missed": "target, missed",
        "torso": "torso",
        "shoulder": "shoulders",
    }


def figure(rows: Sequence[Reach], methods: Sequence[str]):
    """One 3D panel per method: both arms at every answer, targets marked; a legend of :data:`STYLES` on top."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    cols = min(3, len(methods))
    nrows = (len(methods) + cols - 1) // cols
    fig = plt.figure(figsize=(5.2 * cols, 4.8 * nrows + 0.5))
    for k, method in enumerate(methods):
        ax = fig.add_subplot(nrows, cols, k + 1, projection="3d")
        for arm in ("LArm", "RArm"):
            s = arm_model(arm).shoulder
            ax.plot([s[0]], [s[1]], [s[2]], **STYLES["shoulder"])
        ax.plot([0, 0], [0.098, -0.098], [0.1, 0.1], **STYLES["torso"])
        ax.plot([0, 0], [0, 0], [-0.05, 0.1], **STYLES["torso"])
        for r in (r for r in rows if r.method == method):
            p = joint_positions(arm_model(r.arm), r.angles)
            pts = np.array([p["shoulder"], p["elbow"], p["wrist"], p["hand"]])
            outcome = "reached" if r.reached else "missed"
            ax.plot(pts[:, 0], pts[:, 1], pts[:, 2], **STYLES[f"arm {outcome}"])
            ax.plot(*([c] for c in r.target), **STYLES[f"target {outcome}"])
        ax.set_title(method)
        ax.set_xlabel("x (m)")
        ax.set_ylabel("y (m)")
        ax.set_zlabel("z (m)")
        ax.set_xlim(-0.05, 0.35)
        ax.set_ylim(-0.3, 0.3)
        ax.set_zlim(-0.1, 0.3)
        ax.view_init(elev=22, azim=35)
    height = fig.get_figheight()
    fig.suptitle("nao-ik demo: NAO's arms reaching targets with each method (FRAME_TORSO)", y=1.0 - 0.1 / height)
    labels = legend_labels()
    handles = [Line2D([], [], label=labels[key], **style) for key, style in STYLES.items()]
    fig.legend(handles=handles, loc="upper center", ncol=len(handles), frameon=False,
               bbox_to_anchor=(0.5, 1.0 - 0.4 / height))  # fmt: skip
    fig.tight_layout(rect=(0.0, 0.0, 1.0, 1.0 - 0.75 / height))  # the title's and the legend's strips on top
    return fig


def draw(rows: Sequence[Reach], methods: Sequence[str], path: str) -> None:
    """Write :func:`figure` to ``path``."""
    fig = figure(rows, methods)  # it picks the backend before pyplot is imported
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    p = argparse.ArgumentParser(
        prog="nao-ik demo",
        description="Simulated robot + NaoArmIK in one process: reach a few targets with every method, "
        "print a table and draw the arms.",
        epilog="examples: nao-ik demo --out demo_out; nao-ik demo --view --view-seconds 60",
    )
    p.add_argument("--out", default="demo_out", help="folder for demo.png and demo.md (default demo_out)")
    p.add_argument("--methods", nargs="+", choices=METHODS, help="methods (default: all)")
    p.add_argument("--speed", type=float, default=1.0, help="fractionMaxSpeed of the simulated motions (default 1.0)")
    p.add_argument(
        "--view", action="store_true", help="serve the live 3-D view while the demo runs and after (extra 'view')"
    )
    p.add_argument("--view-port", type=int, default=8080, help="the view's port (default 8080, or the next free one)")
    p.add_argument(
        "--view-seconds",
        "--view-wait",
        type=float,
        default=None,
        metavar="N",
        help="with --view: keep the view up N s after the table (Enter closes it sooner); default: until Enter, "
        "or close at once when stdin is not a terminal",
    )
    p.add_argument(
        "--rounds", type=int, default=300, help="rounds of single calls timed against getAngles (default 300; 0: none)"
    )
    p.add_argument("--latency-ms", type=float, default=0.0, help="the simulated robot's latency (default 0)")
    a = p.parse_args(argv)
    if not 0 <= a.rounds <= 100000 or not 0 <= a.latency_ms <= 10000:
        p.error("--rounds must be in [0, 100000] and --latency-ms in [0, 10000]")
    if a.view_seconds is not None and not a.view:
        p.error("--view-seconds is for the view: add --view")
    if a.view_seconds is not None and not 0 <= a.view_seconds <= 86400:
        p.error("--view-seconds must be in [0, 86400]")
    if a.view:
        try:
            import viser  # noqa: F401
        except ImportError:
            p.error("--view needs the 'view' extra: pip install 'nao-ik[view]'")
    run_demo(a.out, a.methods, a.speed, a.view_port if a.view else None, a.view_seconds, a.rounds, a.latency_ms)
    return 0


if __name__ == "__main__":
    sys.exit(main())
