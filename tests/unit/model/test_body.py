"""The arm never goes through the body: the body model, the distance function, and every method's answers."""

import numpy as np
import pytest

import nao_ik
from nao_ik.evidence.protocol import sample_targets
from nao_ik.geometry.collision import clearance, clearance_batch, link_points, nearest_core
from nao_ik.model.arm import ARMS, arm_model
from nao_ik.model.arm_data import HAND_OFFSET_Z
from nao_ik.model.body import BODY, LINKS, MARGIN, PARTS, STUB_MARGIN, corners, shape
from nao_ik.nn.data import random_configurations
from nao_ik.solvers import SOLVERS
from sim_stub.body import REST, STAND

#: Per arm: benchmark targets (FK of random in-limit configurations), a few hundred for the test's time.
TARGETS = 80
#: The hand's capsule runs along the forearm's axis; the hand point (a target) lies HAND_OFFSET_Z below it: the
#: capsule holds a ball of this radius around the hand point, and reaches at most HAND_OUT past it.
HAND_IN = LINKS[-1].radius - HAND_OFFSET_Z
HAND_OUT = LINKS[-1].radius + HAND_OFFSET_Z


def _part(part: str) -> tuple:
    return tuple(c for c in BODY if c.part == part)


def _inside(points: np.ndarray, part: str, extra: float = 0.0) -> np.ndarray:
    """(N,) True where a point lies inside a part's shapes grown by ``extra``."""
    near, radius = nearest_core(points, _part(part))
    return (np.linalg.norm(points[:, None, :] - near, axis=2) < radius + extra).any(axis=1)


@pytest.mark.parametrize("arm", ARMS)
def test_ordinary_postures_are_clear(arm):
    """Neutral, stretched forward (also rolled a quarter inward), raised (a little outward), and the stub's stand
    posture keep the margin; the rest posture (crouching, the hands on the thighs, as the real robot rests them: the
    simulated robot's shapes overlap there too) is within it: a start, never an answer. Stretched forward rolled
    half inward, the upper arm comes to 9 mm of the chest's side (fully inward 2.5 mm), and raised straight up
    (ShoulderRoll 0) to 2 mm of the head, by the robot's measured shapes (the stub's): those are within the margin."""
    m = arm_model(arm)
    s = -1.0 if m.is_right else 1.0
    inward = m.lower[1] if s > 0 else m.upper[1]
    straight = m.upper[3] if s > 0 else m.lower[3]
    postures = {
        "neutral": m.neutral,
        "forward": (0.0, 0.0, 0.0, straight, 0.0),
        "forward, rolled a quarter in": (0.0, 0.25 * inward, 0.0, straight, 0.0),
        "raised": (-1.5, s * 0.2, 0.0, straight, 0.0),
        "stand": [STAND[n] for n in m.names],
    }
    for name, q in postures.items():
        assert clearance(m, q).distance >= MARGIN, name
    within = {
        "rest": [REST[n] for n in m.names],
        "forward, rolled half in": (0.0, 0.5 * inward, 0.0, straight, 0.0),
        "forward, rolled in": (0.0, inward, 0.0, straight, 0.0),
        "raised up": (-1.5, 0.0, 0.0, straight, 0.0),
    }
    for name, q in within.items():
        assert clearance(m, q).distance < MARGIN, name


def _sampled_clearance(m, q: np.ndarray, shapes=BODY, n: int = 401) -> float:
    """The links' clearance to ``shapes`` by brute force (independent of the library's segment-to-segment and
    segment-to-box distances): each link's segment sampled at ``n`` points, each sample's exact distance to each
    shape's core (a point to a segment or a box: a clamp), the least minus the radii."""
    pts = link_points(m, q)
    t = np.linspace(0.0, 1.0, n)[:, None]
    best = np.inf
    for ln in LINKS:
        p, e = np.asarray(pts[ln.start], dtype=float), np.asarray(pts[ln.end], dtype=float)
        p = p + ln.skip * (e - p)
        link = p + t * (e - p)
        near, radius = nearest_core(link, shapes)
        best = min(best, float((np.linalg.norm(link[:, None, :] - near, axis=2) - radius).min()) - ln.radius)
    return best


