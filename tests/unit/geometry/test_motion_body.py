"""The motion to an answer never crosses the body: the sweep check, the safe sequence, the other arm, paths."""

import re
import time

import numpy as np
import pytest

import nao_ik
from nao_ik.geometry.collision import arm_capsules, clearance, clearance_batch, posture_body
from nao_ik.geometry.scalar.clearance import checker
from nao_ik.geometry.scalar.sweep import advance
from nao_ik.geometry.sweep import SWEEP_MARGIN, Motion, overshoot, plan, sweep, sweep_moving
from nao_ik.kinematics.chain import forward_batch
from nao_ik.model.arm import arm_model
from nao_ik.model.body import OTHER_ARM, STUB_MARGIN
from nao_ik.nn.data import random_configurations
from nao_ik.service.sensed import CYCLE, MAX_AGE
from sim_stub.shapes import arms_gap

#: A start with the forearm down beside the hip and a target in front of the chest (found by a search over
#: random postures): the direct setAngles motion to the answer takes the forearm through the torso.
CROSSING_START = [1.864, 0.259, 1.065, -1.446, 0.0]
CROSSING_TARGET = [0.125, -0.004, 0.156]


def test_the_motion_follows_setangles():
    """Each joint moves at its own speed: the postures along the motion, by summed joint change travelled."""
    m = arm_model("LArm")
    a, b = [0.5, 0.2, -1.0, -1.0, 0.3], [-0.5, 0.8, 0.4, -0.2, 0.3]
    path = Motion(m, a, b, 0.3)
    assert path.at(0.0) == a and np.allclose(path.at(path.length), b)
    speed = np.array([j.max_velocity for j in m.joints]) * 0.3
    for t in (0.05, 0.2, 0.4):  # a time: every joint moved min(|change|, speed t)
        q = np.array(a) + np.sign(np.subtract(b, a)) * np.minimum(np.abs(np.subtract(b, a)), speed * t)
        assert np.allclose(path.at(float(np.abs(q - a).sum())), q, atol=1e-12)
        assert path.travelled(t) == pytest.approx(float(np.abs(q - a).sum()), abs=1e-12)


