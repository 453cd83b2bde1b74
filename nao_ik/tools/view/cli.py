"""``nao-ik view`` and the view of ``nao-ik sim --view``.

``nao-ik view --qi-url URL`` attaches the page to any robot (ALMotion's
``getAngles`` read at ``--rate`` Hz, reaches through the robot's NaoArmIK);
``--replay FILE`` plays a recording; ``--screenshot FILE`` makes the
README's picture. Imported only when one of these is asked for (``nao_ik.cli``
quiets libqi's logging before it hands over).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Sequence

from .viewer import LOOPBACK, Viewer, ViewOptions


def add_view_arguments(p: argparse.ArgumentParser, prefix: str = "", rate: float = 50.0) -> None:
    """The options every command with a view has (``--view-port`` etc. with ``prefix="view-"``)."""
    p.add_argument(f"--{prefix}host", default=LOOPBACK, help=f"address the page listens on (default {LOOPBACK})")
    p.add_argument(f"--{prefix}port", type=int, default=8080, help="its port (default 8080, or the next free one)")
    p.add_argument(f"--{prefix}rate", type=float, default=rate, help=f"joint readings per second (default {rate:g})")
    p.add_argument("--record", metavar="FILE", help="write the joint trajectories to FILE (JSON lines)")


def view_options(a: argparse.Namespace, prefix: str = "") -> ViewOptions:
    """The :class:`ViewOptions` of parsed arguments (see :func:`add_view_arguments`)."""
    key = prefix.replace("-", "_")
    return ViewOptions(getattr(a, f"{key}host"), getattr(a, f"{key}port"), getattr(a, f"{key}rate"), a.record)


def announce(viewer: Viewer) -> None:
    """Print the page's address."""
    print(f"view: {viewer.url}  (open it in a browser)", flush=True)


def run_sim_view(listen: str, options: ViewOptions, ready: Callable[[str], None], apps_dir: str | None = None) -> None:
    """``nao-ik sim --view``: a simulated robot whose process also serves the view, until SIGINT/SIGTERM.

    The view reads the stub's joints in process; the page's reaches go to
    NaoArmIK over a qi session connected to the robot, like any client's.
    """
    from sim_stub.robot import SimulatedRobot

    from ...service.client import Session
    from ...service.serve import POLL, stop_on_signals

    stop = stop_on_signals()
    with SimulatedRobot(listen, apps_dir=apps_dir) as robot:
        session = Session(robot.url)
        viewer = Viewer(robot.motion, session, options, source=f"simulated robot {robot.url}")
        try:
            ready(robot.url)
            announce(viewer)
            while not stop.is_set():
                stop.wait(POLL)
        finally:
            viewer.stop()
            session.close()


def main(argv: Sequence[str]) -> int:
    """``nao-ik view``."""
    p = argparse.ArgumentParser(
        prog="nao-ik view",
        description="A live 3-D view of a robot in the browser: both arms as ALMotion reports them, the hands' "
        "trails, a target to drag that calls NaoArmIK.reachTo. Attach to a robot (--qi-url), play a recording "
        "(--replay), or make the README's screenshot (--screenshot). Runs until Ctrl-C.",
        epilog="example: nao-ik view --qi-url tcp://192.168.1.12:9559 --record session.jsonl   "
        "(then: nao-ik view --replay session.jsonl)",
    )
    what = p.add_mutually_exclusive_group()
    what.add_argument("--qi-url", default="tcp://127.0.0.1:9559", help="the robot (default tcp://127.0.0.1:9559)")
    what.add_argument("--replay", metavar="FILE", help="play a recording made with --record")
    what.add_argument("--screenshot", metavar="PNG", help="simulated robot + service + view, photographed, then exit")
    add_view_arguments(p, rate=30.0)
    p.add_argument("--speed", type=float, default=1.0, help="replay speed (default 1)")
    p.add_argument("--once", action="store_true", help="replay once instead of looping")
    a = p.parse_args(argv)
    if not 0 < a.rate <= 50:
        p.error(f"--rate must be in (0, 50] Hz, got {a.rate:g}")
    if a.screenshot:
        from .shot import take_screenshot

        size = take_screenshot(a.screenshot)
        print(f"screenshot: {a.screenshot} ({size} bytes)")
        return 0
    from ...service.serve import stop_on_signals

    stop = stop_on_signals()
    if a.replay:
        from .record import read_recording
        from .sources import ReplayMotion

        try:
            recording = read_recording(a.replay)
        except (OSError, ValueError) as e:
            print(f"nao-ik view: {e}", file=sys.stderr)
            return 1
        motion = ReplayMotion(recording, speed=a.speed, loop=not a.once)
        with Viewer(motion, None, view_options(a), source=f"replay of {a.replay}") as viewer:
            announce(viewer)
            _wait(stop)
        return 0
    from ...service.client import Session

    session = None
    try:
        session = Session(a.qi_url)
        motion = session.service("ALMotion")
    except RuntimeError as e:
        if session is not None:
            session.close()
        text = str(e).strip()
        print(f"nao-ik view: {text.splitlines()[0] if text else type(e).__name__}", file=sys.stderr)
        return 1
    try:
        with Viewer(motion, session, view_options(a), source=a.qi_url) as viewer:
            announce(viewer)
            _wait(stop)
    finally:
        session.close()
    return 0


def _wait(stop: Any) -> None:  # a threading.Event or server.StopFlag
    while not stop.is_set():
        stop.wait(0.2)
