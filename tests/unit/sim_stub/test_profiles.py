"""How the stub's joints move: the linear, smooth and synchronised profiles, the control cycle, sag."""

import math

import numpy as np
import pytest

from sim_stub.body import CHAINS, JOINTS, STAND
from sim_stub.motion import MAX_SAG, StubMotion
from sim_stub.profiles import (
    DEFAULT_PROFILE,
    FULL_SPEED_RAMP,
    PROFILE_ENV,
    limit_acceleration,
    ramp_time,
)

DT = 0.02
HEAD = "HeadYaw"  # 8.27 rad/s, no collision protection on the head
LEFT = list(CHAINS["LArm"][:5])


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, dt: float) -> None:
        self.now += dt


def _stub(profile: str, **options) -> tuple[StubMotion, FakeClock]:
    clock = FakeClock()
    m = StubMotion(clock=clock, sleep=clock.sleep, profile=profile, **options)
    m.wakeUp()
    return m, clock


def _run(m: StubMotion, clock: FakeClock, names: list, cycles: int, dt: float = DT) -> np.ndarray:
    """The sensed angles of ``names`` now and after each of the next control cycles: (cycles + 1, len(names)).

    Read half a cycle after each cycle's end (the clock's sums of 0.02 s drift off the stub's by rounding).
    """
    out = [m.getAngles(names, True)]
    clock.now += dt / 2.0
    for _ in range(cycles):
        clock.now += dt
        out.append(m.getAngles(names, True))
    clock.now -= dt / 2.0
    return np.array(out)


def _arrival(path: np.ndarray, target: float) -> int:
    """The first cycle from which the joint stays at target."""
    off = np.flatnonzero(path != target)
    return int(off[-1]) + 1 if off.size else 0


def test_the_default_profile_and_the_environment(monkeypatch):
    monkeypatch.delenv(PROFILE_ENV, raising=False)
    assert StubMotion().profile == DEFAULT_PROFILE
    monkeypatch.setenv(PROFILE_ENV, "smooth")
    assert StubMotion().profile == "smooth"
    assert StubMotion(profile="synchronised").profile == "synchronised"  # an explicit profile wins
    monkeypatch.setenv(PROFILE_ENV, "bouncy")
    with pytest.raises(ValueError, match="unknown motion profile 'bouncy'"):
        StubMotion()
    with pytest.raises(ValueError, match="control cycle"):
        StubMotion(profile="linear", cycle=0.5)
    with pytest.raises(ValueError, match="sag"):
        StubMotion(profile="linear", sag=MAX_SAG * 2)


def test_linear_moves_at_constant_speed_and_stops_at_once():
    m, clock = _stub("linear")
    start = STAND[HEAD]
    m.setAngles(HEAD, start + 0.5, 0.2)
    path = _run(m, clock, [HEAD], 40)[:, 0]
    v = np.diff(path) / DT
    speed = 0.2 * JOINTS[HEAD].max_velocity
    moving = v[v > 0]
    assert moving[0] == pytest.approx(speed) and moving[:-1] == pytest.approx(speed)  # full speed from the first cycle
    assert path[-1] == start + 0.5 and _arrival(path, start + 0.5) * DT == pytest.approx(0.5 / speed, abs=DT)


@pytest.mark.parametrize("fraction", [0.1, 0.2, 0.5, 1.0])
def test_smooth_velocity_is_continuous_and_peaks_at_the_fraction(fraction):
    """Every cycle the velocity changes by at most the joint's limit acceleration x one cycle, from rest to
    rest; it never exceeds fractionMaxSpeed x the maximum speed, and reaches it on a long enough move."""
    m, clock = _stub("smooth")
    start = STAND[HEAD]
    speed = fraction * JOINTS[HEAD].max_velocity
    accel = limit_acceleration(JOINTS[HEAD].max_velocity)
    distance = 2.0  # long enough to reach the peak at any fraction (8.27^2 / 11.0 = 6.2 rad at 1.0: not there)
    distance = min(distance, 2.0 * (JOINTS[HEAD].upper - abs(start)) - 0.1)
    target = start + distance / 2.0
    m.setAngles(HEAD, target, fraction)
    path = _run(m, clock, [HEAD], 400)[:, 0]
    v = np.concatenate([[0.0], np.diff(path) / DT, [0.0]])
    assert np.abs(np.diff(v)).max() <= accel * DT * (1 + 1e-9)
    assert v.max() <= speed * (1 + 1e-9)
    d = target - start
    # The peak: fractionMaxSpeed x the maximum where the move is long enough to cruise (a trapezoid), else where
    # accelerating and braking meet halfway (a triangle: sqrt(d x accel)), within a cycle's change.
    assert v.max() == pytest.approx(min(speed, math.sqrt(d * accel)), abs=accel * DT)
    assert path[-1] == target and np.all(np.diff(path) >= 0.0)  # no overshoot from rest


