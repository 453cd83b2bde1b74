"""The robot runtime's line to ALMotion (:mod:`nao_ik.robot.link`) over real libqi on loopback."""

from __future__ import annotations

import pytest

qi = pytest.importorskip("qi", reason="libqi (the 'qi' package) is needed for the link's tests")

from nao_ik.robot.link import Link  # noqa: E402
from nao_ik.robot.other import now  # noqa: E402


class _Motion:
    """An ALMotion that has getAngles and no isCollision."""

    def getAngles(self, names, sensors):  # noqa: N802 (ALMotion's name)
        return [0.25] * len(names)


@pytest.fixture
def link():
    robot = qi.Session()
    robot.listenStandalone("tcp://127.0.0.1:0")
    robot.registerService("ALMotion", _Motion())
    user = qi.Session()
    user.connect(robot.endpoints()[0])
    yield Link(user)
    user.close()
    robot.close()


def test_a_method_almotion_lacks_fails_that_call_alone_and_keeps_the_proxy(link):
    assert link.result(link.start("getAngles", (["LShoulderPitch"], True), now() + 2.0)) == [0.25]
    proxy = link._proxy
    with pytest.raises(RuntimeError, match="^ALMotion has no method isCollision$"):
        link.start("isCollision", ("LArm",), now() + 2.0)
    assert link._proxy is proxy  # not fetched again on the next call, as a dead proxy is
    assert link.result(link.start("getAngles", (["LShoulderPitch"], True), now() + 2.0)) == [0.25]
