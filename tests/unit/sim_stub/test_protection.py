"""The stub ALMotion protects itself like ALMotion: arm motions that would hit the body or the other arm are
bent (the arm slides along and may end elsewhere), and every bending is recorded. Its body is its own (the real
robot's measured surface), and the library's body model must stay conservative against it."""

import ast
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from nao_ik.geometry.collision import arm_capsules, clearance_batch, nearest_core, posture_body
from nao_ik.geometry.sweep import STEP, SWEEP_MARGIN
from nao_ik.kinematics.hand_pose import forward_pose
from nao_ik.model.arm import MIRROR_ANGLES, arm_model
from nao_ik.model.body import MARGIN as LIBRARY_MARGIN
from nao_ik.model.body import NAMES, STUB_MARGIN
from nao_ik.nn.data import random_configurations
from sim_stub import body_shapes
from sim_stub.body import STAND
from sim_stub.motion import StubMotion
from sim_stub.protection import BODY_PARTS, MARGIN, OTHER_ARM, arm_clearance, gaps, state
from sim_stub.shapes import (
    ARM_SHAPES,
    _point,
    arms_gap,
    capsules,
    hand_point,
    head_frame,
    knee_point,
    segment_distance,
    thigh_frame,
)

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
    """A configuration deep in the torso (by the library's model: its deepest of a seeded sample) that the joint
    motion from the stub's stand posture meets."""
    m = arm_model(arm)
    q = random_configurations(m, 3000, np.random.default_rng(4), 0.0)
    dist, part = clearance_batch(m, q)
    return q[np.argmin(np.where(part == NAMES.index("torso"), dist, np.inf))].tolist()


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
#: motion from there takes the forearm through the torso (both more than 10 mm clear of the body).
CROSSING_START = [1.864, 0.259, 1.065, -1.446, 0.0]
CROSSING_GOAL = [0.061, -0.05, -0.738, -1.252, 0.0]


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
    """A blocking command into the body returns (the protection holds the arm, or bends it along the body short of
    the command, for at most twice the motion's time and a second): it does not wait for an arrival that never
    comes."""
    names = _names("LArm")
    m, clock = _stub("smooth")
    m.angleInterpolationWithSpeed(names, _into_the_body("LArm"), 0.5)
    assert m.getCollisionStops() and clock.t < 10.0
    assert m.getAngles(names, True) != m.getTargets(names)  # short of the command


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
    assert radii == {"upper arm": 0.0305, "elbow": 0.020, "forearm": 0.022, "hand": 0.030, "shoulder cap": 0.0506}
    # The upper arm's mesh lies along an axis turned toward the arm's outside, as the elbow is (+y on the left).
    _, _, start, end, _ = ARM_SHAPES[0]
    assert math.atan2(end[1] - start[1], end[0] - start[0]) == pytest.approx(0.15)
    assert start[0] < 0.0 < 0.096 < end[0] < 0.105
    stand = {a: [STAND[n] for n in _names(a)] for a in ("LArm", "RArm")}
    assert 0.05 < arms_gap(stand["LArm"], stand["RArm"]) < 0.30  # standing: the arms hang apart
    assert arms_gap(stand["LArm"], _mirror(stand["LArm"])) == pytest.approx(arms_gap(stand["LArm"], stand["RArm"]))


def test_the_demo_reaches_trip_no_protection(awake):
    """The demo's targets (both arms), reached with the default method and a Jacobian one at full speed: the
    stub records no stop."""
    from nao_ik.tools.demo import TARGETS

    awake.ik.setSpeed(1.0)
    for method in ("analytic", "dls"):
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
    # Planned whole, a path the body cuts is refused unless jumps are allowed: allowed, it is sent to its end or
    # to where the stream's check stops it.
    r = awake.ik.trackPathWithOptions(arm, path, {"method": "analytic", "allowJumps": True})
    assert r["sent"] == len(path) or (r["sent"] >= 1 and r["stopped"].startswith(("collision", "motion"))), r
    awake.wait_still(list(arm_model(arm).names))
    assert awake.stub.getCollisionStops() == []


def _inside(point, part: str, posture=None) -> float:
    """How far ``point`` lies outside ``part`` of the stub's body (negative: inside), metres: its distance to the
    part's shapes, as the stub measures an arm's."""
    p = tuple(float(v) for v in point)
    return min(body_shapes._gap((p, p, 0.0), s) for s in body_shapes.body(posture) if BODY_PARTS[s.part] == part)


