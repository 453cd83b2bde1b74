"""The boxes that move an arm tell the truth.

A box passes the service's ``reason`` to its failure output unchanged (an error's first line for a refusal), and
fires its success output only once ``NaoArmIK.getArmState`` says the arm arrived: never on a timeout, never where
the arm never moved, and without waiting where nothing went. Reach Pose's defaults are a pose the arm takes, its
units are on the box (metres, radians), and an angle that can only be degrees is refused before the call, in the
service's words. The sample diagram runs through its packaged boxes run after run against one service.

Most of the box logic is held against a stand-in NaoArmIK whose answers and arm states the test sets, with a clock
that sleeps at once (every arm-moving box, each outcome, in milliseconds); the findings themselves against the
simulated robot and the real service.
"""

from __future__ import annotations

import ast
import math
import os
import re
import time
import zipfile
from pathlib import Path

import pytest

from nao_ik import solve_pose
from nao_ik.api.pose import check_position6d
from nao_ik.model.arm import arm_model
from nao_ik.robot.package import build
from tests.system.test_behaviors import boxes, io, make_box, run_diagram, start

NAMES = list(arm_model("LArm").names)
ANGLES = [0.4, 0.3, -1.0, -0.9, 0.1]
#: Runs of the sample diagram in a row against one service: about 2.7 s a run (the default speed, 0.2, and a stand
#: from rest each time; 20 runs about 55 s), so make test runs 5 and make soak (NAO_IK_SOAK=1) 20.
RUNS = 20 if os.environ.get("NAO_IK_SOAK") else 5


def answer(box: str, reached: bool, reason: str = "", moved: bool = True, seconds: float = 0.1) -> dict:
    """The service's answer to ``box``'s call: reached or not (``reason`` why), a command sent or not."""
    motion = {"moved": moved, "names": NAMES, "angles": ANGLES, "moveSeconds": seconds}
    if box == "Reach To":
        return {"reached": reached, "reason": reason, "error": 0.0 if reached else 0.066, **motion}
    if box == "Reach Pose":
        return {"reached": reached, "reason": reason, "positionError": 0.0, "orientationError": 0.0, **motion}
    if box == "Point At":
        return {"pointed": reached, "reason": reason, "miss": 0.0, **motion}
    if box == "Reach Both":
        sides = {"left": {"error": 0.0}, "right": {"error": 0.0}}
        return {"reached": reached, "reason": reason, **sides, **motion,
                "names": NAMES + NAMES, "angles": ANGLES + ANGLES}  # fmt: skip
    if box == "Track Path":
        return {"completed": reached, "stopped": reason, "sent": 3 if moved else 0, "rmsError": 0.0,
                "names": NAMES, "angles": [ANGLES] * 3, "seconds": seconds}  # fmt: skip
    assert box == "Grasp"
    steps = [{"step": s, "angles": [] if s in ("open", "close") else ANGLES}
             for s in ("preGrasp", "open", "approach", "close", "lift")]  # fmt: skip
    return {"completed": reached, "failedStep": "" if reached else "approach", "reason": reason, "moved": moved,
            "steps": steps}  # fmt: skip


#: Every box that moves an arm: the NaoArmIK method it calls, its success output, what its onStart takes.
ARM_BOXES = {
    "Reach To": ("reachToWithSpeed", "onReached", None),
    "Reach Pose": ("reachToPoseWithSpeed", "onReached", None),
    "Point At": ("pointAtWithSpeed", "onPointed", None),
    "Reach Both": ("reachBothWithSpeed", "onReached", None),
    "Track Path": ("trackPathWithSpeed", "onDone", [[0.15, 0.12, 0.08], [0.15, 0.13, 0.08]]),
    "Grasp": ("graspWithSpeed", "onGrasped", None),
}


class Clock:
    """The boxes' ``time`` module: ``sleep`` advances it at once."""

    def __init__(self):
        self.now = 1000.0

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class FakeIK:
    """A NaoArmIK: ``method`` answers ``reply`` (or raises it), ``getArmState`` the ``states`` in turn for each arm,
    each (state, reason), the last one from then on. Without states, it has no getArmState (as the robot runtime)."""

    def __init__(self, method: str, reply, states=()):
        self.reply, self.calls = reply, []
        self.states = {"LArm": list(states), "RArm": list(states)}
        setattr(self, method, lambda *args: self._call(method, args))
        if states:
            self.getArmState = self._state  # noqa: N815 (the service's name)

    def _call(self, method, args):
        self.calls.append(method)
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply

    def _state(self, arm):
        self.calls.append("getArmState")
        states = self.states[arm]
        state, reason = states.pop(0) if len(states) > 1 else states[0]
        return {"arm": arm, "state": state, "reason": reason, "moving": state == "moving"}


