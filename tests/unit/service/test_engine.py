"""nao_ik.service.engine.Engine, single methods with ALMotion and the readings mocked."""

import threading
import time

import pytest

from nao_ik.geometry.scalar.sweep import CYCLE, STOPPED_CYCLES
from nao_ik.model.arm import arm_model
from nao_ik.motion.truth import REST_SPAN, Watch
from nao_ik.service.arm_watch import HOLD_SPEED
from nao_ik.service.engine import Engine
from nao_ik.service.motions import NoAnswer
from nao_ik.service.record import Aimed, Record

HERE = [0.0, 0.3, -1.0, -0.5, 0.0]
THERE = [0.5, 0.3, -1.0, -0.5, 0.0]  # its last command, far from where it stands


def _seen_at_rest() -> dict:
    """Both arms' watches, each arm seen at rest (its commanded posture the same over REST_SPAN)."""
    watches = {}
    for arm in ("LArm", "RArm"):
        watches[arm] = Watch()
        for t in (0.0, REST_SPAN):
            watches[arm].observe(t, HERE)
    return watches


def _record(lock: threading.RLock, commands: tuple = ()) -> Record:
    """A record with both arms seen at rest, and LArm's commands (posture, sent and answered so many s ago), each
    at full speed."""
    record = Record(lock, arm_model)
    record.watch = _seen_at_rest()
    for q, sent_ago in commands:
        sent = time.monotonic() - sent_ago
        record.add("LArm", Aimed(list(q), 1.0, sent, None, sent))
    return record


def _engine(mocker, readings, answered=True, sent_ago=1.0):
    ik = Engine.__new__(Engine)
    ik.sensed = mocker.Mock()
    ik.sensed.read.side_effect = [(list(r), 0.0) for r in readings]
    ik._sent = {"LArm": mocker.Mock()}
    ik._sent["LArm"].answered.return_value = answered
    ik.motion = mocker.Mock(timeout=1.0)
    ik.motion.call.return_value = "none"  # isCollision: the robot's protection does not hold it
    ik.motion.numbers.return_value = list(HERE)  # getAngles without the sensors: ALMotion commands it there
    ik._lost, ik._commit = set(), threading.RLock()
    ik.record = _record(ik._commit, ((THERE, sent_ago),))
    return ik


def test_an_arm_is_at_rest_short_of_its_command_only_once_still_after_every_answer(mocker):
    """At rest: every command answered, the last sent long ago, and still over STOPPED_CYCLES cycles of readings
    taken after that; not where a command is unanswered or was lost (it may still set the arm off), was sent
    just now, where the readings show the arm setting off, or where ALMotion commands it elsewhere. Where the
    robot's protection holds it (and may let go), at rest once it is commanded to stay where it stands, and not
    before it was seen still."""
    model, end = arm_model("LArm"), time.monotonic() + 5.0
    still = [HERE] * (STOPPED_CYCLES + 1)
    assert _engine(mocker, still).at_rest(model, HERE, end)
    assert not _engine(mocker, still, answered=False).at_rest(model, HERE, end)
    assert not _engine(mocker, still, sent_ago=CYCLE).at_rest(model, HERE, end)
    lost = _engine(mocker, still)
    lost._lost.add("LArm")
    assert not lost.at_rest(model, HERE, end)
    blocked = _engine(mocker, still)  # held short of ALMotion's command by something else (a hand, a table)
    blocked.motion.numbers.return_value = list(THERE)
    assert not blocked.at_rest(model, HERE, end)
    setting_off = [HERE] * STOPPED_CYCLES + [[0.002, 0.3, -1.0, -0.5, 0.0]]  # the last reading: it moves
    assert not _engine(mocker, setting_off).at_rest(model, HERE, end)
    held = _engine(mocker, still)  # the robot's protection holds it short: it may let go
    held.motion.call.return_value = "collision"
    held.send = mocker.Mock()
    held.motion.numbers.return_value = list(HERE)  # where ALMotion commands it: the hold command goes there
    assert held.at_rest(model, HERE, end)
    held.send.assert_called_once_with("LArm", list(model.names), HERE, HOLD_SPEED, end)
    moving = _engine(mocker, setting_off)
    moving.motion.call.return_value = "collision"
    moving.send = mocker.Mock()
    assert not moving.at_rest(model, HERE, end) and not moving.send.called
    # No command it may be on its way to: at rest at once, nothing read.
    none = _engine(mocker, [])
    none.record = _record(none._commit)
    assert none.at_rest(model, HERE, end)