def test_the_stubs_body_holds_the_measured_surface():
    """The stub's body holds the real robot's surface where NAO_ARM.md ("The real robot's shape") gives explicit
    numbers, by distances in the stub's own shapes; head and legs by the stub's own kinematics."""
    mm = 0.001
    # Chest front at the sternum x = 56-58 (z 20-100; the plate's vertices: 55.1 at z 25, 58.3 at z 69, 52 at
    # z 90), back x = -52.5 (the back plate's vertices: z 27.7 to 85.4).
    assert all(_inside((56 * mm, 0.0, z * mm), "torso") <= 0.0 for z in range(25, 91))
    assert all(_inside((58 * mm, 0.0, z * mm), "torso") <= 0.0 for z in range(30, 86))
    assert all(_inside((-52.5 * mm, 0.0, z * mm), "torso") <= 0.0 for z in range(28, 86))
    # Waist (z -60..0) half-width 36-48 (the mesh: 47.7 at z -29, 36.5 at z -41, narrowing to 24 at z -58).
    for side in (1.0, -1.0):
        assert all(_inside((0.0, side * 36 * mm, z * mm), "torso") <= 0.0 for z in range(-50, 1))
        assert all(_inside((0.0, side * 48 * mm, z * mm), "torso") <= 0.0 for z in range(-35, 1))
        # The shoulder housing sticks out up to 29 mm beyond the plain torso capsule (radius 55), at the shoulder.
        assert _inside((0.0, side * 84 * mm, 100 * mm), "torso") <= 0.0
    # The torso primitive sphere r 37 at (0, 0, -20): its surface.
    n = 400
    k = np.arange(n) + 0.5
    polar, turn = np.arccos(1.0 - 2.0 * k / n), math.pi * (1.0 + math.sqrt(5.0)) * k
    ball = np.c_[np.cos(turn) * np.sin(polar), np.sin(turn) * np.sin(polar), np.cos(polar)] * 37 * mm
    assert max(_inside(p + (0.0, 0.0, -20 * mm), "torso") for p in ball) <= 0.0
    # Head: mesh width +-66.5 and the r 50 capsule across y, centred 181.5 (55 above the neck), at any yaw and
    # pitch; HeadPitch +0.51 moves the face about 27 mm forward.
    (ha, hb, hr) = body_shapes.HEAD
    for yaw, pitch in [(0.0, 0.0), (1.0, 0.4), (-2.0, -0.6)]:
        posture = {"HeadYaw": yaw, "HeadPitch": pitch}
        origin, rot = head_frame(yaw, pitch)
        for side in (1.0, -1.0):
            assert _inside(_point(origin, rot, 0.0, side * 66.5 * mm, 55 * mm), "head", posture) <= 0.0
    for end in ((0.0, -16.5 * mm, 55 * mm), (0.0, 16.5 * mm, 55 * mm)):  # the capsule within the stub's
        assert segment_distance(end, end, ha, hb) + 50 * mm <= hr
    origin, rot = head_frame(0.0, 0.51)
    assert _point(origin, rot, 0.0, 0.0, 55 * mm)[0] == pytest.approx(27 * mm, abs=1.5 * mm)
    # Knee radius 58-59 (the mesh's farthest point from the hip-knee line): the thigh reaches 58.5 from that line at
    # the knee, in some direction; the knee 100 below the hip.
    legs = {"LHipPitch": 0.0, "RHipPitch": 0.0}
    for leg, side in (("LLeg", 1.0), ("RLeg", -1.0)):
        origin, rot = thigh_frame(leg, 0.0, 0.0, 0.0)
        around = [_point(origin, rot, 58.5 * mm * math.cos(a), 58.5 * mm * math.sin(a), -100 * mm)
                  for a in np.radians(np.arange(0, 360, 5))]  # fmt: skip
        assert min(_inside(p, "thighs", legs) for p in around) <= 0.0
        assert knee_point(leg, 0.0, 0.0, 0.0) == pytest.approx((0.0, side * 0.050, -0.185))


def test_the_stubs_body_is_its_own():
    """The stub's protection and shapes import nothing of the library's body model or its distances."""
    for name in ("protection.py", "body_shapes.py", "shapes.py"):
        tree = ast.parse((Path(__file__).parents[3] / "sim_stub" / name).read_text())
        imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
        imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        assert not [m for m in imported if m.startswith("nao_ik")], (name, imported)