class FakeMotion:
    """ALMotion's getAngles: the commanded angles ``commanded`` in turn (the last from then on), sensed at them."""

    def __init__(self, commanded):
        self.commanded = list(commanded)

    def getAngles(self, names, sensors):  # noqa: N802 (ALMotion's name)
        q = self.commanded.pop(0) if len(self.commanded) > 1 and not sensors else self.commanded[0]
        return list(q)[: len(names)]


class FakeSession:
    def __init__(self, ik, motion=None):
        self.ik, self.motion = ik, motion

    def service(self, name):
        if name == "NaoArmIK":
            return self.ik
        if name == "ALMotion" and self.motion is not None:
            return self.motion
        raise RuntimeError(f"Cannot find service '{name}' in index")


def run_box(name: str, ik, motion=None, **params):
    """``name`` made against ``ik``, started (a bang, or its list), on a :class:`Clock`: (its outputs, the clock)."""
    box = make_box(name, FakeSession(ik, motion), **params)
    clock = Clock()
    type(box).onLoad.__globals__["time"] = clock  # the script's own module globals
    start(box, ARM_BOXES[name][2])
    return box.fired, clock


@pytest.mark.parametrize("name", ARM_BOXES)
def test_a_failure_is_the_service_reason_unchanged_at_once(name):
    """Not reached, a command sent or not: the failure output carries the service's reason as it gave it, at once
    (no getArmState, no wait)."""
    method, success, _ = ARM_BOXES[name]
    for moved in (True, False):
        ik = FakeIK(method, answer(name, False, "collision: other arm", moved), [("arrived", "")])
        fired, clock = run_box(name, ik)
        assert [n for n, _ in fired] == ["onFailed"] and fired[0][1][-1] == "collision: other arm", fired
        assert ik.calls == [method] and clock.now == 1000.0


@pytest.mark.parametrize("name", ARM_BOXES)
def test_an_error_is_its_first_line(name):
    method, _, _ = ARM_BOXES[name]
    error = RuntimeError("RuntimeError: analytic for (0.15, 0.02, 0.04): motion: the move crosses the other arm "
                         "and no safe sequence was found; nothing sent\n  File ...")  # fmt: skip
    fired, _ = run_box(name, FakeIK(method, error))
    assert fired == [("onFailed", fired[0][1])] and fired[0][1][-1] == str(error).splitlines()[0], fired


@pytest.mark.parametrize("name", ARM_BOXES)
def test_success_once_get_arm_state_says_arrived(name):
    """Reached and sent: the box asks getArmState every 50 ms, and fires its success output once it says arrived."""
    method, success, _ = ARM_BOXES[name]
    ik = FakeIK(method, answer(name, True), [("moving", "")] * 3 + [("arrived", "")])
    fired, clock = run_box(name, ik)
    assert [n for n, _ in fired] == [success], fired
    arms = 2 if name == "Reach Both" else 1
    assert ik.calls == [method] + ["getArmState"] * (4 * arms), ik.calls
    assert clock.now == pytest.approx(1000.15)


@pytest.mark.parametrize("name", ARM_BOXES)
@pytest.mark.parametrize(
    "state, reason",
    [("stopped", "robot collision protection"),
     ("still", "its last command stayed short of its goal (met motors switched off, or another task took the arm) "
               "and runs no more")],
)  # fmt: skip
def test_a_stop_on_the_way_is_a_failure_with_get_arm_state_reason(name, state, reason):
    method, _, _ = ARM_BOXES[name]
    fired, _ = run_box(name, FakeIK(method, answer(name, True), [("moving", ""), (state, reason)]))
    assert [n for n, _ in fired] == ["onFailed"] and fired[0][1][-1] == reason, fired


@pytest.mark.parametrize("name", ARM_BOXES)
def test_a_timeout_is_never_success(name):
    """The arm never arrives: after 2 x the move's seconds + 2 s, the failure output says so."""
    method, _, _ = ARM_BOXES[name]
    seconds = 0.0 if name == "Grasp" else 3.0  # a grasp's steps were each waited for by the service
    ik = FakeIK(method, answer(name, True, seconds=seconds), [("moving", "")])
    fired, clock = run_box(name, ik)
    limit = 2 * seconds + 2
    assert [n for n, _ in fired] == ["onFailed"], fired
    assert fired[0][1][-1] == f"the arm did not arrive within {limit:.1f} s" and clock.now - 1000 >= limit