def _profiles(m, a, b, rng, n=6):
    """Postures along motions from ``a`` to ``b`` under different setAngles profiles: constant speed per joint,
    synchronised (the straight line), and joints started and finished at random times (smooth or not)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    t = np.linspace(0.0, 1.0, 150)[:, None]
    out = [np.array([Motion(m, a, b, 0.5).at(s) for s in np.linspace(0.0, Motion(m, a, b, 0.5).length, 150)])]
    out.append(a + (b - a) * t)
    for _ in range(n):
        t0, t1 = np.sort(rng.uniform(0.0, 1.0, size=(2, 5)), axis=0)
        u = np.clip((t - t0) / np.maximum(t1 - t0, 1e-9), 0.0, 1.0)
        out.append(a + (b - a) * (3 * u**2 - 2 * u**3))  # each joint its own smooth timing
    return np.concatenate(out)


def test_a_certified_command_is_clear_under_every_profile():
    """Against 150 random motions between clear postures: every command the sweep certifies keeps SWEEP_MARGIN
    along linear, synchronised and randomly timed smooth motions and at random postures of its box; every
    motion whose linear profile comes below SWEEP_MARGIN is refused."""
    m = arm_model("LArm")
    rng = np.random.default_rng(11)
    q = random_configurations(m, 1200, rng, 0.0)
    q = q[clearance_batch(m, q)[0] >= 0.010]
    refused = 0
    for a, b in zip(q[:150], q[150:300]):
        got = sweep(m, a, b, 0.5)
        dense, _ = clearance_batch(m, _profiles(m, a, b, rng))
        assert not (dense[:150].min() < SWEEP_MARGIN and got.clear)  # the first 150: the constant-speed motion
        if got.clear:
            inside = rng.uniform(np.minimum(a, b), np.maximum(a, b), size=(200, 5))
            assert min(dense.min(), clearance_batch(m, inside)[0].min()) >= SWEEP_MARGIN - 1e-9
        else:
            refused += 1
    assert refused  # the sample has motions through the body


def test_a_move_the_constant_speed_check_passed_is_refused_or_split_when_a_profile_crosses_the_body():
    """The constant-speed model's check (the linear motion sampled) approves motions that a synchronised or
    smooth setAngles takes through the body: the box check refuses them, and the plan splits them into legs
    whose every profile is clear."""
    m = arm_model("LArm")
    rng = np.random.default_rng(21)
    q = random_configurations(m, 3000, rng, 0.0)
    q = q[clearance_batch(m, q)[0] >= 0.010]
    check = checker(m, m.body)
    found = 0
    for a, b in zip(q[:800], q[800:1600]):
        if not advance(Motion(m, a, b, 0.5), check)[0]:
            continue  # the old check refused it too
        dense, _ = clearance_batch(m, _profiles(m, a, b, rng))
        if dense.min() >= SWEEP_MARGIN:
            continue
        found += 1
        assert not sweep(m, a, b, 0.5).clear
        route = plan(m, a, b, 0.5)
        assert route.commands == [] or len(route.commands) > 1
        legs = list(zip([list(a)] + route.commands[:-1], route.commands))
        for k, (x, y) in enumerate(legs):
            assert sweep(m, x, y, 0.5, tolerance=0.01 if k else 0.0).clear
        if found >= 5:
            break
    assert found >= 3, found


def test_a_command_to_a_moving_arm_is_checked_wherever_it_may_be_overshoot_included():
    """sweep_moving: where it says clear, random postures anywhere between the arm's reading, where it was going
    (each joint up to its overshoot past it) and the new goal keep SWEEP_MARGIN; it refuses some."""
    m = arm_model("LArm")
    q = random_configurations(m, 1500, np.random.default_rng(12), 0.0)
    q = q[clearance_batch(m, q)[0] >= 0.010]
    short = q[:60] + np.random.default_rng(13).uniform(-0.15, 0.15, size=(60, 5))  # ways of about 0.4 rad
    short = np.clip(short, m.lower, m.upper)
    rng = np.random.default_rng(14)
    over = np.array(overshoot(m, 0.5))
    clear = refused = 0
    for a, b, g in zip(q[:40], short, q[100:140]):
        if clearance(m, b, m.body).distance < 0.010:
            continue
        got = sweep_moving(m, a, b, 0.5, g)
        if not got.clear:
            refused += 1
            continue
        clear += 1
        lo = np.minimum(np.minimum(a, b), g) - np.where(b < a, over, 0.0)
        hi = np.maximum(np.maximum(a, b), g) + np.where(b > a, over, 0.0)
        inside = np.clip(rng.uniform(lo, hi, size=(300, 5)), m.lower, m.upper)
        assert clearance_batch(m, inside)[0].min() >= SWEEP_MARGIN - 1e-9, (a, b, g)
    assert clear >= 10 and refused >= 1, (clear, refused)


def test_a_start_inside_one_part_lowers_the_margin_for_that_part_alone():
    """A left arm at rest whose posture lies inside the region where the right arm may still be on its way there
    (that region is larger than the arm): its command may move away from that region, but must still keep the
    margin from every other part. Here the move from that posture to a swung-out posture passes 3.5 mm inside
    the thighs' margin: refused, by the library and by the robot runtime. (A start's clearance from the whole
    body once lowered the margin for every part, and the simulated robot's protection stopped such a leg.)"""
    from nao_ik.robot.solve import motion

    left, right = arm_model("LArm"), arm_model("RArm")
    start = [1.2153927098066621, 0.2311447495077882, -0.47489990871836874, -1.080413651713311, 0.0]
    out = [1.6026084482529437, 0.35, -1.8493667969805472, -0.0349066, 0.0]
    goal = [0.42407554454817875, 0.9811750537017441, -1.3039472314998402, -1.0672156089958114, 0.0]
    reading, aim = [0.418, -0.117, 0.435, 0.042, 0.0], [0.786, -0.0259, -0.2726, 0.448, 0.0]
    body = posture_body(None, (right, reading), aim, 0.6)
    assert clearance(left, start, body).part == OTHER_ARM and clearance(left, start, body).distance < -0.05
    assert clearance(left, start, left.body).distance > SWEEP_MARGIN  # clear of the body without the other arm
    assert sweep(left, start, out, body=body).part == "thighs"  # not certified
    assert motion(left, start, out, body)[:1] == (False,)
    route = plan(left, start, goal, 0.2, body=body)  # it may still go: away from the region, the margin kept
    assert route.commands and route.commands[0] != out  # swung out from where it is first
    assert all(sweep(left, a, b, body=body, tolerance=0.01 if k else 0.0).clear
               for k, (a, b) in enumerate(zip([start] + route.commands[:-1], route.commands)))  # fmt: skip


def test_plan_goes_around_a_crossing():
    m = arm_model("LArm")
    sol = nao_ik.solve(CROSSING_TARGET, m, initial=CROSSING_START)
    assert sol.reached
    assert not sweep(m, CROSSING_START, sol.angles, 1.0).clear
    route = plan(m, CROSSING_START, sol.angles, 1.0)
    assert 2 <= len(route.commands) <= 3 and route.commands[-1] == list(sol.angles)
    legs = zip([CROSSING_START] + route.commands[:-1], route.commands)
    assert all(sweep(m, a, b, 1.0).clear for a, b in legs)


def _put(robot, names: list, angles: list) -> None:
    """Put the simulated arm at ``angles`` (the stub's protection off for the move), protection back on.

    The move is made behind the service's back (as another client's would be): the service sees it in its
    readings, which may be up to two control cycles old (MAX_AGE), so the helper waits that long after the
    arm stopped."""
    robot.stub.setCollisionProtectionEnabled("Arms", False)
    robot.motion.setAngles(names, angles, 1.0)
    robot.wait_still(names)
    time.sleep(MAX_AGE + CYCLE)
    robot.stub.setCollisionProtectionEnabled("Arms", True)
    robot.stub.clearRecordedCommands()


class _Sampled:
    """The simulated arm's sensed angles every 5 ms, on the stub's own clock (its commands' times), while the
    ``with`` block runs."""

    def __init__(self, robot, names: list):
        self.robot, self.names, self.seen = robot, names, []
        self.clock = robot.stub._timing[0]

    def __enter__(self):
        import threading

        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()

    def _watch(self) -> None:
        while not self.done.is_set():
            self.seen.append((self.clock(), self.robot.stub.getAngles(self.names, True)))
            time.sleep(0.005)

    def moving_away(self, when: float, aim: list) -> bool:
        """Whether at the stub's time ``when`` the arm was moving (over two control cycles) and farther than
        ARRIVED from ``aim``: a command then did not wait for the arm to stop at ``aim``."""
        from nao_ik.geometry.sweep import ARRIVED

        last = max((x for x in self.seen if x[0] <= when), key=lambda x: x[0])
        earlier = max((x for x in self.seen if x[0] <= last[0] - 2 * CYCLE), key=lambda x: x[0])
        moving = max(abs(x - y) for x, y in zip(last[1], earlier[1])) > 2e-3
        return moving and max(abs(x - y) for x, y in zip(last[1], aim)) > ARRIVED


