"""The service's line to ALMotion (:mod:`nao_ik.service.link`) over real libqi on loopback."""

from __future__ import annotations

import pytest

qi = pytest.importorskip("qi", reason="libqi (the 'qi' package) is needed for the link's tests")

from nao_ik.service.link import MotionLink  # noqa: E402


class _Motion:
    """An ALMotion that has getAngles and no isCollision."""

    def getAngles(self, names, sensors):  # noqa: N802 (ALMotion's name)
        return [0.25] * len(names)


def test_a_method_almotion_lacks_fails_that_call_alone_and_keeps_the_proxy():
    robot = qi.Session()
    robot.listenStandalone("tcp://127.0.0.1:0")
    robot.registerService("ALMotion", _Motion())
    user = qi.Session()
    user.connect(robot.endpoints()[0])
    fetched = []
    try:
        link = MotionLink(user, 2.0, lambda: fetched.append(1))
        assert link.call("getAngles", ["LShoulderPitch"], True) == [0.25]
        with pytest.raises(RuntimeError, match="^ALMotion has no method isCollision$"):
            link.call("isCollision", "LArm")
        assert link.call("getAngles", ["LShoulderPitch"], True) == [0.25]
        assert fetched == [1]  # one proxy: a new one would make the service read ALMotion's limits again
    finally:
        user.close()
        robot.close()