def test_distance_functions_agree():
    """Scalar and batch forms give the same numbers; a brute-force sampling of the same capsules (independent
    code: the stub, with shapes of its own, is compared in test_stub_protection.py) agrees: the exact distance is
    never more than the sampled one, and within the sampling's error (0.5 mm) of it."""
    m = arm_model("LArm")
    q = random_configurations(m, 400, np.random.default_rng(3), 0.0)
    batch, part = clearance_batch(m, q)
    single = [clearance(m, x) for x in q]
    assert np.allclose(batch, [c.distance for c in single], atol=1e-12)
    assert [PARTS[p] if p >= 0 else "" for p in part] == [c.part for c in single]
    near = np.flatnonzero(batch < 0.04)[:40]
    sampled = np.array([_sampled_clearance(m, q[k]) for k in near])
    assert np.all(sampled >= batch[near] - 1e-12)
    assert np.all(sampled - batch[near] <= 5e-4)
    assert (batch < 0).any() and (batch > MARGIN).any()  # the sample has both


def test_a_hand_inside_a_part_is_caught():
    """A configuration whose hand point lies inside a part is a collision with that part (or a nearer one), by at
    least the hand's ball around it."""
    m = arm_model("LArm")
    q = random_configurations(m, 4000, np.random.default_rng(5), 0.0)
    hands = nao_ik.kinematics.chain.forward_batch(m, q)
    dist, _ = clearance_batch(m, q)
    for part in PARTS:
        inside = _inside(hands, part)
        assert inside.any(), part
        assert np.all(dist[inside] < -HAND_IN + 1e-12), part


@pytest.mark.parametrize("arm", ARMS)
def test_no_reached_answer_goes_through_the_body(arm):
    """The benchmark's targets, every method (batch, and single solves of the targets inside the body)."""
    m = arm_model(arm)
    targets = sample_targets(arm, TARGETS, seed=11)
    hands_in = np.zeros(len(targets), dtype=bool)
    for part in PARTS:
        hands_in |= _inside(targets, part)
    assert hands_in.sum() >= 3
    for method in SOLVERS:
        b = nao_ik.solve_batch(targets, arm, method)
        dist, _ = clearance_batch(m, b.angles)
        assert not np.any(b.reached & (dist < 0.0)), method
        if not SOLVERS[method].own_answer:
            assert np.all(dist >= MARGIN - 1e-9), method
        assert np.all(b.reason[b.reached] == ""), method
        assert not b.reached[hands_in].any(), method
        assert all(r.startswith("collision: ") for r in b.reason[hands_in]), method
    for t in targets[hands_in][:2]:
        for method in SOLVERS:
            s = nao_ik.solve(t, arm, method)
            assert not s.reached and s.reason.startswith("collision: "), (method, s.reason)
            if not SOLVERS[method].own_answer:  # the papers' approximations report it (the reason), no more
                assert clearance(m, s.angles).distance >= MARGIN - 1e-9, method


