"""The robot runtime's line to ALMotion (:mod:`nao_ik.robot.link`) over real libqi on loopback."""

from __future__ import annotations

import pytest

pytest.importorskip("qi", reason="libqi (the 'qi' package) is needed for the link's tests")

from nao_ik.robot.link import Link  # noqa: E402
from nao_ik.robot.record import now  # noqa: E402
from tests.qi_fixtures import GetAnglesOnly, motion_session  # noqa: E402


def test_a_method_almotion_lacks_fails_that_call_alone_and_keeps_the_proxy():
    with motion_session(GetAnglesOnly()) as session:
        link = Link(session)
        assert link.result(link.start("getAngles", (["LShoulderPitch"], True), now() + 2.0)) == [0.25]
        proxy = link._proxy
        with pytest.raises(RuntimeError, match="^ALMotion has no method isCollision$"):
            link.start("isCollision", ("LArm",), now() + 2.0)
        assert link._proxy is proxy  # not fetched again on the next call, as a dead proxy is
        assert link.result(link.start("getAngles", (["LShoulderPitch"], True), now() + 2.0)) == [0.25]
