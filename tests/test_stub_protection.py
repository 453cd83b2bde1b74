"""The stub ALMotion protects itself like ALMotion: arm commands that would hit the body stop, and are counted."""

import numpy as np
import pytest

from nao_ik.body import STUB_MARGIN
from nao_ik.collision import clearance_batch
from nao_ik.model import arm_model
from nao_ik.nn.data import random_configurations
from sim_stub.motion import StubMotion
from sim_stub.protection import arm_clearance


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t

    def sleep(self, d: float) -> None:
        self.t += d


def _stub() -> StubMotion:
    clock = FakeClock()
    m = StubMotion(clock=clock, sleep=clock.sleep)
    m.wakeUp()
    return m


def _into_the_body(arm: str) -> list:
    """A configuration deep in the body that the straight joint motion from the stub's stand posture meets."""
    m = arm_model(arm)
    q = random_configurations(m, 3000, np.random.default_rng(4), 0.0)
    dist, _ = clearance_batch(m, q)
    return q[np.argmin(dist)].tolist()


def test_protection_is_on_by_default_and_switches():
    m = _stub()
    assert m.getCollisionProtectionEnabled("Arms")
    assert m.setCollisionProtectionEnabled("LArm", False)
    assert not m.getCollisionProtectionEnabled("Arms") and m.getCollisionProtectionEnabled("RArm")
    with pytest.raises(RuntimeError, match="Arms, LArm or RArm"):
        m.setCollisionProtectionEnabled("Head", True)
    with pytest.raises(RuntimeError, match="bool"):
        m.setCollisionProtectionEnabled("Arms", 1)


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_a_command_into_the_body_stops_at_the_last_safe_posture(arm):
    names = list(arm_model(arm).names)
    goal = _into_the_body(arm)
    m = _stub()
    m.angleInterpolationWithSpeed(names, goal, 0.5)
    stops = m.getCollisionStops()
    assert len(stops) == 1 and stops[0]["arm"] == arm and stops[0]["part"]
    here = m.getAngles(names, True)
    assert arm_clearance(arm, here)[0] >= STUB_MARGIN
    assert here == stops[0]["angles"] and here != goal
    # Off: the same command goes through (and strikes the body), nothing recorded.
    off = _stub()
    off.setCollisionProtectionEnabled("Arms", False)
    off.angleInterpolationWithSpeed(names, goal, 0.5)
    assert off.getCollisionStops() == []
    assert np.allclose(off.getAngles(names, True), goal)
    assert arm_clearance(arm, goal)[0] < 0.0


def test_ordinary_motions_are_not_stopped():
    m = _stub()
    for arm in ("LArm", "RArm"):
        model = arm_model(arm)
        m.angleInterpolationWithSpeed(list(model.names), list(model.neutral), 1.0)
    assert m.getCollisionStops() == []


def test_the_demo_reaches_trip_no_protection(awake):
    """The demo's targets (both arms), reached with a few methods at full speed: the stub records no stop."""
    from nao_ik.demo import TARGETS

    awake.ik.setSpeed(1.0)
    for method in ("analytic", "dls", "fabrik", "nn"):
        for _, target in TARGETS:
            r = awake.ik.reachTo(*target, method)
            awake.wait_still(list(r["names"]))
    assert awake.stub.getCollisionStops() == []


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_a_sweep_in_front_of_the_torso_trips_no_protection(awake, arm):
    """trackPath sweeps the hand across the chest, from beside it to the middle and back: no stop."""
    s = 1.0 if arm == "LArm" else -1.0
    ys = np.concatenate([np.linspace(0.16, 0.02, 15), np.linspace(0.02, 0.16, 15)])
    path = [[0.14, float(s * y), 0.06] for y in ys]
    awake.ik.setSpeed(1.0)
    awake.ik.reachToWithArm(arm, *path[0], "analytic")
    awake.wait_still(list(arm_model(arm).names))
    r = awake.ik.trackPath(arm, path, "analytic")
    assert r
    awake.wait_still(list(arm_model(arm).names))
    assert awake.stub.getCollisionStops() == []
