"""The service's line to ALMotion (:mod:`nao_ik.service.link`) over real libqi on loopback."""

from __future__ import annotations

import pytest

pytest.importorskip("qi", reason="libqi (the 'qi' package) is needed for the link's tests")

from nao_ik.service.link import MotionLink  # noqa: E402
from tests.qi_fixtures import GetAnglesOnly, motion_session  # noqa: E402


def test_a_method_almotion_lacks_fails_that_call_alone_and_keeps_the_proxy():
    fetched = []
    with motion_session(GetAnglesOnly()) as session:
        link = MotionLink(session, 2.0, lambda: fetched.append(1))
        assert link.call("getAngles", ["LShoulderPitch"], True) == [0.25]
        with pytest.raises(RuntimeError, match="^ALMotion has no method isCollision$"):
            link.call("isCollision", "LArm")
        assert link.call("getAngles", ["LShoulderPitch"], True) == [0.25]
        assert fetched == [1]  # one proxy: a new one would make the service read ALMotion's limits again
