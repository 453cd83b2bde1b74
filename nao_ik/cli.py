"""The ``nao-ik`` command: one entry point, one subcommand per job."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
from typing import Iterator, Sequence

USAGE = """usage: nao-ik COMMAND [options]

commands:
  demo     simulated robot + service in one process: reach targets with every method, table and picture
  sim      run a simulated robot (stub ALMotion) on a loopback qi session (--view: with a live 3-D view)
  view     a live 3-D view of a robot in the browser, a target to drag; record and replay (extra 'view')
  serve    register the NaoArmIK service on a robot (or a simulated one) and keep it registered
  reach    call NaoArmIK.reachTo once and print the answer
  check    wait until NaoArmIK is registered on a robot and answers
  install-package  install a .pkg already on the robot with PackageManager (used by deploy.sh)
  bench    benchmark every IK method on the paper's protocol (markdown table)
  bench --body  the body model, what its check costs, moves under each setAngles profile (markdown)
  bench --paths  known paths followed point by point against planned whole: jumps, planning time (markdown)
  workspace  an arm's reachable workspace: volume, dexterity, slices and 3-D cloud (picture and data)
  bench-pose  full hand poses: solve_pose against TRAC-IK and ikpy (markdown table)
  bench-intervals  the closed-form swivel intervals against the grid-and-bisection oracle (markdown table)
  bench-nearest  analytic's answers against the nearest of sampled solutions, near and far moves (markdown table)
  report   the paper's experiments reproduced and the alternatives compared (markdown + figures)
  loadtest several clients calling reachTo at once against a simulated robot
  train    train the networks from scratch (nn, nn-paper, the paper's hidden-unit sweep)
  view-cost  the CPU the view costs a simulated robot, with and without a browser (extra 'view')

Run 'nao-ik COMMAND --help' for the options of a command.
"""


#: The commands that talk to a robot (or a simulated one) over libqi.
QI_COMMANDS = {"demo", "sim", "view", "serve", "reach", "check", "install-package", "loadtest", "view-cost"}


def need_qi() -> None:
    """Exit with a clear message where libqi (the 'qi' package) is missing: it has wheels for CPython 3.8-3.12 on
    Linux x86_64 only, so pip installs nao-ik elsewhere without it (the library runs; the service does not).

    Importing libqi takes a second or more on a busy machine: a Ctrl-C or SIGTERM meanwhile is a stop request, and
    the command stops there with status 0 (nothing started yet), as it does once running.
    """
    stops: list[int] = []
    handlers = {}
    with contextlib.suppress(ValueError):  # not the main thread: signals stay as they are
        for signum in (signal.SIGINT, signal.SIGTERM):
            handlers[signum] = signal.signal(signum, lambda n, _frame: stops.append(n))
    try:
        import qi  # noqa: F401
    except ImportError:
        if stops:
            sys.exit(0)
        import platform

        v = sys.version_info
        sys.exit(
            f"nao-ik: this command needs libqi (the 'qi' package), which has wheels for CPython 3.8-3.12 on Linux "
            f"x86_64; this is Python {v.major}.{v.minor} on {platform.system()} {platform.machine()}. Install nao-ik "
            "with Python 3.12 or older (make PYTHON=python3.12 ...); the library (import nao_ik) runs without it."
        )
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    if stops:
        sys.exit(0)


def quiet_qi(level: str = "WARNING") -> None:
    """libqi logs at info level to stdout by default: keep warnings and errors,
    and drop its notice that no qi.Application was created (none is needed)."""
    need_qi()
    import qi

    qi.logging.setLevel(getattr(qi.logging, level))
    qi.logging.setFilters("qi.path.sdklayout=silent")


@contextlib.contextmanager
def robot_session(url: str) -> Iterator:
    """A session connected to ``url`` that reconnects (:class:`nao_ik.service.client.Session`), closed afterwards."""
    quiet_qi()
    from .service.client import Session

    with Session(url) as session:
        yield session


def fail(command: str, e: Exception, url: str = "") -> int:
    """Print the first line of a libqi error for a command, with what to do where libqi does not say; exit 1."""
    text = str(e).strip()
    line = text.splitlines()[0] if text else type(e).__name__
    if "Cannot find service 'NaoArmIK'" in line:
        line += f" (NaoArmIK is not running on {url}: start it with nao-ik serve --qi-url {url}; nao-ik check "
        "--qi-url URL waits until it answers)"
    print(f"nao-ik {command}: {line}", file=sys.stderr)
    return 1


def sim_main(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(
        prog="nao-ik sim",
        description="Run a simulated robot: a standalone qi session (the robot's NAOqi) hosting the stub ALMotion. "
        "Runs until Ctrl-C.",
        epilog="example: nao-ik sim --listen tcp://127.0.0.1:9559   (then: nao-ik serve --qi-url tcp://127.0.0.1:9559)",
    )
    p.add_argument("--listen", default="tcp://127.0.0.1:9559", help="listen URL (default tcp://127.0.0.1:9559)")
    p.add_argument("--apps-dir", help="also offer a PackageManager that installs packages into this folder")
    p.add_argument("--view", action="store_true", help="also serve a live 3-D view of the robot (extra 'view')")
    p.add_argument("--view-host", default="127.0.0.1", help="address of the view's page (default 127.0.0.1)")
    p.add_argument("--view-port", type=int, default=8080, help="its port (default 8080, or the next free one)")
    p.add_argument("--view-rate", type=float, default=50.0, help="joint readings per second while watched (default 50)")
    p.add_argument("--record", metavar="FILE", help="with --view: write the joint trajectories to FILE (JSON lines)")
    p.add_argument(
        "--latency-ms",
        type=float,
        default=0.0,
        help="milliseconds added to every ALMotion call, half each way, as over a network (default 0)",
    )
    p.add_argument(
        "--profile",
        choices=("linear", "smooth", "synchronised"),
        help="how joints move: linear (constant speed, instant start and stop), smooth (continuous velocity, "
        "overshoot on retarget, like ALMotion), synchronised (smooth, the joints of a command arrive together) "
        "(default: $NAO_IK_STUB_PROFILE, else smooth)",
    )
    p.add_argument("--cycle-ms", type=float, default=20.0, help="ALMotion's control cycle (default 20; NAO6: 12 or 24)")
    p.add_argument(
        "--sag-mrad",
        type=float,
        default=0.0,
        help="sensed angles of still joints off their command by up to this, as Smart Stiffness sags (default 0)",
    )
    a = p.parse_args(argv)
    if a.record and not a.view:
        p.error("--record needs --view")
    if not 0 <= a.latency_ms <= 10000:
        p.error(f"--latency-ms must be in [0, 10000], got {a.latency_ms:g}")
    if a.latency_ms and a.view:
        p.error("--latency-ms and --view cannot be combined")
    if not 1 <= a.cycle_ms <= 100:
        p.error(f"--cycle-ms must be in [1, 100], got {a.cycle_ms:g}")
    if not 0 <= a.sag_mrad <= 50:
        p.error(f"--sag-mrad must be in [0, 50], got {a.sag_mrad:g}")
    if a.view and (a.profile or a.cycle_ms != 20.0 or a.sag_mrad):
        p.error("--profile, --cycle-ms and --sag-mrad cannot be combined with --view")
    if not 0 < a.view_rate <= 50:
        p.error(f"--view-rate must be in (0, 50] Hz, got {a.view_rate:g}")
    quiet_qi()

    def ready(url: str) -> None:
        print(f"simulated robot listening at {url}", flush=True)

    if a.view:
        view = _import_view(p, "cli")
        view.run_sim_view(a.listen, view.view_options(a, "view-"), ready, apps_dir=a.apps_dir)
        return 0
    from .service.serve import run_sim

    run_sim(
        a.listen,
        ready=ready,
        apps_dir=a.apps_dir,
        latency=a.latency_ms / 1e3,
        profile=a.profile,
        cycle=a.cycle_ms / 1e3,
        sag=a.sag_mrad / 1e3,
    )
    return 0


def _import_view(p: argparse.ArgumentParser, module: str):
    """A module of the optional viewer, or a usage error saying how to install it."""
    import importlib

    try:
        import viser  # noqa: F401
    except ImportError:
        p.error("the view needs the 'view' extra: pip install 'nao-ik[view]'")
    return importlib.import_module(f".tools.view.{module}", __package__)


def serve_main(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(
        prog="nao-ik serve",
        description="Register NaoArmIK on a robot's (or a simulated robot's) service directory; reconnect and "
        "re-register if the robot goes away; restart at once if the service process crashes. Runs until Ctrl-C.",
        epilog="example, from a PC to a NAO: nao-ik serve --qi-url tcp://192.168.1.12:9559 "
        "--qi-listen-url tcp://0.0.0.0:9560 (the robot connects back to the PC's port 9560: let it in)",
    )
    p.add_argument("--qi-url", default="tcp://127.0.0.1:9559", help="the robot's URL (default tcp://127.0.0.1:9559)")
    p.add_argument(
        "--qi-listen-url",
        default=None,
        help="where callers reach this service; needed when it runs on another computer than the robot "
        "(tcp://0.0.0.0:9560; port 0 picks a new port at every start, which a firewall rule cannot name). "
        "Default: loopback only",
    )
    p.add_argument("--speed", type=float, default=0.2, help="default fractionMaxSpeed (default 0.2)")
    p.add_argument("--motion-timeout", type=float, default=2.0, help="seconds each ALMotion call may take (default 2)")
    p.add_argument(
        "--call-budget",
        type=float,
        default=10.0,
        help="seconds each call may take; a path 0.1 s more per point "
        "to compute it, then 40 ms per point to send it (default 10)",
    )
    p.add_argument(
        "--user",
        help="login for robots that require one (NAOqi 2.9: --qi-url tcps://ROBOT:9503); "
        "the password is read from the NAOQI_PASSWORD environment variable",
    )
    a = p.parse_args(argv)
    from .model import validate

    try:
        speed = validate.speed(a.speed)
        validate.positive(a.motion_timeout, "--motion-timeout")
        validate.positive(a.call_budget, "--call-budget")
    except ValueError as e:
        p.error(str(e))
    password = os.environ.get("NAOQI_PASSWORD")
    if a.user and password is None:
        p.error("--user needs the password in the NAOQI_PASSWORD environment variable")
    from .service import supervisor

    if not supervisor.is_worker():  # the service runs in a worker process, forked anew if libqi crashes it
        return supervisor.supervise([sys.executable, "-m", "nao_ik.cli", "serve", *argv])
    from .service import forker
    from .service.serve import limit_message_size, serve

    limit_message_size()  # before libqi reads its first message
    quiet_qi()

    def registered(url: str) -> None:
        print(f"NaoArmIK registered on {url}", flush=True)
        forker.registered()

    if forker.forks():  # imported: the forker stays here, a worker it forks goes on
        serve(
            a.qi_url,
            a.qi_listen_url,
            speed,
            on_registered=registered,
            user=a.user,
            password=password,
            motion_timeout=a.motion_timeout,
            call_budget=a.call_budget,
        )
    # Everything is stopped and closed. Skip the interpreter's and libqi's
    # teardown: libqi 3.1.5's static destructors abort now and then with threads of
    # its own still running ("terminate called without an active exception",
    # 1 exit in 30 measured), which a supervisor would count as a failure.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def reach_main(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(
        prog="nao-ik reach",
        description="Ask NaoArmIK to move an arm to (X, Y, Z), metres in FRAME_TORSO, and print its answer.",
        epilog="example: nao-ik reach 0.15 0.10 0.05 --method fabrik --qi-url tcp://127.0.0.1:9559",
    )
    p.add_argument("x", type=float)
    p.add_argument("y", type=float)
    p.add_argument("z", type=float)
    p.add_argument("--method", default="analytic", help="IK method (default analytic)")
    p.add_argument("--arm", default="auto", choices=["auto", "LArm", "RArm"], help="default: by the side of y")
    p.add_argument("--compute-only", action="store_true", help="compute the angles without moving the robot")
    p.add_argument("--wake-up", action="store_true", help="call ALMotion.wakeUp() first (motors on)")
    p.add_argument("--qi-url", default="tcp://127.0.0.1:9559")
    a = p.parse_args(argv)
    try:
        with robot_session(a.qi_url) as session:
            ik = session.service("NaoArmIK")
            if a.wake_up:
                session.service("ALMotion").wakeUp()
            if a.compute_only:
                arm = a.arm if a.arm != "auto" else ("LArm" if a.y >= 0 else "RArm")
                result = ik.computeAngles(arm, a.x, a.y, a.z, a.method)
            elif a.arm == "auto":
                result = ik.reachTo(a.x, a.y, a.z, a.method)
            else:
                result = ik.reachToWithArm(a.arm, a.x, a.y, a.z, a.method)
    except RuntimeError as e:
        return fail("reach", e, a.qi_url)
    print(json.dumps(result, indent=2, sort_keys=True))
    return 0 if result.get("reached") else 3


def install_package_main(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(
        prog="nao-ik install-package",
        description="Install a Choregraphe package that is already on the robot with PackageManager.install "
        "(what qipkg deploy-package does after copying it). Exit 3 if the robot has no PackageManager.",
        epilog="example: nao-ik install-package /home/nao/nao-ik.pkg --qi-url tcp://192.168.1.12:9559",
    )
    p.add_argument("path", help="the .pkg file's path on the robot")
    p.add_argument("--qi-url", default="tcp://127.0.0.1:9559")
    a = p.parse_args(argv)
    try:
        with robot_session(a.qi_url) as session:
            if "PackageManager" not in {s["name"] for s in session.services()}:
                print(f"nao-ik install-package: no PackageManager on {a.qi_url}", file=sys.stderr)
                return 3
            ok = session.service("PackageManager").install(a.path)
    except RuntimeError as e:
        return fail("install-package", e)
    print(f"installed {a.path}" if ok else f"PackageManager refused {a.path}")
    return 0 if ok else 1


def check_main(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(
        prog="nao-ik check",
        description="Wait until NaoArmIK is listed in the robot's service directory and answers getMethods.",
        epilog="example: nao-ik check --qi-url tcp://192.168.1.12:9559 --timeout 30",
    )
    p.add_argument("--qi-url", default="tcp://127.0.0.1:9559")
    p.add_argument("--timeout", type=float, default=20.0, help="seconds (default 20)")
    a = p.parse_args(argv)
    quiet_qi()
    import time

    import qi

    end = time.monotonic() + a.timeout
    last = "no answer"
    while time.monotonic() < end:
        session = qi.Session()
        try:
            session.connect(a.qi_url)
            if "NaoArmIK" in {s["name"] for s in session.services()}:
                methods = session.service("NaoArmIK").getMethods()
                print(f"NaoArmIK is up on {a.qi_url}: {', '.join(methods)}")
                return 0
            last = "NaoArmIK is not registered"
        except RuntimeError as e:
            last = str(e).strip().splitlines()[0]
        finally:
            session.close()
        time.sleep(0.5)
    print(f"nao-ik check: {last} ({a.qi_url}, after {a.timeout:g} s)", file=sys.stderr)
    return 1


def _body_report(rest: Sequence[str], flag: str = "--body") -> bool:
    """Whether ``nao-ik bench`` was asked for the body report (``--body`` alone: nao_ik.evidence.body_report), not the
    main table's body part (``--body N``: that many targets for its body table); the same for ``--paths`` (the path
    report, nao_ik.evidence.path_bench, against ``--paths N``: that many lines for the continuity table)."""
    if flag not in rest:
        return False
    after = list(rest)[list(rest).index(flag) + 1 :]
    try:
        int(after[0])
    except (IndexError, ValueError):
        return True
    return False


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to the subcommand."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    command, rest = args[0], args[1:]
    if command in QI_COMMANDS and not {"-h", "--help"} & set(rest):
        need_qi()
    if command == "bench" and _body_report(rest):
        from .evidence.body_report import main as run

        rest = [a for a in rest if a != "--body"]
    elif command == "bench" and _body_report(rest, "--paths"):
        from .evidence.path_bench import main as run

        rest = [a for a in rest if a != "--paths"]
    elif command == "bench":
        from .evidence.bench import main as run
    elif command == "workspace":
        from .evidence.workspace import main as run
    elif command == "bench-pose":
        from .evidence.pose_bench import main as run
    elif command == "bench-intervals":
        from .evidence.interval_bench import main as run
    elif command == "bench-nearest":
        from .evidence.nearest_bench import main as run
    elif command == "report":
        from .evidence.report.build import main as run
    elif command == "train":
        from .training.cli import main as run
    elif command == "loadtest":
        from .evidence.loadtest import main as run
    elif command == "demo":
        quiet_qi()
        from .tools.demo import main as run
    elif command == "sim":
        run = sim_main
    elif command in ("view", "view-cost"):
        view = _import_view(argparse.ArgumentParser(prog=f"nao-ik {command}"), "cli" if command == "view" else "cost")
        quiet_qi()
        run = view.main
    elif command == "serve":
        run = serve_main
    elif command == "reach":
        run = reach_main
    elif command == "install-package":
        run = install_package_main
    elif command == "check":
        run = check_main
    else:
        print(f"nao-ik: unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
        return 2
    return run(rest)


if __name__ == "__main__":
    sys.exit(main())