def test_a_command_without_an_answer_marks_its_arms_as_lost(mocker):
    """reachBoth's and a path's commands wait for ALMotion's answer: where none comes (timed out), the command
    may still run, so its arms are never taken as at rest again."""
    ik = Engine.__new__(Engine)
    ik.motion = mocker.Mock()
    ik.motion.result.side_effect = RuntimeError("ALMotion.setAngles did not answer within 2.00 s")
    ik.motion.failure.return_value = ""  # no answer, not an error: it may run
    ik._lost, ik._models = set(), {}
    ik._commit, ik._aims, ik._seen, ik._ahead = threading.RLock(), 0, threading.local(), {}
    ik.record = _record(ik._commit)
    with pytest.raises(NoAnswer):
        ik.call_aimed([("LArm", THERE), ("RArm", THERE)], [], THERE + THERE, 0.2, time.monotonic() + 5.0)
    assert ik._lost == {"LArm", "RArm"} and ik.aim["LArm"] == THERE


def test_a_path_streams_only_from_an_arm_at_rest_within_a_cycle_of_its_first_point(mocker):
    """A path's first point is reached first, like a reach, and waited for, where it is more than a cycle away or
    where the arm may still be on its way to an earlier command (whose overshoot, at that command's speed, the
    stream's boxes do not hold); a stream starts at once only from an arm at rest within a cycle of it."""
    from nao_ik.service.paths import _leads

    model = arm_model("LArm")
    near = [HERE[0] + 0.01, *HERE[1:]]
    moving = _engine(mocker, [])
    assert _leads(moving, model, HERE, near, 1.0)  # on its way to THERE
    still = _engine(mocker, [])
    still.record = _record(still._commit, ((HERE, 1.0),))
    assert not _leads(still, model, HERE, near, 1.0)
    assert _leads(still, model, HERE, THERE, 1.0)  # far: 0.5 rad of ShoulderPitch


def test_the_other_arms_body_holds_a_path_it_streams_from_its_reading_on(mocker):
    """The RArm promised a path (its first point within a cycle, never commanded before): the LArm's body holds
    the RArm's links at every posture between its reading and the path's first point, and along the path."""

    right = arm_model("RArm")
    seen = [0.3, -0.3, 1.0, 0.6, 0.0]
    path = [[0.45 + 0.004 * k, -0.3 - 0.003 * k, 1.0, 0.6, 0.0] for k in range(40)]  # the first 18 ms away
    ik = _reading_right_at(mocker, seen)  # the path's thread read its body
    assert ik.promise("RArm", path, 1.0, False)
    for posture in [[a + t * (b - a) for a, b in zip(seen, path[0])] for t in (0.0, 0.5, 1.0)] + path[::7]:
        _holds(ik, right, posture)


def _outside(x, c) -> float:
    """How far the point ``x`` is outside the capsule ``c`` (negative inside)."""
    d = [c.b[j] - c.a[j] for j in range(3)]
    dd = sum(v * v for v in d) or 1e-18
    t = min(max(sum((x[j] - c.a[j]) * d[j] for j in range(3)) / dd, 0.0), 1.0)
    return sum((x[j] - c.a[j] - t * d[j]) ** 2 for j in range(3)) ** 0.5 - c.radius


