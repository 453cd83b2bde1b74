"""The stub ALMotion protects itself like ALMotion: arm motions that would hit the body or the other arm are
bent (the arm slides along and may end elsewhere), and every bending is recorded."""

import numpy as np
import pytest

from nao_ik.body import STUB_MARGIN
from nao_ik.collision import clearance_batch
from nao_ik.geometry.pose import forward_pose
from nao_ik.model import MIRROR_ANGLES, arm_model
from nao_ik.nn.data import random_configurations
from sim_stub.body import STAND
from sim_stub.motion import StubMotion
from sim_stub.protection import BODY_PARTS, MARGIN, OTHER_ARM, arm_clearance, gaps
from sim_stub.shapes import ARM_SHAPES, arms_gap, hand_point

DT = 0.02
PROFILES = ["linear", "smooth", "synchronised"]


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t

    def sleep(self, d: float) -> None:
        self.t += d


def _stub(profile: str | None = None) -> tuple[StubMotion, FakeClock]:
    clock = FakeClock()
    m = StubMotion(clock=clock, sleep=clock.sleep, profile=profile)
    m.wakeUp()
    return m, clock


def _names(arm: str) -> list:
    return list(arm_model(arm).names)


def _into_the_body(arm: str) -> list:
    """A configuration deep in the body that the joint motion from the stub's stand posture meets."""
    m = arm_model(arm)
    q = random_configurations(m, 3000, np.random.default_rng(4), 0.0)
    dist, _ = clearance_batch(m, q)
    return q[np.argmin(dist)].tolist()


def _follow(m: StubMotion, clock: FakeClock, seconds: float, check) -> None:
    """Step the clock cycle by cycle (reading half a cycle after each cycle's end), calling ``check()``."""
    clock.t += DT / 2
    for _ in range(int(seconds / DT)):
        clock.t += DT
        check()


def test_protection_switches_per_arm_like_almotion():
    """setCollisionProtectionEnabled takes "Arms", "LArm" or "RArm"; getCollisionProtectionEnabled only "LArm"
    or "RArm" (ALMotion's documentation); both are on by default."""
    m, _ = _stub()
    assert m.getCollisionProtectionEnabled("LArm") and m.getCollisionProtectionEnabled("RArm")
    assert m.setCollisionProtectionEnabled("LArm", False)
    assert not m.getCollisionProtectionEnabled("LArm") and m.getCollisionProtectionEnabled("RArm")
    assert m.setCollisionProtectionEnabled("Arms", True)
    assert m.getCollisionProtectionEnabled("LArm")
    with pytest.raises(RuntimeError, match="must be LArm or RArm, got 'Arms'"):
        m.getCollisionProtectionEnabled("Arms")
    with pytest.raises(RuntimeError, match="Arms, LArm or RArm"):
        m.setCollisionProtectionEnabled("Head", True)
    with pytest.raises(RuntimeError, match="bool"):
        m.setCollisionProtectionEnabled("Arms", 1)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_a_command_into_the_body_is_bent_and_held_off(arm, profile):
    """A target inside the body: the arm never comes within the margin, stops short (its command becomes
    where it stopped); the bending is recorded, and isCollision says "collision"."""
    names = _names(arm)
    goal = _into_the_body(arm)
    m, clock = _stub(profile)
    m.setAngles(names, goal, 0.5)
    seen = set()

    def check():
        assert min(gaps(arm, m.getAngles(names, True), None).values()) >= MARGIN
        seen.add(m.isCollision(arm))

    _follow(m, clock, 6.0, check)
    stops = m.getCollisionStops()
    assert stops and {s["arm"] for s in stops} == {arm} and {s["part"] for s in stops} <= set(BODY_PARTS)
    here = m.getAngles(names, True)
    assert m.getAngles(names, False) == here and stops[-1]["held"] and stops[-1]["end"] == here
    assert np.abs(np.subtract(here, goal)).sum() > 0.1
    assert arm_clearance(arm, here)[0] >= STUB_MARGIN
    assert "collision" in seen
    # Off: the same command goes through (and strikes the body), nothing recorded.
    off, clock = _stub(profile)
    off.setCollisionProtectionEnabled(arm, False)
    off.setAngles(names, goal, 0.5)
    clock.t += 6.0
    assert off.getCollisionStops() == []
    assert np.allclose(off.getAngles(names, True), goal)
    assert arm_clearance(arm, goal)[0] < 0.0 and off.isCollision(arm) == "collision"


#: A start with the forearm down beside the hip, and a posture in front of the chest whose direct joint
#: motion from there takes the forearm through the torso (both clear of the body).
CROSSING_START = [1.864, 0.259, 1.065, -1.446, 0.0]
CROSSING_GOAL = [0.061, -0.219, -0.738, -1.252, 0.0]