def test_the_box_distance_is_exact():
    """The segment-to-box distance against a dense sampling of the segment (the exact one is never more, and
    within the sampling's error)."""
    rng = np.random.default_rng(2)
    t = np.linspace(0.0, 1.0, 4001)[:, None]
    for _ in range(300):
        p, d, e = rng.normal(size=3) * 0.1, rng.normal(size=3) * 0.1, np.abs(rng.normal(size=3)) * 0.05
        if rng.random() < 0.3:
            d[rng.integers(3)] = 0.0
        got = body_shapes.segment_box_distance(tuple(p), tuple(d), tuple(e))
        x = np.maximum(np.abs(p + t * d) - e, 0.0)
        sampled = float(np.sqrt((x * x).sum(axis=1)).min())
        assert got <= sampled + 1e-12 and sampled - got < 1e-4


def test_the_head_and_legs_carry_their_shapes():
    """The head's shapes follow HeadYaw and HeadPitch, the thighs' HipPitch: a hand in front of the face comes
    within the protection's hold as the head pitches forward; a hand low in front nears the thigh as it rises."""
    face = [-0.5, -0.2, -1.8, -1.2, 0.0]  # the left hand in front of the face, 17 mm from it
    assert gaps("LArm", face, None)["head"] > 0.015 and state("LArm", face, None)[0] == "near"
    assert state("LArm", face, None, posture={"HeadPitch": 0.5})[:3:2] == ("collision", "head")
    assert gaps("LArm", face, None, posture={"HeadYaw": 1.5})["head"] > gaps("LArm", face, None)["head"]
    lap = [1.1, 0.15, -1.5, -0.5, 0.0]  # the left hand low in front of the hip, 42 mm above the thigh
    assert gaps("LArm", lap, None)["thighs"] > 0.04
    assert gaps("LArm", lap, None, posture={"LHipPitch": -1.4})["thighs"] < 0.02
    assert gaps("LArm", lap, None, posture={"RHipPitch": -1.4})["thighs"] > 0.04  # the other thigh


#: Head (HeadYaw, HeadPitch) and hip (LHipPitch, RHipPitch) postures of the comparison below.
HEADS = [(0.0, 0.0), (0.9, 0.45), (-1.3, -0.6)]
HIPS = [(-0.45, -0.45), (0.0, 0.0), (-0.85, -0.85), (-1.4, 0.4)]
#: Random arm configurations per arm and posture.
SAMPLES = 1500


@pytest.mark.parametrize("library_margin", [LIBRARY_MARGIN, SWEEP_MARGIN - STEP / 2], ids=["answers", "motions"])
def test_the_library_is_conservative_against_the_stub(library_margin):
    """Wherever the stub's shapes put an arm within its protection's margin of the body, the library's clearance
    (its body model at the same head and hip posture) is below the library's margin too: the library never
    answers a configuration the robot's protection would stop (the answers' margin), and never certifies a motion
    through one (what the motion check keeps everywhere: SWEEP_MARGIN at the postures it checks, less STEP / 2
    between them). Random configurations (seeded; WristYaw drawn too) at a few head and
    hip postures."""
    rng = np.random.default_rng(11)
    failures, near = [], 0
    for head in HEADS:
        for hips in HIPS:
            posture = {"HeadYaw": head[0], "HeadPitch": head[1], "LHipPitch": hips[0], "RHipPitch": hips[1]}
            for arm in ("LArm", "RArm"):
                model = arm_model(arm)
                q = random_configurations(model, SAMPLES, rng)
                q[:, 4] = rng.uniform(model.lower[4], model.upper[4], SAMPLES)
                library, part = clearance_batch(model, q, posture_body(hip_pitch=hips, head=head))
                for k, x in enumerate(q):
                    gap, where = arm_clearance(arm, x, posture)
                    if gap < MARGIN:
                        near += 1
                        if library[k] >= library_margin:
                            failures.append((gap, where, float(library[k]), NAMES[part[k]] if part[k] >= 0 else "-",
                                             arm, head, hips, [round(float(v), 3) for v in x]))  # fmt: skip
    assert near > 1000
    failures.sort()
    worst = "; ".join(
        f"{arm} head {head} hips {hips} q {x}: stub {where} {gap * 1000:.1f} mm, library {lib * 1000:.1f} mm ({lp})"
        for gap, where, lib, lp, arm, head, hips, x in failures[:5]
    )
    assert not failures, (
        f"{len(failures)} of {near} configurations within the stub's margin ({MARGIN * 1000:.0f} mm) are at least "
        f"the library's margin ({library_margin * 1000:.1f} mm) clear by the library's model; by stub part: "
        f"{dict(Counter(f[1] for f in failures))}; deepest: {worst}"
    )