def test_the_service_sends_the_safe_sequence(awake):
    """The constructed crossing over qi: the service swings the arm out first; the stub records no stop.
    Control: the direct command from the same start trips the stub's protection."""
    names = list(arm_model("LArm").names)
    _put(awake, names, CROSSING_START)
    awake.ik.setSpeed(1.0)
    r = awake.ik.reachToWithArm("LArm", *CROSSING_TARGET, "analytic")
    assert r["reached"] and r["commands"] >= 2
    awake.wait_still(names)
    assert awake.stub.getCollisionStops() == []
    assert len(awake.moves()) == r["commands"]
    assert np.allclose(awake.motion.getAngles(names, True), r["angles"], atol=1e-9)
    _put(awake, names, CROSSING_START)
    awake.motion.setAngles(names, r["angles"], 1.0)
    awake.wait_still(names)
    assert awake.stub.getCollisionStops()


def test_a_swung_out_sequence_goes_on_while_the_arm_moves(awake):
    """The constructed crossing at two speeds: each leg after the first is sent once it is certified from the rest
    of the arm's way to the via before it, and at least one while the arm still moves, far from that via
    (waiting until it stopped there would send only within ARRIVED of it, or still); the stub's protection
    stops nothing."""
    names = list(arm_model("LArm").names)
    early = []
    for speed in (1.0, 0.3):
        _put(awake, names, CROSSING_START)
        with _Sampled(awake, names) as arm:
            r = awake.ik.reachToWithSpeed("LArm", *CROSSING_TARGET, "analytic", speed)
            moves = awake.moves()
        assert r["reached"] and r["commands"] >= 2 and len(moves) == r["commands"]
        early += [arm.moving_away(command["time"], via) for via, command in zip(r["via"], moves[1:])]
        awake.wait_still(names, 30)
        assert np.allclose(awake.motion.getAngles(names, True), r["angles"], atol=1e-9)
    assert any(early), early
    assert awake.stub.getCollisionStops() == [] and awake.stub.getViolations() == []


def _needs_legs_but_another_goes_direct(model, count: int, seed: int) -> list:
    """(start, target) pairs, by the library: random clear starts and benchmark targets whose answer's motion
    needs legs while a sampled other solution of the target goes direct."""
    from nao_ik.evidence.protocol import sample_targets
    from nao_ik.geometry.sampled import clear_by_move

    rng = np.random.default_rng(seed + 1)  # not the targets' own configurations (sample_targets draws those)
    found = []
    for t in sample_targets(model.arm, 400, seed).tolist():
        q = random_configurations(model, 1, rng, 0.0)[0]
        if clearance(model, q.tolist(), model.body).distance < 0.02:
            continue
        sol = nao_ik.solve(t, model, initial=q.tolist())
        if sol.reached and not sweep(model, q.tolist(), list(sol.angles)).clear:
            if any(sweep(model, q.tolist(), x.tolist()).clear for x in clear_by_move(model, t, q)[:8]):
                found.append((q.tolist(), t))
                if len(found) == count:
                    break
    return found


def test_a_reach_whose_answer_needs_legs_goes_direct_to_another_solution(awake):
    """Where the method's answer would need legs (its joint-space box not clear of the body) and another exact
    solution of the target goes direct, that one is sent: one command, the hand on the target, the answer says
    so (otherSolution, its angles and error); the robot's protection stops nothing."""
    model = arm_model("LArm")
    names = list(model.names)
    awake.ik.setSpeed(1.0)
    other = 0
    for start, target in _needs_legs_but_another_goes_direct(model, 4, 5):
        _put(awake, names, start)
        before = len(awake.moves())
        r = awake.ik.reachToWithArm("LArm", *target, "analytic")
        sent = [m["angles"] for m in awake.moves()[before:]]
        assert r["reached"] and r["error"] < 1e-9 and sent == r["via"] + [r["angles"]], r
        if r["otherSolution"]:
            other += 1
            assert r["commands"] == 1 and r["via"] == [] and r["clamped"] == [], r
            assert np.linalg.norm(forward_batch(model, np.array([r["angles"]]))[0] - target) < 1e-9
            assert sweep(model, start, r["angles"]).clear
        awake.wait_still(names, 30)
    assert other, "no reach went to another solution"
    assert awake.stub.getCollisionStops() == [] and awake.stub.getViolations() == []