@pytest.mark.parametrize("name", ["Reach To", "Reach Pose", "Point At"])
def test_nothing_sent_nothing_waited_for(name):
    """Reached with nothing sent (the arm is there): success at once, no getArmState."""
    method, success, _ = ARM_BOXES[name]
    ik = FakeIK(method, answer(name, True, moved=False), [("moving", "")])
    fired, clock = run_box(name, ik)
    assert [n for n, _ in fired] == [success] and ik.calls == [method] and clock.now == 1000.0


def test_without_get_arm_state_the_reach_box_reads_almotion():
    """The robot runtime has no getArmState: Reach To waits until ALMotion's command is at the angles sent and the
    sensed angles within 0.06 rad; a command that never gets there fails on the timeout, never succeeds."""
    on_way = [[a - 0.2 * k for a in ANGLES] for k in (3, 2, 1)]
    reached = answer("Reach To", True)
    fired, clock = run_box("Reach To", FakeIK("reachToWithSpeed", reached), FakeMotion(on_way + [ANGLES]))
    assert [n for n, _ in fired] == ["onReached"] and clock.now == pytest.approx(1000.15), fired
    short = [a - 0.01 for a in ANGLES]
    fired, clock = run_box("Reach To", FakeIK("reachToWithSpeed", reached), FakeMotion([short]))
    assert fired == [("onFailed", [None, "the arm did not arrive within 2.2 s"])] and clock.now >= 1002.2


def test_every_arm_box_waits_with_the_same_helper():
    """The boxes are standalone scripts (no module they could share on the robot): the waiting code is one small
    method, the same text in each box that moves an arm, and no box keeps a wait or timeout parameter of its own."""

    def arrival(script):
        tree = ast.parse(script)
        cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
        f = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "arrival"), None)
        return None if f is None else ast.get_source_segment(script, f)

    moving = {b.get("name"): s for b, s in boxes() if re.search(r"\.(reachTo|reachToPose|pointAt|reachBoth|"
                                                                 r"trackPath|grasp)WithSpeed\(", s)}  # fmt: skip
    assert {re.sub(r" \(\d\)$", "", n) for n in moving} == set(ARM_BOXES)
    texts = {n: arrival(s) for n, s in moving.items()}
    assert None not in texts.values() and len(set(texts.values())) == 1, texts
    for b, _ in boxes():
        assert not {"wait", "timeout"} & set(io(b, "Parameter")), b.get("name")


# ------------------------------------------------------------ the findings against the service


def test_reach_to_box_says_collision_other_arm(awake):
    """The right hand across the middle: the left hand's reach there stops where the other arm is, and the box says
    the service's "collision: other arm" (not an "out of reach" of its own making); a move the other arm bars from
    the start is the service's error's first line."""
    awake.ik.reachToWithSpeed("RArm", 0.17, 0.0, 0.06, "", 1.0)
    awake.wait_still(list(arm_model("RArm").names))
    box = make_box("Reach To", awake.user, speed=1.0, arm="LArm")
    start(box, [0.17, 0.03, 0.06])
    assert box.fired == [("onFailed", [box.fired[0][1][0], "collision: other arm"])], box.fired
    assert box.fired[0][1][0] > 0.03  # the hand's distance from the target, metres
    start(box, [0.15, 0.02, 0.04])
    name, (error, reason) = box.fired[-1]
    assert name == "onFailed" and error is None and "motion: the move crosses the other arm" in reason, box.fired
    assert reason.startswith("RuntimeError: analytic for (0.15, 0.02, 0.04)") and "\n" not in reason


def test_reach_to_box_fails_where_the_arm_never_moved(awake):
    """Another client holds the arm where it is as the box's command arrives: the arm never moves, and the box
    fails with what getArmState says became of the command, at once, instead of onReached after a timeout."""
    names = list(arm_model("LArm").names)
    box = make_box("Reach To", awake.user)
    t0 = time.monotonic()
    with awake.after_next_move(names) as held:
        start(box)
    assert [n for n, _ in box.fired] == ["onFailed"] and box.fired[0][1][0] is None, box.fired
    state = awake.ik.getArmState("LArm")
    assert state["state"] in ("stopped", "still") and box.fired[0][1][1] == state["reason"] != "", (box.fired, state)
    assert awake.motion.getAngles(names, True) == pytest.approx(held[0], abs=1e-3)  # it never moved
    assert time.monotonic() - t0 < 2.0