def test_the_other_arms_body_holds_a_stream_from_a_reading_older_than_its_newest_points(mocker):
    """The RArm streams a path whose ShoulderRoll goes out and back; the LArm's body is read with the RArm's
    reading from before the last two points were sent (a reading may be two cycles old): it holds the RArm
    where those points took it, not only between that reading and the newest point."""

    right = arm_model("RArm")
    out = [0.3, -0.3, 1.0, 0.6, 0.0]
    path = [[0.3, -0.3 - r, 1.0, 0.6, 0.0] for r in (0.0, 0.04, 0.08, 0.04, 0.0, 0.0, 0.0)]
    ik = _reading_right_at(mocker, out)
    assert ik.promise("RArm", path, 1.0, False)
    for k in range(5):  # streamed up to the point back at the start; read at the start
        ik._aimed("RArm", path[k], time.monotonic(), 1.0, path[k + 1 :])
    _holds(ik, right, path[2])  # the farthest out the points sent took it


def test_the_other_arms_body_holds_the_legs_of_a_jump_sent_while_a_path_is_promised(mocker):
    """A jump's legs (commands of the path's arm sent while its path is promised, not points of it) stay part of
    the other arm's body like streamed points: read from before the last leg went, it holds the first leg."""
    right = arm_model("RArm")
    at = [0.3, -0.3, 1.0, 0.6, 0.0]
    path = [list(at), list(at), [0.3, -0.6, 1.0, 0.6, 0.0], [0.3, -0.6, 1.0, 0.6, 0.0]]
    ik = _reading_right_at(mocker, at)
    assert ik.promise("RArm", path, 1.0, False)
    ik._aimed("RArm", path[0], time.monotonic(), 1.0, path[1:])
    ik._aimed("RArm", path[1], time.monotonic(), 1.0, path[2:])
    leg = [0.3, -0.3, 0.4, 0.6, 0.0]  # swung out, then on to the jump's point
    ik._aimed("RArm", leg, time.monotonic(), 1.0)
    ik._aimed("RArm", path[2], time.monotonic(), 1.0)
    _holds(ik, right, leg)


def _reading_right_at(mocker, right: list) -> Engine:
    """An engine whose readings have the RArm at ``right`` (the LArm at zero, crouched hips), which has read the
    LArm's body once (as a path's thread on the RArm does before its promise)."""
    ik = Engine.__new__(Engine)
    ik._body, ik._models = True, {"LArm": arm_model("LArm"), "RArm": arm_model("RArm")}
    ik.sensed = mocker.Mock()
    reading = [0.0] * 5 + list(right) + [-0.45, -0.45, 0.0, 0.0] + [0.0] * 4  # hips, head, the legs standing
    ik.sensed.read_timed.return_value = (reading, [1.0] * 18, None)
    ik._commit, ik._aims, ik._seen = threading.RLock(), 0, threading.local()
    ik.record = _record(ik._commit)
    ik._bodies, ik._ahead = {}, {}
    ik.arm_state("LArm", motors=False, end=time.monotonic() + 5.0)
    return ik


def _holds(ik: Engine, right, posture: list) -> None:
    """The LArm's body holds every link of the RArm at ``posture`` (each point of it within a capsule of the other
    arm for that link, by the link's radius)."""
    from nao_ik.geometry.scalar.clearance import link_points
    from nao_ik.geometry.scalar.swivel import arm as scalar_arm
    from nao_ik.model.body_data import LINK_ROWS, shoulder_row

    shoulder = shoulder_row(scalar_arm(right).s, "other arm")
    body = [
        c
        for c in ik.arm_state("LArm", motors=False, end=time.monotonic() + 5.0)[0].body
        if c.part == "other arm" and tuple(c) != shoulder
    ]  # the links' pieces (the shoulder is fixed)
    pts = link_points(scalar_arm(right), posture)
    for i, (_, first, last, _, radius) in enumerate(LINK_ROWS):
        for t in (0.0, 0.5, 1.0):
            x = [pts[first][j] + t * (pts[last][j] - pts[first][j]) for j in range(3)]
            assert min(_outside(x, c) + radius for c in body[i :: len(LINK_ROWS)]) <= 1e-9, (posture, i)