@pytest.mark.parametrize("call", ["reachToWithSpeed", "reachToPoseWithSpeed"])
def test_a_sequence_whose_arm_stays_short_of_its_via_ends_at_once_with_the_reason(awake, call):
    """The arm held where it is right after the first leg of a swung-out sequence (another client's command, as
    the robot's protection that bent it elsewhere and let go would leave it): the reach (of a position, of a
    pose) answers within a second, not reached, with where the arm stays, not when its budget runs out, and
    sends nothing more."""
    names = list(arm_model("LArm").names)
    _put(awake, names, CROSSING_START)
    goal = nao_ik.solve(CROSSING_TARGET, "LArm", initial=CROSSING_START).angles
    args = [*CROSSING_TARGET, "analytic"] if call == "reachToWithSpeed" else [nao_ik.forward_pose(goal, "LArm"), 63, ""]
    before = len(awake.moves())
    with awake.after_next_move(names) as held:
        t0 = time.monotonic()
        r = getattr(awake.ik, call)("LArm", *args, 0.3)
    took = time.monotonic() - t0
    assert not r["reached"] and r["moved"] and r["commands"] == 1, r
    assert re.fullmatch(
        r"the LArm stopped \d\.\d\d rad short of the posture it was sent to and stays there "
        r"\(isCollision: (none|near)\); nothing more sent",
        r["reason"],
    ), r["reason"]
    assert took < 2.0, took  # the call's budget is 10 s
    sent = [m["angles"] for m in awake.moves()[before:]]
    assert len(sent) == 2 and sent[1] == held[0]  # the first leg, then the hold: nothing more
    assert r["angles"] != sent[0]  # the leg sent was on the way to the answer
    assert awake.stub.getCollisionStops() == [] and awake.stub.getViolations() == []


#: A posture of the RArm reaching across to where the crossing's answer puts the LArm (its forearm 20 mm into it).
ACROSS = [-0.193, -0.577, 0.115, 1.453, 0.0]


def test_a_sequence_whose_goal_the_other_arm_takes_meanwhile_ends_with_what_was_sent(awake, mocker):
    """Another client sends the RArm to where the LArm is going once the LArm's first leg went: the reach answers
    not reached, with the leg sent and why (the robot has moved: the caller must learn what it was sent), and
    sends nothing more; the arms do not meet. The service's warning says so once, what was sent named once."""
    warned = mocker.spy(awake.service._engine.log, "warning")
    left, right = arm_model("LArm"), arm_model("RArm")
    names = list(left.names)
    _put(awake, names, CROSSING_START)
    goal = nao_ik.solve(CROSSING_TARGET, left, initial=CROSSING_START).angles
    assert clearance(left, goal, arm_capsules(right, ACROSS)).distance < 0.0  # the control: it is in the way
    before = len(awake.moves())
    with awake.after_next_move(list(right.names), ACROSS):
        r = awake.ik.reachToWithSpeed("LArm", *CROSSING_TARGET, "analytic", 0.1)
    assert not r["reached"] and r["moved"] and r["commands"] == 1 and len(r["via"]) == 1, r
    assert re.fullmatch(r"analytic for .*: collision: the other arm is now where the arm was going; nothing more "
                        r"sent", r["reason"]), r["reason"]  # fmt: skip
    assert [c.args for c in warned.call_args_list] == [("reach LArm stopped on its way", r["reason"])]
    sent = [m["angles"] for m in awake.moves()[before:]]
    assert sent == [r["via"][0], ACROSS]  # the leg the answer names, the other client's: nothing more
    awake.wait_still(names, 30)
    assert awake.stub.getCollisionStops() == [] and awake.stub.getViolations() == []


def test_a_point_at_whose_arm_stays_short_of_its_via_answers_not_pointed_with_what_was_sent(awake):
    """pointAt whose motion goes in legs from the crossing's start, the arm held after the first: the answer says
    not pointed, why, and the leg sent (not an error that hides that the arm moved)."""
    names = list(arm_model("LArm").names)
    _put(awake, names, CROSSING_START)
    before = len(awake.moves())
    with awake.after_next_move(names) as held:
        r = awake.ik.pointAtWithSpeed("LArm", 0.343, 0.138, 0.172, 0, 0.3)
    assert not r["pointed"] and r["moved"] and r["commands"] == 1 and len(r["via"]) == 1, r
    assert "stopped" in r["reason"] and r["reason"].endswith("nothing more sent"), r["reason"]
    assert [m["angles"] for m in awake.moves()[before:]] == [r["via"][0], held[0]]
    assert awake.stub.getCollisionStops() == [] and awake.stub.getViolations() == []


def test_a_path_whose_first_point_is_reached_in_legs_stopped_on_them_says_what_was_sent(awake):
    """trackPath whose first point is reached like a reach, in legs from the crossing's start, the arm held after
    the first: the answer says where it stopped and the leg sent, no point of the path sent."""
    model = arm_model("LArm")
    names = list(model.names)
    _put(awake, names, CROSSING_START)
    goal = nao_ik.solve(CROSSING_TARGET, model, initial=CROSSING_START).angles
    hand = nao_ik.forward(goal, model)
    points = [[float(x) for x in hand + [0.0, 0.0, 0.002 * k]] for k in range(5)]
    before = len(awake.moves())
    with awake.after_next_move(names) as held:
        r = awake.ik.trackPathWithSpeed("LArm", points, "analytic", 0.3)
    assert r["sent"] == 0 and len(r["via"]) == 1 and not r["completed"], r
    assert "stopped" in r["stopped"] and r["stopped"].endswith("nothing more sent"), r["stopped"]
    assert [m["angles"] for m in awake.moves()[before:]] == [r["via"][0], held[0]]
    assert awake.stub.getCollisionStops() == [] and awake.stub.getViolations() == []


def test_compute_angles_says_how_many_commands(awake):
    names = list(arm_model("LArm").names)
    _put(awake, names, CROSSING_START)
    assert awake.ik.computeAngles("LArm", *CROSSING_TARGET, "analytic")["commands"] >= 2
    _put(awake, names, list(nao_ik.solve([0.12, 0.12, 0.12], "LArm").angles))
    assert awake.ik.computeAngles("LArm", 0.12, 0.12, 0.15, "analytic")["commands"] == 1  # a short move in front
    assert awake.moves() == []


