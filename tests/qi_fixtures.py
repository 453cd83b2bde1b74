"""The whole path over real libqi on loopback, as a robot would have it.

A standalone session plays the robot's NAOqi and hosts the stub ALMotion; a
second session registers NaoArmIK on it (as ``nao-ik serve`` does from a PC);
a third is the user.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time

import pytest

qi = pytest.importorskip("qi", reason="libqi (the 'qi' package) is needed for the end-to-end tests")

from nao_ik.cli import quiet_qi  # noqa: E402
from nao_ik.service import register  # noqa: E402
from sim_stub.motion import StubMotion  # noqa: E402
from sim_stub.profiles import PROFILES, default_profile  # noqa: E402
from sim_stub.robot import SimulatedRobot  # noqa: E402

quiet_qi("ERROR")


class Stack:
    """Robot, service and user sessions; closes them in reverse order."""

    def __init__(
        self,
        motion: StubMotion | None = None,
        latency: float = 0.0,
        profile: str | None = None,
        **service_options: float,
    ):
        self.robot = SimulatedRobot(motion=motion, latency=latency, profile=profile)
        self.server = qi.Session()
        self.server.connect(self.robot.url)
        self.server.listen("tcp://127.0.0.1:0")
        self.service, self.service_id = register(self.server, **service_options)
        self.user = qi.Session()
        self.user.connect(self.robot.url)
        self.ik = self.user.service("NaoArmIK")
        self.motion = self.user.service("ALMotion")  # the user's proxy, over qi
        self.stub = self.robot.motion  # the in-process stub, to inspect what it received

    def flush(self) -> None:
        """Wait until the commands the service sent have reached the stub.

        The service sends ``setAngles`` without waiting for ALMotion's answer; ``getPose`` reads the
        robot fresh over the same connection, and the stub serves calls in order, so its answer
        comes after every earlier command was taken.
        """
        try:
            self.ik.getPose("LArm")
        except RuntimeError:  # ALMotion gone or hung: what it did not take, it never will from here
            pass

    def moves(self) -> list[dict]:
        """Commands that would move a joint (after :meth:`flush`)."""
        self.flush()
        return [
            c for c in self.stub.getRecordedCommands() if c["method"] in ("setAngles", "angleInterpolationWithSpeed")
        ]

    def wait_still(self, names: list, timeout: float = 5.0) -> None:
        """Wait until the joints reach their commands (first :meth:`flush`: the service's last command may
        still be on its way to the stub, which would then seem still)."""
        self.flush()
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.motion.getAngles(names, True) == self.stub.getTargets(names):
                return
            time.sleep(0.02)
        raise AssertionError("the simulated joints did not arrive")

    @contextlib.contextmanager
    def after_next_move(self, names: list, to: list | None = None):
        """While the block runs: once the robot receives its next command, another client's setAngles sends
        ``names`` to ``to`` (None: holds them where they are then, as something holding the arm). Yields the list
        the angles sent go into; the block's end waits for that command."""
        before, sent = len(self.moves()), []

        def move() -> None:
            end = time.monotonic() + 10
            while len(self.moves()) == before and time.monotonic() < end:
                time.sleep(0.002)
            sent.append(self.stub.getAngles(names, True) if to is None else list(to))
            self.stub.setAngles(names, sent[0], 1.0)

        mover = threading.Thread(target=move)
        mover.start()
        try:
            yield sent
        finally:
            mover.join()

    def close(self) -> None:
        self.robot.motion.setHang("getAngles", 0)  # let a hung stub go
        self.service.close()
        for s in (self.user, self.server):
            try:
                s.close()
            except RuntimeError:
                pass
        self.robot.close()


def profiles_here() -> tuple:
    """The stub's motion profiles a test that runs under each of them runs under: every one under make soak
    (``NAO_IK_SOAK``), the default one under make test."""
    return tuple(PROFILES) if os.environ.get("NAO_IK_SOAK") else (default_profile(),)


@pytest.fixture
def stack():
    s = Stack()
    yield s
    s.close()


@pytest.fixture
def awake(stack):
    stack.motion.wakeUp()
    return stack


class GetAnglesOnly:
    """An ALMotion with getAngles alone (every joint at 0.25 rad): no isCollision, as an older NAOqi's may lack."""

    def getAngles(self, names, sensors):  # noqa: N802 (ALMotion's name)
        return [0.25] * len(names)


@contextlib.contextmanager
def motion_session(motion: object):
    """A session connected to a standalone one on loopback that serves ``motion`` as ALMotion (nothing else)."""
    robot = qi.Session()
    robot.listenStandalone("tcp://127.0.0.1:0")
    robot.registerService("ALMotion", motion)
    user = qi.Session()
    user.connect(robot.endpoints()[0])
    try:
        yield user
    finally:
        user.close()
        robot.close()