def test_reach_pose_defaults_are_a_pose_the_arm_takes(awake):
    """The box's default pose, as it stands (the default speed too): the library reaches it, and the box fires
    onReached with the hand there."""
    (box_el, _) = next((b, s) for b, s in boxes() if b.get("name") == "Reach Pose")
    params = io(box_el, "Parameter")
    pose = [float(params[k].get("value")) for k in ("x", "y", "z", "wx", "wy", "wz")]
    assert solve_pose(pose, "LArm", 63).reached
    box = make_box("Reach Pose", awake.user)
    start(box)
    assert [n for n, _ in box.fired] == ["onReached"] and box.fired[0][1][2] == "reached", box.fired
    hand = awake.motion.getPosition("LArm", 0, True)
    assert max(abs(a - b) for a, b in zip(hand[:3], pose[:3])) < 0.01  # there within its joints' sag


def test_reach_pose_units_are_on_the_box_and_degrees_are_refused(awake):
    """The parameters say metres and radians; an angle beyond 2 pi (degrees) is refused before any call, in the
    words of the service's own refusal, from the parameters and from the input list alike."""
    (box_el, _) = next((b, s) for b, s in boxes() if b.get("name") == "Reach Pose")
    params = io(box_el, "Parameter")
    assert all("metres" in params[k].get("tooltip") for k in ("x", "y", "z"))
    assert all(params[k].get("tooltip").startswith("radians") for k in ("wx", "wy", "wz"))
    assert "radians" in box_el.get("tooltip") and "degrees" not in box_el.get("tooltip").split("beyond")[0]
    # The parameter's range lets a degrees value through to the box (the editor would clamp it to a radians-sized
    # wrong value otherwise).
    assert all(float(params[k].get("max")) >= 180 and float(params[k].get("min")) <= -180 for k in ("wx", "wz"))
    calls = []

    class Counting:
        def service(self, name):
            calls.append(name)
            return awake.user.service(name)

    degrees = [0.18, 0.15, 0.03, 90.0, 0.0, 0.0]
    with pytest.raises(ValueError) as library:
        check_position6d(degrees)
    box = make_box("Reach Pose", Counting(), wx=90.0)
    start(box)
    assert box.fired == [("onFailed", [None, None, str(library.value)])] and calls == [], box.fired
    start(box, [0.18, 0.15, 0.03, 0.0, 0.0, -120])
    hint = "position6D wz -120.0 is beyond 2 pi: angles are radians (ALMotion's position6D), not degrees"
    assert box.fired[-1] == ("onFailed", [None, None, hint]) and calls == []
    with pytest.raises(RuntimeError) as service:
        awake.ik.reachToPoseWithSpeed("LArm", degrees, 63, "", 1.0)
    assert str(service.value).endswith(str(library.value))  # the service's words
    assert awake.moves() == []
    start(box, [0.18, 0.15, 0.03, math.pi, 0.0, 0.0])  # within 2 pi: radians, sent to the service
    assert calls == ["NaoArmIK"]


# ------------------------------------------------------------ the sample diagram, run after run


@pytest.fixture
def packaged_xar(tmp_path) -> Path:
    """The sample diagram as the package for a robot served from a computer carries it (make package
    --boxes-only, deploy.sh without --on-robot)."""
    with zipfile.ZipFile(build(tmp_path / "boxes.pkg", service=False)) as z:
        return Path(z.extract("behavior_1/behavior.xar", tmp_path / "pkg"))


def test_the_sample_diagram_runs_run_after_run(stack, packaged_xar):
    """Wake Up, three Reach To, Rest, through the packaged boxes with their own parameters, RUNS times in a row
    against one service: every run ends on root.onStopped, each reach on onReached, and the robot received three
    reaches and a rest a run."""
    t0, ends = time.monotonic(), []
    for run in range(RUNS):
        ended, by_name = run_diagram(stack.user, packaged_xar)
        ends.append(ended)
        reaches = {n: b.fired for n, b in by_name.items() if n.startswith("Reach To")}
        assert ended == [("onStopped", None)], (run, ended, reaches)
        assert len(reaches) == 3 and all([f[0] for f in fired] == ["onReached"] for fired in reaches.values()), (
            run, reaches)
    assert ends == [[("onStopped", None)]] * RUNS
    methods = [c["method"] for c in stack.stub.getRecordedCommands() if c["method"] in ("setAngles", "rest")]
    assert methods == ["setAngles", "setAngles", "setAngles", "rest"] * RUNS
    assert stack.stub.getViolations() == []
    print(f"{RUNS} of {RUNS} runs of the sample diagram complete in {time.monotonic() - t0:.1f} s")