def test_the_other_arm_is_part_of_the_body(awake):
    """The right hand in front of the left chest: the left arm does not reach through it, and says why."""
    left, right = arm_model("LArm"), arm_model("RArm")
    q_right = list(nao_ik.solve([0.13, 0.03, 0.04], right).angles)
    _put(awake, list(right.names), q_right)
    target = [0.13, 0.05, 0.04]
    assert nao_ik.solve(target, left).reached  # without the other arm, reached (through it)
    before = len([m for m in awake.moves() if m["names"][0] == "LShoulderPitch"])
    try:
        r = awake.ik.reachToWithArm("LArm", *target, "analytic")
        assert not r["reached"] and r["reason"] == f"collision: {OTHER_ARM}"
    except RuntimeError as e:  # no certified way to the nearest clear pose either: refused, nothing sent
        assert "motion: the move crosses the other arm" in str(e) and "nothing sent" in str(e)
        assert len([m for m in awake.moves() if m["names"][0] == "LShoulderPitch"]) == before
    awake.wait_still(list(left.names))
    q_left = awake.motion.getAngles(list(left.names), True)
    body = posture_body(None, (right, awake.motion.getAngles(list(right.names), True)))
    assert clearance(left, q_left, body).distance >= STUB_MARGIN


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_a_path_into_the_torso_is_refused_or_followed_along_it(awake, arm):
    """trackPath toward the chest's middle: planned whole, the path is refused before anything moves (the points
    the body leaves unreachable, the jump named); allowed jumps, the hand follows the body's margin (until the
    stream's own check stops it), never inside, never across the middle, and the robot's protection stops
    nothing."""
    s = 1.0 if arm == "LArm" else -1.0
    path = [[0.09, float(s * y), 0.05] for y in np.linspace(0.16, -0.02, 25)]
    names = list(arm_model(arm).names)
    awake.ik.setSpeed(1.0)
    awake.ik.reachToWithArm(arm, *path[0], "analytic")
    awake.wait_still(names)
    sent = len(awake.moves())
    with pytest.raises(RuntimeError, match="point unreachable.*allow jumps"):
        awake.ik.trackPath(arm, path, "analytic")
    assert len(awake.moves()) == sent
    r = awake.ik.trackPathWithOptions(arm, path, {"allowJumps": True})
    awake.wait_still(names)
    assert r["planned"] and r["jumps"] and r["sent"] >= 1, r
    assert r["sent"] == len(path) or r["stopped"].startswith(("collision", "motion")), r
    assert awake.stub.getCollisionStops() == []
    hands = forward_batch(arm_model(arm), np.array(r["angles"]))
    assert np.all(s * hands[:, 1] > 0.0)  # never across the middle
    assert not r["completed"]
    assert clearance_batch(arm_model(arm), np.array(r["angles"]))[0].min() >= 0.010 - 1e-9
    # Slowed at its jumps: each jump sent like a reach once the arm is at the point before it, then waited for.
    awake.ik.reachToWithArm(arm, *path[0], "analytic")
    awake.wait_still(names)
    before = len(awake.moves())
    slow = awake.ik.trackPathWithOptions(arm, path, {"allowJumps": True, "slowAtJumps": True})
    awake.wait_still(names)
    assert slow["slowed"] and set(slow["slowed"]) <= {j for j, _ in slow["jumps"]}, slow
    # The answer names every command the robot received: a jump's legs before its point.
    legs = {v["point"]: v["via"] for v in slow["slowedVia"]}
    listed = slow["via"] + [q for k, p in enumerate(slow["angles"]) for q in legs.get(k, []) + [p]]
    listed += legs.get(len(slow["angles"]), [])
    assert [m["angles"] for m in awake.moves()[before:]] == listed, slow
    assert awake.stub.getCollisionStops() == [] and awake.stub.getViolations() == []


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_poses_through_the_body_are_not_reached(arm):
    """Full poses of random configurations: an answer within the body's margin is never `reached`; the poses of
    configurations inside it are answered with the part's name."""
    model = arm_model(arm)
    q = random_configurations(model, 600, np.random.default_rng(21), 0.0)
    q[:, 4] = np.random.default_rng(22).uniform(model.lower[4], model.upper[4], len(q))
    dist, _ = clearance_batch(model, q)
    inside = 0
    for x, d in zip(q, dist):
        sol = nao_ik.solve_pose(nao_ik.forward_pose(x, arm), arm, 63)
        gap = clearance(model, sol.angles, model.body).distance
        assert not sol.reached or gap >= 0.010 - 1e-9
        if d < -0.01:  # deep inside: no clear configuration has this pose
            inside += 1
            assert not sol.reached and sol.reason.startswith("collision: ")
    assert inside >= 10


@pytest.mark.parametrize("speed", [0.2, 0.05])
def test_a_path_from_behind_the_torso_goes_around_it(awake, speed):
    """From behind the torso, a path whose first point is the swung-out posture a reach would use and whose
    second is in front of the chest: the first point is reached like a reach and waited for, so the arm never
    heads for the second from behind the torso. The robot's protection stops nothing."""
    m = arm_model("LArm")
    names = list(m.names)
    _put(awake, names, CROSSING_START)
    sol = nao_ik.solve(CROSSING_TARGET, m, initial=CROSSING_START)
    first = plan(m, CROSSING_START, sol.angles, 1.0).commands[0]
    path = [nao_ik.forward(first, "LArm").tolist(), CROSSING_TARGET]
    r = awake.ik.trackPathWithSpeed("LArm", path, "analytic", speed)
    awake.wait_still(names, timeout=60)
    assert r["completed"] or r["stopped"].startswith(("collision", "motion")), r
    assert r["sent"] >= 1, r  # the way around was taken, not merely refused
    assert awake.stub.getCollisionStops() == [] and awake.stub.getViolations() == []