@pytest.mark.parametrize("part", ["torso", "head", "thighs"])
def test_just_outside_and_just_inside_the_margin(part):
    """A reachable target near a part's margin (the hand's ball HAND_IN + MARGIN) is not reached 4 mm nearer,
    inside it.

    The hips have no such pair: every point just outside their margin is within the torso's or a
    thigh's (the pelvis sits between them), see test_the_hips_are_shadowed_by_torso_and_thighs.
    """
    m = arm_model("LArm")
    hand_r = HAND_IN
    targets = sample_targets("LArm", 20000, seed=2)
    band = _inside(targets, part, hand_r + MARGIN + 0.003) & ~_inside(targets, part, hand_r + MARGIN + 0.001)
    band |= _inside(targets, part, HAND_OUT + MARGIN + 0.003) & ~_inside(targets, part, HAND_OUT + MARGIN + 0.001)
    tried = 0
    for t in targets[band][:40]:
        out = nao_ik.solve(t, m)
        if not out.reached:
            continue  # another link is in the way at every swivel: not this part's test
        # The same point moved toward the part, inside the margin of the hand's ball.
        gap = -_gap(t, part)
        inner = t + _toward(t, part) * (gap - hand_r - MARGIN + 0.002)
        assert _inside(inner[None], part, hand_r + MARGIN)[0]
        got = nao_ik.solve(inner, m)
        assert not got.reached and got.reason, (t, got.reason)
        assert clearance(m, got.angles).distance >= MARGIN - 1e-9
        tried += 1
        if tried == 2:
            break
    assert tried, f"no reachable target just outside the {part}'s margin"


def _gap(p: np.ndarray, part: str) -> float:
    """Minus the distance of p from a part's surface."""
    near, radius = nearest_core(p[None], _part(part))
    return -float((np.linalg.norm(p - near[0], axis=1) - radius).min())


def _toward(p: np.ndarray, part: str) -> np.ndarray:
    """The unit direction from p toward the nearest core point of a part (its nearest shape's)."""
    near, radius = nearest_core(p[None], _part(part))
    w = near[0] - p
    k = int((np.linalg.norm(w, axis=1) - radius).argmin())
    return w[k] / np.linalg.norm(w[k])


def test_unreachable_reasons():
    """Beyond the links' reach: out of reach; behind the shoulder within reach: joint limits; inside the head."""
    m = arm_model("LArm")
    far = nao_ik.solve([0.5, 0.3, 0.1], m)
    assert not far.reached and far.reason == "out of reach"
    behind = nao_ik.solve([-0.12, 0.12, 0.1], m)
    assert not behind.reached and behind.reason in ("joint limits", "out of reach")
    for s in (far, behind):
        assert clearance(m, s.angles).distance >= MARGIN - 1e-9
    assert nao_ik.solve([0.15, 0.12, 0.08], m).reason == ""


def test_without_a_body_the_limits_alone_decide():
    """A model with no body (``body=()``) answers through it, as before."""
    m = arm_model("LArm")
    targets = sample_targets("LArm", 400, seed=11)
    inside = _inside(targets, "torso")
    free = nao_ik.solve_batch(targets[inside], m._replace(body=()))
    assert free.reached.all()
    assert STUB_MARGIN < MARGIN


def test_near_the_hips_answers_keep_the_margin_and_inside_it_none_is_reached():
    """Targets just outside the hips' margin (the hand's far side) are answered clear of the body, reached or not
    (the waist is as narrow as the robot's: some are reached); just inside the hand's ball's margin, none is."""
    m = arm_model("LArm")
    targets = sample_targets("LArm", 20000, seed=2)
    band = _inside(targets, "hips", HAND_OUT + MARGIN + 0.003) & ~_inside(targets, "hips", HAND_OUT + MARGIN + 0.001)
    outer = nao_ik.solve_batch(targets[band][:20], m)
    assert band.any() and all(r == "" or r.startswith("collision: ") for r in outer.reason)
    assert np.all(clearance_batch(m, outer.angles)[0] >= MARGIN - 1e-9)
    inner = targets[_inside(targets, "hips", HAND_IN + MARGIN - 0.002)][:20]
    got = nao_ik.solve_batch(inner, m)
    assert len(inner) and not got.reached.any() and all(r.startswith("collision: ") for r in got.reason)


