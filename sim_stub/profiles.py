"""How the stub's joints move toward a ``setAngles`` target: the motion profiles.

- ``"linear"``: every joint at ``fractionMaxSpeed`` x its maximum speed from the
  first cycle to the last, starting, stopping and turning at once (the simplest
  motion; the library's constant-speed timing models exactly this).
- ``"smooth"``: like ALMotion is documented to move ("smooth in position and
  continuous in velocity", also under contradictory commands): each joint
  accelerates at its limit acceleration up to a peak speed of
  ``fractionMaxSpeed`` x its maximum speed, and brakes at that acceleration to
  arrive at rest. A new target during a move keeps the current velocity: a
  joint sent back brakes first (it keeps going the old way for a few cycles,
  overshooting toward the old goal), then turns.
- ``"synchronised"``: smooth, and all joints of one command start and arrive
  together: the slowest joint sets the duration, the others move slower (the
  same phases, scaled). ALMotion's documentation does not say whether
  ``setAngles`` synchronises; ``angleInterpolation`` does (by time).

Acceleration. No acceleration limit is published for NAO's joints. The figures
NAO_ARM.md reports from Aldebaran's joint-control pages are: a bell-shaped speed
profile peaking at about ``fractionMaxSpeed`` x the maximum speed, a move taking
about 1.5x as long as at constant speed, and a retargeted joint going on the
old way for about 4 cycles (about 0.02 rad) at 10 % speed. The stub gives every
joint the acceleration that takes it from rest to its maximum speed in
:data:`FULL_SPEED_RAMP` seconds (``A = maxVelocity / 0.75 s``; 11.0 rad/s^2 for
an 8.27 rad/s joint). Chosen so that both figures hold: at 10 % speed (0.83
rad/s) an 8.27 rad/s joint brakes to a stop in 0.075 s (3.75 cycles of 20 ms,
overshooting 0.031 rad), and a 0.5 rad move at the library's default speed
(0.2) takes 1.50x the constant-speed time (0.45 s against 0.30 s). Longer or
slower moves come closer to 1x, shorter or faster ones take longer than 1.5x
(the profile is a trapezoid in velocity: continuous velocity, piecewise
constant acceleration).

The default profile is :data:`DEFAULT_PROFILE`; the environment variable
:data:`PROFILE_ENV` (``NAO_IK_STUB_PROFILE``), when set, overrides it for every
stub built without an explicit ``profile``, so a whole test suite can run
against any profile.
"""

from __future__ import annotations

import math
import os

#: The motion profiles (:mod:`sim_stub.profiles`).
PROFILES = ("linear", "smooth", "synchronised")
#: The profile a stub gets when none is given and NAO_IK_STUB_PROFILE is not set: ALMotion's documented motion.
DEFAULT_PROFILE = "smooth"
#: The environment variable that overrides :data:`DEFAULT_PROFILE`.
PROFILE_ENV = "NAO_IK_STUB_PROFILE"
#: Seconds a joint takes from rest to its maximum speed (fractionMaxSpeed 1): its limit acceleration is
#: maxVelocity / FULL_SPEED_RAMP (see the module's docstring for where 0.75 s comes from).
FULL_SPEED_RAMP = 0.75
#: ALMotion's control cycle on NAO V5 (NAOqi 2.1), seconds; NAO6 runs 12 or 24 ms (``cycle`` of the stub).
DEFAULT_CYCLE = 0.02


def default_profile() -> str:
    """The profile of a stub built without one: NAO_IK_STUB_PROFILE if set, else DEFAULT_PROFILE."""
    return check_profile(os.environ.get(PROFILE_ENV) or DEFAULT_PROFILE)


def check_profile(profile: object) -> str:
    """``profile`` if it is one of :data:`PROFILES`, else ValueError."""
    if profile not in PROFILES:
        raise ValueError(f"unknown motion profile {profile!r}: one of {', '.join(PROFILES)}")
    return str(profile)


def check_cycle(cycle: object) -> float:
    """``cycle`` (seconds) if it is a plausible control period (1 to 100 ms), else ValueError."""
    if isinstance(cycle, bool) or not isinstance(cycle, (int, float)) or not 0.001 <= cycle <= 0.1:
        raise ValueError(f"the control cycle must be 0.001 to 0.1 seconds, got {cycle!r}")
    return float(cycle)


def limit_acceleration(max_velocity: float) -> float:
    """A joint's limit acceleration, rad/s^2, from its maximum speed."""
    return max_velocity / FULL_SPEED_RAMP