def test_two_arms_sent_at_once_toward_one_point_do_not_meet(awake):
    """Both arms out to the sides, then the right hand and at once the left hand sent to the same point in front
    of the chest: the second is refused or stopped on its way, and along the whole motion (sensed every cycle) the
    arms keep the stub's margin from each other, measured on the stub's own shapes of the arms (the robot's)."""
    left, right = arm_model("LArm"), arm_model("RArm")
    for arm, y in (("LArm", 0.15), ("RArm", -0.15)):
        awake.ik.reachToWithArm(arm, 0.10, y, 0.0, "")
    awake.wait_still(list(left.names) + list(right.names))
    answers, closest = [], []

    def sample():
        while len(answers) < 2:
            q = awake.motion.getAngles(list(left.names) + list(right.names), True)
            closest.append(arms_gap(q[:5], q[5:]))
            time.sleep(CYCLE)

    import threading

    watcher = threading.Thread(target=sample)
    watcher.start()
    futures = [awake.ik.reachToWithArm(arm, 0.12, 0.0, 0.05, "", _async=True) for arm in ("RArm", "LArm")]
    for f in futures:
        try:
            answers.append(f.value(20000))
        except RuntimeError as e:
            answers.append(str(e))
    watcher.join()
    assert any(isinstance(a, dict) and a["moved"] for a in answers), answers  # an arm did go there
    awake.wait_still(list(left.names) + list(right.names))
    q = awake.motion.getAngles(list(left.names) + list(right.names), True)
    closest.append(arms_gap(q[:5], q[5:]))
    assert min(closest) >= STUB_MARGIN, (min(closest), answers)
    assert clearance(left, q[:5], arm_capsules(right, q[5:])).distance >= 0.0  # nor do the library's (thicker) shapes
    assert awake.stub.getCollisionStops() == []


def test_a_sagging_arm_arrives_at_its_swung_out_posture(awake):
    """Under load a real joint rests short of its command (Smart Stiffness): the stub's sag puts each sensed
    angle 15-30 mrad off. The sequence still goes on at each via (the next leg checked from where the arm
    stopped), where a 10 mrad arrival test waited out the call's budget."""
    names = list(arm_model("LArm").names)
    _put(awake, names, CROSSING_START)
    awake.stub._configure(sag=0.03)
    awake.ik.setSpeed(1.0)
    t0 = time.monotonic()
    r = awake.ik.reachToWithArm("LArm", *CROSSING_TARGET, "analytic")
    assert r["reached"] and r["commands"] >= 2 and r["reason"] == ""
    assert time.monotonic() - t0 < 3.0
    time.sleep(1.0)
    assert awake.stub.getCollisionStops() == [] and awake.stub.getViolations() == []
    assert np.allclose(awake.motion.getAngles(names, False), r["angles"], atol=1e-9)


def test_an_arm_the_robot_stopped_on_its_way_is_reported_as_the_robots_protection(mocker):
    """A unit test of the wait at a via: the arm stands still far from it and ALMotion's isCollision says
    "collision" - the answer says the robot's protection stopped it, not that time ran out; "none" - the answer
    says where the arm stays, at once (once ALMotion has taken every command to the arm)."""
    from nao_ik.service.arm_watch import GIVE_UP
    from nao_ik.service.engine import Engine
    from nao_ik.service.jobs import Job
    from nao_ik.service.motions import ROBOT_PROTECTION, RobotProtection, StoppedOnItsWay, StoppedShort

    ik = Engine.__new__(Engine)
    ik.sensed = mocker.Mock()
    ik.sensed.read.return_value = ([0.0, 0.3, -1.0, -0.5, 0.0], 0.0)
    ik.motion = mocker.Mock(timeout=1.0)
    ik._sent = {"LArm": mocker.Mock()}
    ik._sent["LArm"].answered.return_value = True
    ik.motion.call.return_value = "collision"
    with pytest.raises(RobotProtection, match=ROBOT_PROTECTION):
        ik.arrive(arm_model("LArm"), [0.5, 0.3, -1.0, -0.5, 0.0], None, time.monotonic() + 5.0, 0.2)
    ik.motion.call.assert_called_with("isCollision", "LArm", budget=mocker.ANY)
    ik.motion.call.return_value = "none"  # stopped, not by the robot's protection: it stays there, said at once
    for job in (None, Job("LArm")):
        t0 = time.monotonic()
        with pytest.raises(StoppedShort, match=r"LArm stopped 0\.50 rad short .* \(isCollision: none\); nothing mo"):
            ik.arrive(arm_model("LArm"), [0.5, 0.3, -1.0, -0.5, 0.0], job, time.monotonic() + 5.0, 0.2)
        assert GIVE_UP <= time.monotonic() - t0 < 2.0
    # A command ALMotion has not taken yet may still set the arm off: the budget decides.
    ik._sent["LArm"].answered.return_value = False
    with pytest.raises(StoppedOnItsWay, match="did not reach its swung-out posture within the budget"):
        ik.arrive(arm_model("LArm"), [0.5, 0.3, -1.0, -0.5, 0.0], None, time.monotonic() + 0.5, 0.2)