@pytest.mark.parametrize("profile", PROFILES)
def test_a_motion_across_the_body_slides_along_it(profile):
    """The protection does not freeze the arm where it first acts: the arm slides along the body, keeping the
    margin, and ends elsewhere (held where the body stops it) or, around the body, at its goal."""
    names = _names("LArm")
    assert min(gaps("LArm", CROSSING_GOAL, None).values()) > 0.01
    m, clock = _stub(profile)
    m.setCollisionProtectionEnabled("Arms", False)
    m.setAngles(names, CROSSING_START, 1.0)
    clock.t += 3.0
    m.setCollisionProtectionEnabled("Arms", True)
    m.setAngles(names, CROSSING_GOAL, 0.5)
    _follow(m, clock, 8.0, lambda: min(gaps("LArm", m.getAngles(names, True), None).values()) >= MARGIN or 1 / 0)
    stops = m.getCollisionStops()
    here = m.getAngles(names, True)
    assert stops and {s["part"] for s in stops} <= set(BODY_PARTS)
    assert np.abs(np.subtract(here, stops[0]["angles"])).sum() > 0.5  # far on from where it was first bent
    assert here == CROSSING_GOAL or (m.getAngles(names, False) == here and stops[-1]["held"])


def test_a_blocking_command_into_the_body_returns():
    names = _names("LArm")
    m, _ = _stub("smooth")
    m.angleInterpolationWithSpeed(names, _into_the_body("LArm"), 0.5)
    assert m.getCollisionStops() and m.getAngles(names, False) == m.getAngles(names, True)


def test_is_collision_answers_none_near_or_collision():
    m, clock = _stub("linear")
    assert m.isCollision("LArm") == "near"  # standing: the elbow 24 mm from the torso
    m.setAngles(_names("LArm"), [0.0, 0.8, 0.0, -0.05, 0.0], 1.0)  # straight out, forward and to the side
    clock.t += 2.0
    assert m.isCollision("LArm") == "none"
    for bad in ("Arms", "Head", 3):
        with pytest.raises(RuntimeError, match="LArm or RArm"):
            m.isCollision(bad)


def test_ordinary_motions_are_not_bent():
    m, _ = _stub()
    for arm in ("LArm", "RArm"):
        model = arm_model(arm)
        m.angleInterpolationWithSpeed(list(model.names), list(model.neutral), 1.0)
    assert m.getCollisionStops() == []


#: The right arm reaching across in front of the left chest; a left-arm motion from the stand posture (up in
#: front, elbow bent) whose way goes through that arm (about 4 cm deep by the stub's shapes, whether the joints
#: move each at its own speed or all in step) and stays 13 mm clear of the body. Found by a random search.
ACROSS = [0.515, 0.313, 0.105, 0.68, 0.0]
THROUGH = [-0.49, -0.13, 1.57, -1.13, 0.0]


def _mirror(q: list) -> list:
    return [s * v for s, v in zip(MIRROR_ANGLES, q)]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("mover", ["LArm", "RArm"])
def test_each_arm_is_kept_from_the_other(mover, profile):
    """One arm held across the chest, the other moving through it: the protection bends the motion for the
    other arm (recorded as such), the arms' own shapes keep the margin every cycle; with the mover's protection
    off, the arms go through each other."""
    still = "RArm" if mover == "LArm" else "LArm"
    across, through = (ACROSS, THROUGH) if mover == "LArm" else (_mirror(ACROSS), _mirror(THROUGH))

    def both(m: StubMotion) -> tuple:
        return m.getAngles(_names("LArm"), True), m.getAngles(_names("RArm"), True)

    for on in (True, False):
        m, clock = _stub(profile)
        m.setCollisionProtectionEnabled("Arms", False)  # put the still arm there, as another client could
        m.setAngles(_names(still), across, 1.0)
        clock.t += 3.0
        m.setCollisionProtectionEnabled("Arms", True)
        m.clearRecordedCommands()
        m.setCollisionProtectionEnabled(mover, on)
        m.setAngles(_names(mover), through, 1.0)
        least = []
        _follow(m, clock, 4.0, lambda: least.append(arms_gap(*both(m))))  # noqa: B023
        stops = m.getCollisionStops()
        if on:
            assert min(least) >= MARGIN
            assert stops and all(s["arm"] == mover for s in stops) and stops[0]["part"] == OTHER_ARM
            assert m.getAngles(_names(still), True) == pytest.approx(across)  # the still arm did not move
        else:
            assert min(least) < -0.005 and stops == []


def test_the_stubs_own_arm_shapes():
    """The stub's own kinematics agree with the library's; its arm shapes are the real robot's sizes (its own
    numbers, not the library's links)."""
    rng = np.random.default_rng(7)
    for arm in ("LArm", "RArm"):
        model = arm_model(arm)
        for q in rng.uniform(model.lower, model.upper, size=(50, 5)):
            assert np.allclose(hand_point(arm, q), forward_pose(model, q)[:3], atol=1e-12)
    radii = {name: r for name, _, _, _, r in ARM_SHAPES}
    assert radii == {"upper arm": 0.024, "elbow": 0.020, "forearm": 0.022, "hand": 0.030}
    stand = {a: [STAND[n] for n in _names(a)] for a in ("LArm", "RArm")}
    assert 0.05 < arms_gap(stand["LArm"], stand["RArm"]) < 0.30  # standing: the arms hang apart
    assert arms_gap(stand["LArm"], _mirror(stand["LArm"])) == pytest.approx(arms_gap(stand["LArm"], stand["RArm"]))


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


def test_is_collision_over_qi(awake):
    assert awake.motion.isCollision("LArm") in ("none", "near", "collision")
    with pytest.raises(RuntimeError, match="LArm or RArm"):
        awake.motion.getCollisionProtectionEnabled("Arms")