class Move:
    """One joint's move toward ``target``.

    Attributes:
        target: where the joint goes (radians, within its limits).
        peak: the speed it may reach, rad/s (linear: the speed it moves at).
        accel: the acceleration of its planned profile, rad/s^2 (smooth: the joint's limit; synchronised:
            scaled down for the joint to arrive with the slowest one). Unused by ``linear``.
        brake: the most it may brake, rad/s^2 (the joint's limit): how fast it sheds a velocity it
            no longer wants (a turned-back or slowed-down command).
        velocity: the joint's velocity, rad/s (signed; smooth profiles carry it from cycle to cycle).
    """

    __slots__ = ("target", "peak", "accel", "brake", "velocity")

    def __init__(self, target: float, peak: float, accel: float, brake: float, velocity: float = 0.0):
        self.target = target
        self.peak = peak
        self.accel = accel
        self.brake = brake
        self.velocity = velocity


def linear_step(move: Move, position: float, dt: float) -> tuple[float, bool]:
    """(the position after ``dt`` seconds at constant speed, arrived)."""
    delta = move.target - position
    step = move.peak * dt
    if abs(delta) <= step:
        return move.target, True
    return position + math.copysign(step, delta), False


def braking_speed(distance: float, accel: float, dt: float) -> float:
    """The speed from which a joint stops exactly ``distance`` ahead, slowing by ``accel * dt`` each cycle.

    The discrete braking curve: speeds r + m a dt, r + (m - 1) a dt, ..., r for one cycle each (the last
    one, at most one cycle's change, lands on the target), covering ``dt ((m + 1) r + a dt m (m + 1) / 2)``;
    every distance has exactly one such m >= 0 and 0 < r <= a dt.
    """
    if distance <= 0.0:
        return 0.0
    step = accel * dt
    units = distance / (step * dt)  # the distance in units of a dt^2
    m = max(0, math.ceil((math.sqrt(1.0 + 8.0 * units) - 3.0) / 2.0 - 1e-12))  # least m: (m+1)(m+2)/2 >= units
    while (m + 1) * (m + 2) / 2.0 < units:
        m += 1
    r = (distance / dt - step * m * (m + 1) / 2.0) / (m + 1)
    return r + m * step


def smooth_step(move: Move, position: float, dt: float) -> tuple[float, bool]:
    """One control cycle of the smooth profile: (the new position, arrived); updates ``move.velocity``.

    The velocity is constant within a cycle and changes between cycles by at most ``accel * dt`` (speeding
    up) or ``brake * dt`` (slowing down or turning). The wanted velocity is :func:`braking_speed` toward
    the target (braking at ``accel``), capped at ``peak``; the joint arrives, and its velocity drops to 0,
    in the cycle that reaches the target at a speed of at most one cycle's change.
    """
    a, v = move.accel, move.velocity
    delta = move.target - position
    if a <= 0.0:  # nothing to plan with (a zero-length synchronised move): brake to a stop here
        a = move.brake
    wanted = math.copysign(min(move.peak, braking_speed(abs(delta), a, dt)), delta) if delta else 0.0
    slowing = wanted * v < 0.0 or abs(wanted) < abs(v)
    limit = (move.brake if slowing else a) * dt
    v_new = v + min(max(wanted - v, -limit), limit)
    new = position + v_new * dt
    passed = (move.target - new) * delta <= 1e-24 if delta else True
    if passed and abs(v_new) <= (a if delta else max(a, move.brake)) * dt * (1.0 + 1e-9):
        move.velocity = 0.0
        return move.target, True
    move.velocity = v_new
    return new, False


def ramp_time(distance: float, peak: float, accel: float) -> tuple[float, float]:
    """(duration, acceleration phase) of a trapezoidal move of ``distance`` from rest to rest."""
    if distance <= 0.0:
        return 0.0, 0.0
    if distance >= peak * peak / accel:  # reaches the peak speed
        return distance / peak + peak / accel, peak / accel
    ta = math.sqrt(distance / accel)
    return 2.0 * ta, ta


def synchronise(distances: list[float], peaks: list[float], accels: list[float]) -> list[tuple[float, float]]:
    """(peak, acceleration) per joint so that the joints' trapezoids from rest take the slowest one's time.

    The slowest joint keeps its own profile; every other one gets the same acceleration phase and duration,
    with a peak speed ``distance / (duration - phase)``: never faster, never harder than its own.
    """
    times = [ramp_time(d, p, a) for d, p, a in zip(distances, peaks, accels)]
    duration, phase = max(times, default=(0.0, 0.0))
    out = []
    for d, p, a in zip(distances, peaks, accels):
        if duration <= 0.0 or d <= 0.0:
            out.append((p, a))
            continue
        peak = min(p, d / (duration - phase))
        out.append((peak, min(a, peak / phase)))
    return out
