"""The README's picture: a simulated robot, the service and the view in one process, photographed.

``nao-ik view --screenshot docs/view.png`` runs this: it starts a simulated
robot, registers NaoArmIK, opens the view in headless Chromium, makes a few
reaches from the page (the left hand draws its trail), and saves the page.
"""

from __future__ import annotations

import time
from typing import Sequence

from .browser import Browser
from .viewer import Viewer, ViewOptions

#: The page's reaches before the picture: the left hand along an arc, then the right arm out front.
SHOT_REACHES: tuple[tuple[str, tuple[float, float, float]], ...] = (
    ("LArm", (0.10, 0.20, 0.02)),
    ("LArm", (0.15, 0.16, 0.06)),
    ("LArm", (0.17, 0.10, 0.10)),
    ("LArm", (0.15, 0.12, 0.16)),
    ("RArm", (0.14, -0.14, 0.04)),
    ("LArm", (0.15, 0.17, 0.10)),
)


def wait_still(motion, names: Sequence[str], timeout: float = 5.0) -> None:
    """Wait until the joints are still: their commanded angles (this cycle's command) the same a cycle apart."""
    end, last = time.monotonic() + timeout, None
    while time.monotonic() < end:
        now = motion.getAngles(list(names), False)
        if now == last:
            return
        last = now
        time.sleep(0.02)


def take_screenshot(path: str, width: int = 1200, height: int = 720, speed: float = 0.5) -> int:
    """Run the scene above and save the page to ``path`` (PNG).

    Args:
        path: the PNG to write.
        width: window width, pixels.
        height: window height, pixels.
        speed: fractionMaxSpeed of the reaches.

    Returns:
        The PNG's size in bytes.
    """
    import qi

    from sim_stub.robot import SimulatedRobot

    from ...service import register
    from ...service.client import Session

    with SimulatedRobot() as robot:
        server = qi.Session()
        server.connect(robot.url)
        server.listen("tcp://127.0.0.1:0")
        register(server)
        user = Session(robot.url)
        motion = user.service("ALMotion")
        motion.wakeUp()
        user.service("NaoArmIK").setSpeed(speed)
        viewer = Viewer(robot.motion, user, ViewOptions(port=0), source=f"simulated robot {robot.url}")
        try:
            with Browser(width=width, height=height) as browser:
                browser.open(viewer.url)
                browser.wait_for_text("LArm hand")
                for arm, target in SHOT_REACHES:
                    viewer.panel.arm.value = arm
                    answer = viewer.reach(target)
                    if answer is None:
                        raise RuntimeError(f"the reach to {target} was refused: {viewer.text('answer')}")
                    wait_still(motion, answer["names"])
                viewer.panel.arm.value = "auto"
                browser.wait_for_text("hand to target: 0.0 mm")
                browser.close_notices()
                time.sleep(1.0)
                return browser.screenshot(path)
        finally:
            viewer.stop()
            user.close()
            server.close()