def test_a_smooth_move_takes_about_one_and_a_half_times_the_constant_speed_time():
    """NAO_ARM.md: a setAngles move takes about 1.5x as long as at constant speed. The stub's acceleration
    is chosen for it at the library's default speed (0.2) over 0.5 rad; shorter or faster moves take longer,
    longer or slower ones less."""
    m, clock = _stub("smooth")
    start = STAND[HEAD]
    m.setAngles(HEAD, start + 0.5, 0.2)
    path = _run(m, clock, [HEAD], 100)[:, 0]
    constant = 0.5 / (0.2 * JOINTS[HEAD].max_velocity)
    took = _arrival(path, start + 0.5) * DT
    assert 1.4 <= took / constant <= 1.6
    trapezoid, _ = ramp_time(0.5, 0.2 * JOINTS[HEAD].max_velocity, limit_acceleration(JOINTS[HEAD].max_velocity))
    assert took == pytest.approx(trapezoid, abs=DT)
    assert FULL_SPEED_RAMP == pytest.approx(0.75)


def test_a_retarget_keeps_going_then_turns():
    """At 10 % speed, a joint sent back mid-move keeps going the old way for about 4 cycles (about 0.02 rad,
    NAO_ARM.md) before it turns, with a continuous velocity; the linear profile turns at once."""
    for profile, cycles, overshoot in (("smooth", (3, 5), (0.015, 0.035)), ("linear", (0, 0), (0.0, 0.0))):
        m, clock = _stub(profile)
        start = STAND[HEAD]
        m.setAngles(HEAD, start + 1.0, 0.1)
        _run(m, clock, [HEAD], 50)  # cruising by now
        turned_at = m.getAngles(HEAD, True)[0]
        m.setAngles(HEAD, start, 0.1)
        path = _run(m, clock, [HEAD], 150)[:, 0]
        peak = int(np.argmax(path))
        assert cycles[0] <= peak <= cycles[1], profile
        assert overshoot[0] <= path[peak] - turned_at <= overshoot[1], profile
        assert path[-1] == start
        if profile == "smooth":
            v = np.diff(path) / DT
            assert np.abs(np.diff(v)).max() <= limit_acceleration(8.26797) * DT * (1 + 1e-9)


def test_a_retarget_closer_than_the_braking_distance_overshoots_it():
    m, clock = _stub("smooth")
    start = STAND[HEAD]
    m.setAngles(HEAD, start + 1.5, 0.5)
    _run(m, clock, [HEAD], 15)
    here = m.getAngles(HEAD, True)[0]
    m.setAngles(HEAD, here + 0.01, 0.5)  # a few mm of arc ahead, much less than it needs to stop
    path = _run(m, clock, [HEAD], 100)[:, 0]
    assert path.max() > here + 0.05 and path[-1] == here + 0.01


def test_synchronised_joints_start_and_arrive_together():
    """The joints of one command: the smooth profile lets each arrive in its own time, the synchronised one
    starts them together and brings them in within a cycle of the slowest, which keeps its own duration."""
    goal = [0.4, 0.5, -0.6, -0.5, 0.6]  # in front of the chest: nothing on the way
    arrivals = {}
    for profile in ("smooth", "synchronised"):
        m, clock = _stub(profile)
        m.setAngles(LEFT, goal, 0.3)
        path = _run(m, clock, LEFT, 200)
        assert m.getCollisionStops() == []
        assert np.all(path[1] != path[0])  # every joint moves in the first cycle
        arrivals[profile] = [_arrival(path[:, i], goal[i]) for i in range(5)]
        v = np.diff(path, axis=0) / DT
        limits = np.array([limit_acceleration(JOINTS[j].max_velocity) for j in LEFT]) * DT
        assert np.all(np.abs(np.diff(v, axis=0)) <= limits * (1 + 1e-9) + 1e-12)
    smooth, sync = arrivals["smooth"], arrivals["synchronised"]
    assert max(smooth) - min(smooth) > 5  # the joints' own times differ
    assert max(sync) - min(sync) <= 1
    assert abs(max(sync) - max(smooth)) <= 1  # the slowest joint sets the time


def test_angle_interpolation_with_speed_waits_for_the_profile():
    m, clock = _stub("smooth")
    t0 = clock.now
    m.angleInterpolationWithSpeed(["LShoulderPitch"], [0.4], 0.5)
    assert m.getAngles("LShoulderPitch", True) == [0.4]
    duration = ramp_time(1.0, 0.5 * 8.26797, limit_acceleration(8.26797))[0]
    assert duration <= clock.now - t0 <= duration + 3 * DT