#: The left arm at rest at the first posture, sent at full speed to the second and, 0.3 s later, back to where it
#: is then (the joints moving toward the second reverse: under a smooth profile each brakes first, going on toward
#: it), and at once to the third: the third's motion, checked from the arm's way to the command it was sent last
#: alone, took the hand into the head.
REVERSED = ([-0.7154, 0.8833, -0.4932, -0.1415, 0.0], [-0.3399, -0.1412, 1.8729, -0.3524, 0.0],
            [-1.7232, 0.6626, -0.8967, -0.1164, 0.0])  # fmt: skip


def test_a_command_after_a_reversal_is_checked_from_where_the_arm_may_still_brake_to(awake):
    """A joint retargeted mid-move goes on braking toward the goal it had (for up to its fraction x BRAKE s after
    ALMotion took the new command): a command sent then is checked from every goal the arm may still head for.
    REVERSED's third reach waits (or goes by another way); the robot's protection stops nothing."""
    rest, first, third = REVERSED
    names = list(arm_model("LArm").names)
    awake.ik.setSpeed(0.5)
    assert awake.ik.reachToPose("LArm", nao_ik.forward_pose(rest, "LArm"), 63, "")["moved"]
    awake.wait_still(names, 10)
    t0 = time.monotonic()
    assert awake.ik.reachToPoseWithSpeed("LArm", nao_ik.forward_pose(first, "LArm"), 63, "", 1.0)["commands"] == 1
    time.sleep(max(0.0, t0 + 0.3 - time.monotonic()))
    back = awake.motion.getAngles(names, True)
    assert awake.ik.reachToPoseWithSpeed("LArm", nao_ik.forward_pose(back, "LArm"), 63, "", 1.0)["moved"]
    got = awake.ik.reachToPoseWithSpeed("LArm", nao_ik.forward_pose(third, "LArm"), 63, "", 1.0)
    assert got["moved"], got
    awake.wait_still(names, 10)
    assert awake.stub.getCollisionStops() == [] and awake.stub.getViolations() == []


def test_a_reach_behind_a_moving_arm_goes_once_certified_from_the_rest_of_its_way(awake, monkeypatch):
    """A reach sent while the arm is on its way to the last one, whose motion is not certified from all of that
    way: the service waits, and sends as soon as the motion is certified from where the arm is on the rest of
    its way, overshoot included: while the arm still moves, far from its last command (waiting until it stopped
    there would send only within ARRIVED of it, or still); nothing enters the robot's protection margin. The
    wait itself: no other solution of the target tried first (with them these reaches go direct at once)."""
    from nao_ik.evidence.protocol import sample_targets
    from nao_ik.geometry import sweep as sweep_module

    monkeypatch.setattr(sweep_module, "ALTERNATIVES", 0)

    model = arm_model("LArm")
    names = list(model.names)
    targets = [t for t in sample_targets("LArm", 200, 3).tolist() if nao_ik.solve(t, model).reached]
    early = []
    # Under every profile one of the four meets a wait. On a loaded machine the arm may stop before the second reach
    # is certified (then it goes from where the arm stopped, safe but not the behaviour shown): up to three rounds.
    for _ in range(3):
        for a, b, c in ((17, 18, 24), (67, 68, 74), (13, 14, 20), (42, 43, 49)):
            awake.ik.reachToWithSpeed("LArm", *targets[a], "analytic", 1.0)
            awake.wait_still(names, 30)
            with _Sampled(awake, names) as arm:
                first = awake.ik.reachToWithSpeed("LArm", *targets[b], "analytic", 0.3)
                time.sleep(0.05)
                second = awake.ik.reachToWithSpeed("LArm", *targets[c], "analytic", 0.3)
                sent = awake.moves()[-1]["time"]  # the second reach's command
            if second["commands"] == 1 and second["waitMs"] > 0.0:
                early.append(arm.moving_away(sent, first["angles"]))
            awake.wait_still(names, 30)
        if any(early):
            break
    assert any(early), early
    assert awake.stub.getCollisionStops() == [] and awake.stub.getViolations() == []


def test_first_direct_skips_postures_in_the_body_and_those_not_certified():
    """:func:`first_direct` on (a posture within the body's margin, the answer whose motion needs legs, a posture
    whose motion is certified): the third; with two tried at most, none."""
    from nao_ik.geometry.sampled import clear_by_move
    from nao_ik.geometry.sweep import first_direct

    model = arm_model("LArm")
    (start, target), *_ = _needs_legs_but_another_goes_direct(model, 1, 5)
    legs = list(nao_ik.solve(target, model, initial=start).angles)
    good = next(x.tolist() for x in clear_by_move(model, target, start) if sweep(model, start, x.tolist()).clear)
    rng = np.random.default_rng(2)
    inside = next(q.tolist() for q in random_configurations(model, 500, rng, 0.0)
                  if clearance(model, q.tolist(), model.body).distance < 0.0)  # fmt: skip
    assert first_direct(model, start, [inside, legs, good], 1.0) == pytest.approx(good, abs=1e-12)
    assert first_direct(model, start, [inside, legs, good], 1.0, most=2) is None
    assert first_direct(model, start, iter([]), 1.0) is None