#: NAO's fingers in the wrist frame (NAO_ARM.md, "The real robot's shape", the Webots NAO's hand): two fingers'
#: bases at (69, +-13, -5) mm and the thumb's at (49, 0, -26), two 14 mm phalanges each, radius 5.5, each joint
#: bent 0.96 rad when the hand is closed. The fingers close toward the palm's side (-z, where the thumb is), the
#: thumb toward the fingers (+z).
FINGERS = (((0.069, 0.013, -0.005), 1.0), ((0.069, -0.013, -0.005), 1.0), ((0.049, 0.0, -0.026), -1.0))


@pytest.mark.parametrize("opening", np.linspace(0.0, 1.0, 11))
def test_the_hands_shape_holds_the_fingers_at_every_opening(opening):
    """The hand's capsule (wrist to HAND_REACH along the forearm's axis) contains every phalanx at every opening
    of the hand, so its shape need not read LHand/RHand: a closed hand is no larger (and what it holds is of a
    size nao-ik cannot know). The fingers' far ends, open, set HAND_REACH; closed, the fingers' curl sets how
    close to the radius they come."""
    from nao_ik.model.body_data import HAND_REACH, LINK_ROWS

    radius = dict((row[0], row[4]) for row in LINK_ROWS)["hand"]
    bend = 0.96 * (1.0 - opening)
    far = 0.0
    for base, down in FINGERS:
        p, angle = np.array(base), 0.0
        for joint in range(3):  # the base, the middle joint, the tip
            along = min(max(p[0], 0.0), HAND_REACH)  # the nearest point of the capsule's axis (x, from the wrist)
            far = max(far, float(np.linalg.norm(p - [along, 0.0, 0.0])) + 0.0055)
            if joint < 2:
                angle += down * bend
                p = p + 0.014 * np.array([np.cos(angle), 0.0, -np.sin(angle)])
    assert far <= radius, f"a phalanx reaches {1e3 * far:.1f} mm from the hand's axis at opening {opening:g}"


def test_the_thighs_and_hips_are_the_legs_turned_by_hip_yaw_pitch_and_hip_roll():
    """Another client may turn the legs (HipYawPitch, HipRoll): the service reads them, and the thighs' and
    pelvis's boxes turn with them about the hip joint as the simulated robot's own kinematics turn its shapes
    (its own code: HipYawPitch about (0, 1, -1) on the left, (0, 1, 1) on the right, then HipRoll about x,
    HipPitch about y): the same centres, sizes and axes, at random angles within the joints' ranges."""
    from nao_ik.model.body_data import body_rows
    from sim_stub import body_shapes

    rng = np.random.default_rng(5)
    for _ in range(100):
        pitch = rng.uniform(-1.5, 0.48, 2)
        yp = rng.uniform(-1.14, 0.74)  # one motor turns both HipYawPitch joints
        legs = (yp, rng.uniform(-0.38, 0.79), yp, rng.uniform(-0.79, 0.38))
        posture = {"LHipPitch": pitch[0], "RHipPitch": pitch[1], "LHipYawPitch": legs[0], "LHipRoll": legs[1],
                   "RHipYawPitch": legs[2], "RHipRoll": legs[3]}  # fmt: skip
        ours = [shape(row) for row in body_rows(*pitch, legs=legs) if row[0] in ("hips", "thighs")]
        stubs = [c for c in body_shapes.body(posture) if body_shapes.PARTS[c.part] in ("hips", "thighs")]
        assert len(ours) == len(stubs) == 4
        for c, st in zip(ours, stubs):
            assert np.allclose(corners(c), sorted_corners(st, corners(c)), atol=1e-12)


def sorted_corners(st, like) -> list:
    """The stub box ``st``'s eight core corners, each the one nearest the matching point of ``like``."""
    turn = np.eye(3) if st.turn is None else np.reshape(st.turn, (3, 3))
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
    pts = np.asarray(st.a) + (signs * st.b) @ turn
    return [pts[np.linalg.norm(pts - p, axis=1).argmin()] for p in np.asarray(like)]
