"""A simulated robot on loopback: a standalone qi session hosting the stub ALMotion.

It plays the role NAOqi plays on a robot: its session is the service
directory that ``NaoArmIK`` and clients connect to.
"""

from __future__ import annotations

import qi

from .latency import LatentMotion
from .motion import CYCLE, StubMotion
from .packages import StubPackageManager
from .services import StubServiceManager

DEFAULT_LISTEN = "tcp://127.0.0.1:0"


class SimulatedRobot:
    """A running simulated robot.

    Args:
        listen: where the service directory listens (loopback by default).
        motion: the ALMotion stand-in to host (default: a new :class:`StubMotion`).
        apps_dir: if given, also host a PackageManager that installs packages there, and an
            ALServiceManager that starts their autorun services (:mod:`sim_stub.services`).
        latency: seconds added to every ALMotion call over qi, half each way
            (:mod:`sim_stub.latency`); 0: none.
        python2: what plays the robot's ``/usr/bin/python2`` for those services (default: see
            :class:`~sim_stub.services.StubServiceManager`).
        profile: how the joints move: ``"linear"``, ``"smooth"`` or ``"synchronised"``
            (:mod:`sim_stub.profiles`); None: the given motion's, or for a new one the environment variable
            NAO_IK_STUB_PROFILE if set, else :data:`~sim_stub.profiles.DEFAULT_PROFILE`.
        cycle: ALMotion's control cycle, seconds (None: the given motion's, else 0.02).
        sag: how far the sensed angles of still joints may be off their command, radians (None: the given
            motion's, else 0; :class:`~sim_stub.motion.StubMotion`).

    Attributes:
        session: the standalone qi session (the robot's NAOqi).
        motion: the in-process :class:`StubMotion` registered as ``ALMotion``.
        url: the address clients connect to.
    """

    def __init__(
        self,
        listen: str = DEFAULT_LISTEN,
        motion: StubMotion | None = None,
        apps_dir: str | None = None,
        latency: float = 0.0,
        python2: str | None = None,
        profile: str | None = None,
        cycle: float | None = None,
        sag: float | None = None,
    ):
        if not latency >= 0.0:
            raise ValueError(f"latency must be >= 0 seconds, got {latency!r}")
        if motion is None:
            motion = StubMotion(profile=profile, cycle=CYCLE if cycle is None else cycle, sag=sag or 0.0)
        else:
            motion._configure(profile, cycle, sag)
        self.session = qi.Session()
        self.session.listenStandalone(listen)
        self.motion = motion
        self._served = LatentMotion(self.motion, latency) if latency > 0 else self.motion
        self._motion_id = self.session.registerService("ALMotion", self._served)
        self.packages = None
        self.services = None
        self.url = _connectable(self.session.endpoints(), listen)
        if apps_dir:
            self.services = StubServiceManager(self.url, python2)
            self.packages = StubPackageManager(apps_dir, self.services)
            self.session.registerService("PackageManager", self.packages)
            self.session.registerService("ALServiceManager", self.services)

    def unregister_motion(self) -> None:
        """Take ALMotion off the service directory (simulates a crash of it)."""
        if self._motion_id is not None:
            self.session.unregisterService(self._motion_id)
            self._motion_id = None

    def register_motion(self) -> None:
        """Put ALMotion (the same stub object) back."""
        if self._motion_id is None:
            self._motion_id = self.session.registerService("ALMotion", self._served)

    def close(self) -> None:
        """Stop the robot's session (and the services its ServiceManager started)."""
        if self.services is not None:
            self.services.close()
        self.session.close()
        if isinstance(self._served, LatentMotion):
            self._served.close()

    def __enter__(self) -> SimulatedRobot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _connectable(endpoints: list[str], listen: str) -> str:
    """The endpoint a client on this machine should use."""
    for ep in endpoints:
        if ep.startswith("tcp://127.0.0.1") or ep.startswith("tcps://127.0.0.1"):
            return ep
    return endpoints[0] if endpoints else listen