def _arms_at(awake, right: tuple) -> tuple:
    """The LArm in front of the chest on the left and the RArm at ``right``, both still, at full speed: (the two
    models, the ten joint names)."""
    left, right_arm = arm_model("LArm"), arm_model("RArm")
    names = list(left.names) + list(right_arm.names)
    awake.ik.setSpeed(1.0)
    awake.ik.reachToWithArm("LArm", 0.18, 0.07, 0.12, "")
    awake.ik.reachToWithArm("RArm", *right, "")
    awake.wait_still(names)
    return left, right_arm, names


def _never_met(awake, names: list) -> None:
    """Once both arms are still: the stub stopped nothing and saw no bad command, and the arms keep its margin."""
    awake.wait_still(names)
    assert awake.stub.getCollisionStops() == [] and awake.stub.getViolations() == []
    q = awake.motion.getAngles(names, True)
    assert arms_gap(q[:5], q[5:]) >= STUB_MARGIN


def test_a_command_planned_before_the_other_arm_went_is_checked_again(awake, monkeypatch):
    """The LArm's reach is planned (against the RArm at its side) and held just before it sends; meanwhile
    another client sends the RArm to where the LArm is going. When the LArm's command goes on, it is checked
    again against the RArm's command and refused, nothing sent; the arms never meet (checked against the body
    read when planning, it would go into the RArm)."""
    import threading

    from nao_ik.service import engine

    left, right, names = _arms_at(awake, (0.12, -0.20, 0.0))
    end = time.monotonic() + 5  # a direct move (the premise), once the service's readings show both arms arrived
    while awake.ik.computeAngles("LArm", 0.18, 0.03, 0.12, "")["commands"] != 1:
        assert time.monotonic() < end, "the LArm's move is not direct"
        time.sleep(CYCLE)
    send, held, go = engine.Engine._send_checked, threading.Event(), threading.Event()

    def hold_left(self, model, *args):
        if model.arm == "LArm":
            held.set()
            go.wait(10)
        return send(self, model, *args)

    monkeypatch.setattr(engine.Engine, "_send_checked", hold_left)
    before = len(awake.moves())
    reach = awake.ik.reachToWithArm("LArm", 0.18, 0.03, 0.12, "", _async=True)
    assert held.wait(10)
    r = awake.ik.reachToWithArm("RArm", 0.18, -0.04, 0.12, "")
    assert r["reached"] and r["moved"], r
    awake.wait_still(list(right.names))
    go.set()
    with pytest.raises(
        RuntimeError, match="collision: the other arm was just sent where this motion would meet it; nothing sent"
    ):
        reach.value(20000)
    _never_met(awake, names)
    assert not [m for m in awake.moves()[before:] if m["names"] == list(left.names)]


def test_a_reach_while_the_other_arm_streams_a_path_is_checked_against_the_rest_of_the_path(awake):
    """The RArm streams a path across the chest toward the middle; while its first points go, the LArm is sent
    to where the path's last points take the RArm. The reach is checked against the RArm anywhere on the rest of
    its path, not only on its way to its last point: it waits for the path, is refused, or goes to the nearest
    pose clear of the rest of the path (short of its target), and the arms never meet (checked against the
    RArm's way to its latest point alone, the LArm goes to its target and the path runs into it)."""
    left, right, names = _arms_at(awake, (0.18, -0.16, 0.12))
    points = [[0.18, float(y), 0.12] for y in np.linspace(-0.16, -0.04, 60)]
    before = len(awake.moves())
    path = awake.ik.trackPathWithSpeed("RArm", points, "analytic", 0.3, _async=True)
    end = time.monotonic() + 5
    while len([m for m in awake.moves()[before:] if m["names"] == list(right.names)]) < 3:
        assert time.monotonic() < end, "the path did not start"
        time.sleep(0.005)
    try:
        r = awake.ik.reachToWithArm("LArm", 0.18, 0.015, 0.12, "")
    except RuntimeError as e:
        r = {"moved": False}
        assert "collision" in str(e), e
    answer = path.value(20000)
    _never_met(awake, names)
    assert answer["stopped"] == "", answer
    # It went at once to its target: the path's rest was not its body.
    assert not r["moved"] or r["waitMs"] > 0.0 or not r["reached"], r


def test_a_path_checked_before_the_other_arm_went_is_checked_again(awake, monkeypatch):
    """The RArm's path across the chest is checked (against the LArm at its side) and held just before it is
    promised to the other arm's checks; meanwhile another client sends the LArm to where the path ends. The path
    is checked again from the body now: it stops short of the LArm (or is refused), and the arms never meet."""
    import threading

    from nao_ik.service import engine

    left, right, names = _arms_at(awake, (0.18, -0.16, 0.12))
    promise, held, go = engine.Engine.promise, threading.Event(), threading.Event()

    def hold_right(self, arm, *args):
        if arm == "RArm" and not held.is_set():
            held.set()
            go.wait(10)
        return promise(self, arm, *args)

    monkeypatch.setattr(engine.Engine, "promise", hold_right)
    points = [[0.18, float(y), 0.12] for y in np.linspace(-0.16, -0.04, 60)]
    path = awake.ik.trackPathWithSpeed("RArm", points, "analytic", 0.3, _async=True)
    assert held.wait(10)
    r = awake.ik.reachToWithArm("LArm", 0.18, 0.015, 0.12, "")
    assert r["reached"] and r["moved"], r
    awake.wait_still(list(left.names))
    go.set()
    try:
        answer = path.value(20000)
    except RuntimeError as e:
        answer = {"stopped": str(e)}
    _never_met(awake, names)
    assert "collision" in answer["stopped"], answer