@pytest.mark.parametrize("profile", ["linear", "smooth"])
def test_the_control_cycle_can_be_nao6s(profile):
    """NAO6: 12 ms (or 24 ms). The joints move only at cycle ends."""
    m, clock = _stub(profile, cycle=0.012)
    assert m.getMotionCycleTime() == 12 and m.cycle == 0.012
    start = STAND[HEAD]
    m.setAngles(HEAD, start + 0.5, 0.5)
    clock.now += 0.011
    assert m.getAngles(HEAD, True) == [start]
    clock.now += 0.001 + 1e-9
    moved = m.getAngles(HEAD, True)[0] - start
    one_cycle = 0.5 * 8.26797 * 0.012 if profile == "linear" else limit_acceleration(8.26797) * 0.012 * 0.012
    assert moved == pytest.approx(one_cycle)


def test_sag_keeps_still_joints_off_their_command():
    """With sag, a still stiff joint reads up to ``sag`` off its command (at least half of it), the same every
    time; a moving joint reads where it is; the hands do not sag; without sag, the readings are exact."""
    sag = 0.003
    m, clock = _stub("linear", sag=sag)
    still = [j for j in CHAINS["Body"] if not j.endswith("Hand")]
    off = np.subtract(m.getAngles(still, True), m.getAngles(still, False))
    assert np.all(np.abs(off) <= sag + 1e-12) and np.all(np.abs(off) >= sag / 2 - 1e-12)
    assert len(set(np.sign(off))) == 2  # not all one way
    assert m.getAngles("LHand", True) == m.getAngles("LHand", False)
    m.setAngles(HEAD, STAND[HEAD] + 0.5, 0.1)
    clock.now += 0.1 + DT / 2
    moving = m.getAngles(HEAD, True)[0]
    assert moving == pytest.approx(STAND[HEAD] + 5 * DT * 0.826797)  # no sag while it moves
    clock.now += 2.0
    reading = m.getAngles(HEAD, True)[0]
    assert 0.0015 <= abs(reading - (STAND[HEAD] + 0.5)) <= sag  # an arrival check of 1 mrad never passes
    clock.now += 5.0
    assert m.getAngles(HEAD, True)[0] == reading
    limp, _ = _stub("linear", sag=sag)
    limp.rest()  # motors off: nothing holds the joints, nothing to sag against
    assert limp.getAngles("Body", True) == limp.getAngles("Body", False)
    exact, _ = _stub("linear")
    assert exact.getAngles("Body", True) == exact.getAngles("Body", False)


def test_the_simulated_robot_takes_profile_cycle_and_sag():
    pytest.importorskip("qi")
    from sim_stub.robot import SimulatedRobot

    with SimulatedRobot(profile="smooth", cycle=0.024, sag=0.002) as robot:
        assert robot.motion.profile == "smooth" and robot.motion.cycle == 0.024
        assert robot.motion.getMotionCycleTime() == 24
        robot.motion.wakeUp()
        sensed, commanded = robot.motion.getAngles(LEFT, True), robot.motion.getAngles(LEFT, False)
        assert 0.0 < max(abs(a - b) for a, b in zip(sensed, commanded)) <= 0.002
    given = StubMotion(profile="linear")
    with SimulatedRobot(motion=given, profile="synchronised") as robot:
        assert robot.motion is given and given.profile == "synchronised"


def test_the_stack_takes_a_profile():
    from tests.qi_fixtures import Stack

    s = Stack(profile="synchronised")
    try:
        assert s.stub.profile == "synchronised"
        assert s.motion.getMotionCycleTime() == 20  # over qi
    finally:
        s.close()


def test_nao_ik_sim_passes_profile_cycle_and_sag(monkeypatch):
    pytest.importorskip("qi")
    import nao_ik.service.serve
    from nao_ik import cli

    got = {}
    monkeypatch.setattr(nao_ik.service.serve, "run_sim", lambda listen, **kw: got.update(kw, listen=listen))
    assert cli.sim_main(["--profile", "smooth", "--cycle-ms", "12", "--sag-mrad", "2"]) == 0
    assert got["profile"] == "smooth" and got["cycle"] == pytest.approx(0.012) and got["sag"] == pytest.approx(0.002)
    got.clear()
    assert cli.sim_main([]) == 0
    assert got["profile"] is None and got["cycle"] == pytest.approx(0.02) and got["sag"] == 0.0
    for bad in (["--profile", "jerky"], ["--cycle-ms", "0"], ["--sag-mrad", "-1"], ["--view", "--profile", "smooth"]):
        with pytest.raises(SystemExit):
            cli.sim_main(bad)