def _sphere_points(n: int) -> np.ndarray:
    k = np.arange(n) + 0.5
    polar, turn = np.arccos(1.0 - 2.0 * k / n), math.pi * (1.0 + math.sqrt(5.0)) * k
    return np.c_[np.cos(turn) * np.sin(polar), np.sin(turn) * np.sin(polar), np.cos(polar)]


def _surface(shape, n: int = 9) -> np.ndarray:
    """Points on the surface of one of the stub's body shapes (FRAME_TORSO): its core's boundary (a box's faces on
    an n-grid, a capsule's axis) pushed out by the rounding in every direction, those on the surface kept."""
    ball = _sphere_points(200)
    if not shape.box:
        axis = np.asarray(shape.a) + np.linspace(0.0, 1.0, n)[:, None] * np.subtract(shape.b, shape.a)
        return (axis[:, None, :] + shape.radius * ball[None]).reshape(-1, 3)
    e = np.asarray(shape.b)
    grid = np.array(np.meshgrid(*[np.linspace(-x, x, n) for x in e])).reshape(3, -1).T
    grid = grid[(np.abs(np.abs(grid) - e) < 1e-12).any(axis=1)]
    pts = (grid[:, None, :] + shape.radius * ball[None]).reshape(-1, 3)
    pts = pts[np.abs(np.linalg.norm(np.maximum(np.abs(pts) - e, 0.0), axis=1) - shape.radius) < 1e-9]
    turn = np.eye(3) if shape.turn is None else np.reshape(shape.turn, (3, 3))
    return np.asarray(shape.a) + pts @ turn


def _outside(pts: np.ndarray, shapes) -> np.ndarray:
    """How far each point lies outside the library's shapes (negative: inside)."""
    near, radius = nearest_core(pts, shapes)
    return (np.linalg.norm(pts[:, None, :] - near, axis=2) - radius).min(axis=1)


@pytest.mark.parametrize(
    "posture",
    [
        {},
        {
            "LHipPitch": -1.2,
            "RHipPitch": 0.3,
            "LHipYawPitch": -0.6,
            "LHipRoll": 0.3,
            "RHipYawPitch": -0.6,
            "RHipRoll": -0.2,
            "HeadYaw": 1.0,
            "HeadPitch": 0.4,
        },
    ],
)
def test_the_librarys_shapes_hold_the_stubs(posture):
    """The library's body holds the stub's (which holds every vertex of the real robot's meshes), at the standing
    posture and with the legs and head turned: every point of every stub shape's surface lies inside the library's
    shapes; the stub's shoulder housings inside the library's shoulders (which go with each arm); and each of the
    stub's arm shapes inside the library's links at random postures, the shoulder cap in the library's shoulder.
    So the library's clearance is never more than the stub's, and the margins above hold wherever the stub's
    protection would act."""
    q = {**STAND, **posture}
    legs = (q["LHipYawPitch"], q["LHipRoll"], q["RHipYawPitch"], q["RHipRoll"])
    library = posture_body(hip_pitch=(q["LHipPitch"], q["RHipPitch"]), head=(q["HeadYaw"], q["HeadPitch"]), legs=legs)
    for k, shape in enumerate(body_shapes.body(posture)):
        pts = _surface(shape)
        if shape.side:  # a shoulder housing: the library's shoulder of that arm
            arm = arm_model("LArm" if shape.side > 0 else "RArm")
            assert _outside(pts, arm_capsules(arm, arm.neutral)[:1]).max() <= 1e-9, k
        else:
            assert _outside(pts, library).max() <= 1e-9, k
    rng = np.random.default_rng(4)
    for arm in ("LArm", "RArm"):
        model = arm_model(arm)
        for x in rng.uniform(model.lower, model.upper, (20, 5)):
            links = arm_capsules(model, x)
            for (name, *_), (a, b, r) in zip(ARM_SHAPES, capsules(arm, x)):
                axis = np.asarray(a) + np.linspace(0.0, 1.0, 9)[:, None] * np.subtract(b, a)
                pts = (axis[:, None, :] + r * _sphere_points(100)[None]).reshape(-1, 3)
                assert _outside(pts, links[:1] if name == "shoulder cap" else links[1:]).max() <= 1e-9, (arm, name)


def test_is_collision_over_qi(awake):
    assert awake.motion.isCollision("LArm") == awake.stub.isCollision("LArm") in ("none", "near", "collision")
    with pytest.raises(RuntimeError, match="LArm or RArm"):
        awake.motion.isCollision("Arms")
