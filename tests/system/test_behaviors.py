"""The Choregraphe project: well-formed, consistent, Python 2.7-clean, and working against the service."""

from __future__ import annotations

import ast
import inspect
import math
import time
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from nao_ik.kinematics import chain as kinematics
from nao_ik.kinematics.hand_pose import forward_pose
from nao_ik.model.arm import arm_model

ROOT = Path(__file__).resolve().parents[2] / "behaviors"
XAR = ROOT / "behavior_1" / "behavior.xar"
NS = "{http://www.ald.softbankrobotics.com/schema/choregraphe/project.xsd}"
# What GeneratedClass gives a box script besides its own IO.
BOX_API = {"session", "getParameter", "logger", "onLoad", "onUnload"}


def q(tag):
    return NS + tag


def boxes(xar: Path = XAR):
    """Every scripted box of the diagram: (element, script)."""
    out = []
    for box in ET.parse(xar).getroot().iter(q("Box")):
        content = box.find(q("script")).find(q("content"))
        if content is not None and content.text and content.text.strip():
            out.append((box, content.text))
    return out


def io(box, kind):
    return {e.get("name"): e for e in box.findall(q(kind))}


def test_project_files_are_well_formed():
    pml = ET.parse(ROOT / "nao-ik.pml").getroot()
    assert pml.tag == "Package" and pml.get("format_version") == "5"
    desc = pml.find("BehaviorDescriptions").find("BehaviorDescription")
    assert (ROOT / desc.get("src") / desc.get("xar")).is_file()
    assert (ROOT / pml.find("Manifest").get("src")).is_file()
    manifest = ET.parse(ROOT / "manifest.xml").getroot()
    assert manifest.get("uuid") == "nao-ik-behaviors"
    root = ET.parse(XAR).getroot()
    assert root.tag == q("ChoregrapheProject") and root.get("xar_version") == "3"
    names = {"Reach To", "Compute Angles", "Track Path", "Wake Up", "Rest", "Reach Pose"}
    names |= {"Point At", "Reach Both", "Grasp", "Open/Close Hand"}
    assert {b.get("name") for b, _ in boxes()} >= names


@pytest.mark.parametrize("box, script", boxes(), ids=lambda v: v.get("name") if hasattr(v, "get") else "")
def test_box_declarations_match_the_script(box, script):
    tree = ast.parse(script)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "MyClass")
    methods = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
    inputs, outputs, params = io(box, "Input"), io(box, "Output"), io(box, "Parameter")
    for name, e in inputs.items():
        if e.get("nature") == "0":  # onLoad
            continue
        assert f"onInput_{name}" in methods, name
        takes_value = len(methods[f"onInput_{name}"].args.args) == 2
        assert takes_value == (e.get("type") != "1"), f"{name}: a bang input takes no value, others one"
    for m in methods:
        if m.startswith("onInput_"):
            assert m[len("onInput_") :] in inputs, m
    calls = {
        n.func.attr
        for n in ast.walk(cls)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
        and n.func.value.id == "self"
    }  # fmt: skip
    for c in calls - set(methods) - BOX_API:
        assert c in outputs, f"self.{c}() is neither a method nor a declared output"
    assert set(outputs) <= calls, "every declared output is fired somewhere"
    used = {
        n.args[0].value
        for n in ast.walk(cls)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "getParameter"
        and n.args and isinstance(n.args[0], ast.Constant)
    }  # fmt: skip
    # A parameter read in a comprehension (x, y, z) counts too.
    used |= {c.value for c in ast.walk(cls) if isinstance(c, ast.Constant) and c.value in params}
    assert used == set(params), (used, set(params))


def test_links_join_existing_ports():
    diagram = ET.parse(XAR).getroot().find(q("Box")).find(q("Timeline")).find(q("BehaviorLayer"))
    diagram = diagram.find(q("BehaviorKeyframe")).find(q("Diagram"))
    root = ET.parse(XAR).getroot().find(q("Box"))
    ports = {0: {e.get("id"): e for e in root.findall(q("Input")) + root.findall(q("Output"))}}
    for b in diagram.findall(q("Box")):
        ports[int(b.get("id"))] = {e.get("id"): e for e in b.findall(q("Input")) + b.findall(q("Output"))}
    links = diagram.findall(q("Link"))
    assert links
    for link in links:
        src = ports[int(link.get("outputowner"))][link.get("indexofoutput")]
        dst = ports[int(link.get("inputowner"))][link.get("indexofinput")]
        # From a box's output or the parent's input, to a box's input or the parent's output.
        assert (src.tag == q("Output")) != (link.get("outputowner") == "0")
        assert (dst.tag == q("Input")) != (link.get("inputowner") == "0")


PY3_ONLY = (ast.JoinedStr, ast.AsyncFunctionDef, ast.Await, ast.Nonlocal, ast.YieldFrom, ast.NamedExpr)


@pytest.mark.parametrize("box, script", boxes(), ids=lambda v: v.get("name") if hasattr(v, "get") else "")
def test_box_scripts_are_python_2_7(box, script):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from lib2to3 import pygram, pytree
        from lib2to3.pgen2 import driver

    # lib2to3's grammar with the print statement is Python 2's.
    driver.Driver(pygram.python_grammar, convert=pytree.convert).parse_string(script + "\n")
    tree = ast.parse(script)
    for node in ast.walk(tree):
        assert not isinstance(node, PY3_ONLY), f"{type(node).__name__} is not Python 2.7"
        if isinstance(node, ast.FunctionDef):
            a = node.args
            assert not a.kwonlyargs and node.returns is None, "keyword-only arguments or annotations"
            assert all(x.annotation is None for x in a.args), "annotations are not Python 2.7"
        assert not isinstance(node, ast.Starred) or isinstance(getattr(node, "ctx", None), ast.Load)


# ------------------------------------------------------ running the boxes


class _Logger:
    """The box's logger: (level, message) lines."""

    def __init__(self):
        self.lines = []

    def __getattr__(self, level):
        if level not in ("debug", "info", "warning", "error", "fatal"):
            raise AttributeError(level)
        return lambda m: self.lines.append((level, m))


class GeneratedClass:
    """The part of Choregraphe's GeneratedClass the boxes use."""

    def __init__(self):
        pass

    def session(self):
        return self._session

    def getParameter(self, name):  # noqa: N802 (Choregraphe's name)
        return self._params[name]


def _value(p):
    kind, v = p.get("content_type"), p.get("value")
    return {"0": lambda s: s == "1", "1": int, "2": float, "3": str}[kind](v)


def make_box(name, session, xar: Path = XAR, **params):
    box, script = next((b, s) for b, s in boxes(xar) if b.get("name") == name)
    ns = {"GeneratedClass": GeneratedClass}
    exec(compile(script, name, "exec"), ns)
    obj = ns["MyClass"]()
    obj._session = session
    obj._params = {k: _value(p) for k, p in io(box, "Parameter").items()}
    obj._params.update(params)
    obj.logger = _Logger()
    obj.fired = []
    for out in io(box, "Output"):
        setattr(obj, out, lambda value=None, _n=out: obj.fired.append((_n, value)))
    obj.onLoad()
    return obj


def start(obj, value=None):
    m = obj.onInput_onStart
    m(value) if len(inspect.signature(m).parameters) == 1 else m()


def test_reach_to_box_moves_the_arm(awake):
    box = make_box("Reach To", awake.user, speed=1.0)
    target = kinematics.forward(arm_model("RArm"), [0.3, -0.4, 0.5, 0.8, 0.0])
    start(box, target.tolist())  # the dynamic [x, y, z] input
    assert box.fired[0][0] == "onReached" and box.fired[0][1][0] < 1e-4
    cmd = awake.moves()[-1]
    assert cmd["names"][0] == "RShoulderPitch"
    hand = awake.motion.getPosition("RArm", 0, True)[:3]  # it waited for the arm
    assert sum((a - b) ** 2 for a, b in zip(hand, target)) ** 0.5 < 1e-3
    start(box)  # a bang: the parameters' point
    assert box.fired[1][0] == "onReached"


def test_reach_to_box_reports_failures(awake):
    box = make_box("Reach To", awake.user)
    start(box, [0.6, 0.1, 0.1])
    name, (error, reason) = box.fired[-1]
    assert name == "onFailed" and error > 0.3 and reason == "out of reach"  # the service's reason, as it is
    start(box, [0.1, "a", 0.1])
    assert box.fired[-1][0] == "onFailed" and "bad target" in box.fired[-1][1][1]
    bad = make_box("Reach To", awake.user, method="ccd")
    start(bad)
    assert bad.fired[-1][0] == "onFailed" and "unknown method 'ccd'" in bad.fired[-1][1][1]


def test_reach_to_box_without_the_service(stack):
    stack.server.unregisterService(stack.service_id)
    # The user's session learns of it by a signal (its proxy cache): once it has, the box finds no service.
    end = time.monotonic() + 10
    while time.monotonic() < end:
        try:
            stack.user.service("NaoArmIK")
        except RuntimeError:
            break
        time.sleep(0.01)
    box = make_box("Reach To", stack.user)
    start(box)
    assert box.fired[-1][0] == "onFailed" and "NaoArmIK" in box.fired[-1][1][1]


def test_compute_angles_box_does_not_move(awake):
    box = make_box("Compute Angles", awake.user)
    start(box)
    name, (names, angles, error, reached) = box.fired[-1]
    assert name == "onComputed" and reached and error < 1e-4 and names[0] == "LShoulderPitch" and len(angles) == 5
    assert awake.moves() == []


def run_diagram(session, xar: Path = XAR, params=lambda name: {}):
    """Follow the diagram's links from root.onStart, each box made from ``xar`` with its parameters and
    ``params(its name)``. Returns the root's outputs fired, [(name, value)], and the boxes by name."""
    root = ET.parse(xar).getroot().find(q("Box"))
    diagram = root.find(q("Timeline")).find(q("BehaviorLayer")).find(q("BehaviorKeyframe")).find(q("Diagram"))
    objs, ports, by_name = {}, {}, {}
    ports["0"] = {e.get("id"): e.get("name") for e in root.findall(q("Output"))}
    for b in diagram.findall(q("Box")):
        objs[b.get("id")] = by_name[b.get("name")] = make_box(b.get("name"), session, xar, **params(b.get("name")))
        ports[b.get("id")] = {e.get("id"): e.get("name") for e in b.findall(q("Input")) + b.findall(q("Output"))}
    links = [(lk.get("outputowner"), lk.get("indexofoutput"), lk.get("inputowner"), lk.get("indexofinput"))
             for lk in diagram.findall(q("Link"))]  # fmt: skip
    ended = []

    def fire(owner, port, value=None):
        for src, sport, dst, dport in links:
            if (src, sport) == (owner, port):
                if dst == "0":
                    ended.append((ports["0"][dport], value))
                    continue
                obj = objs[dst]
                method = getattr(obj, "onInput_" + ports[dst][dport])
                before = len(obj.fired)
                method(value) if len(inspect.signature(method).parameters) == 1 else method()
                for name, v in obj.fired[before:]:
                    out_id = next(i for i, n in ports[dst].items() if n == name)
                    fire(dst, out_id, v)

    fire("0", "2")  # root.onStart
    return ended, by_name


class Speech:
    """A stand-in for ALTextToSpeech: what it was asked to say."""

    def __init__(self):
        self.said = []

    def say(self, text):
        self.said.append(text)


def test_the_example_behaviour_runs_end_to_end(stack):
    """Follow the diagram's links from root.onStart: wake up, three reaches, rest."""
    t0 = time.monotonic()
    ended, _ = run_diagram(stack.user, params=lambda name: {"speed": 1.0} if name.startswith("Reach") else {})
    assert ended == [("onStopped", None)], "the behaviour reached root.onStopped"
    moves = stack.moves()
    assert len(moves) == 3 and [m["names"][0] for m in moves] == ["LShoulderPitch", "RShoulderPitch", "LShoulderPitch"]
    assert [c["method"] for c in stack.stub.getRecordedCommands()][-1] == "rest"
    assert stack.stub.getViolations() == [] and time.monotonic() - t0 < 30


@pytest.mark.parametrize("speaks", [True, False], ids=["speech", "no-speech"])
def test_a_failed_reach_is_said_logged_and_ends_the_behaviour_on_its_failure_output(stack, speaks):
    """The second reach fails: Say Why logs the reason, says it (when the robot has ALTextToSpeech), and the
    behaviour ends on root.onFailed with it; the third reach and the rest never run."""
    speech = Speech()
    if speaks:
        stack.robot.session.registerService("ALTextToSpeech", speech)

    def params(name):
        return {"speed": 1.0, "method": "ccd"} if name == "Reach To (2)" else {"speed": 1.0}

    ended, boxes_ = run_diagram(stack.user, params=params)
    assert len(ended) == 1 and ended[0][0] == "onFailed" and "unknown method 'ccd'" in ended[0][1], ended
    reason = ended[0][1]
    assert ("error", f"I could not reach the point: {reason}") in boxes_["Say Why"].logger.lines
    if speaks:  # one short sentence: the reason's beginning, without the exception's type
        (said,) = speech.said
        assert said.startswith("I could not reach the point: unknown method 'ccd'") and said.endswith("."), said
        assert "Error" not in said and len(said) <= len("I could not reach the point: .") + 80, said
    else:
        assert any("cannot speak" in m for _, m in boxes_["Say Why"].logger.lines)
    assert [m["names"][0] for m in stack.moves()] == ["LShoulderPitch"]  # the first reach only
    assert boxes_["Reach To (3)"].fired == [] and "rest" not in [c["method"] for c in stack.stub.getRecordedCommands()]


def test_every_method_parameter_defaults_to_the_service_default_and_offers_analytic():
    """The empty method is the service's default (analytic: the computer's service and the robot runtime have it)."""
    methods = [p for b, _ in boxes() for p in io(b, "Parameter").values() if p.get("name") == "method"]
    assert len(methods) >= 7
    for p in methods:
        choices = [c.get("value") for c in p.findall(q("Choice"))]
        assert p.get("value") == p.get("default_value") == "" and "" in choices and "analytic" in choices, choices


def test_track_path_box_follows_a_line(awake):
    box = make_box("Track Path", awake.user)
    path = [[0.15, 0.12 + 0.004 * k, 0.08 + 0.002 * k] for k in range(15)]
    start(box, path)
    name, (rms, completed) = box.fired[-1]
    assert name == "onDone" and completed and rms < 1e-4
    assert len(awake.moves()) == 15
    start(box, "not a path")
    assert box.fired[-1][0] == "onFailed" and "list of [x, y, z]" in box.fired[-1][1][1]


def test_reach_pose_box_turns_the_hand(awake):
    q = [0.4, 0.5, -0.3, -0.9, 0.7]
    pose = forward_pose(arm_model("LArm"), q)
    box = make_box("Reach Pose", awake.user, speed=1.0, **dict(zip(("x", "y", "z", "wx", "wy", "wz"), pose)))
    start(box)  # a bang: the parameters' pose, metres and radians
    name, (pos, rot, reason) = box.fired[-1]
    assert name == "onReached" and pos <= 1e-4 and rot <= math.radians(0.1), box.fired
    now = awake.motion.getAngles(list(arm_model("LArm").names), True)
    sent = awake.moves()[-1]["angles"]
    assert max(abs(a - b) for a, b in zip(now, sent)) < 0.06  # it waited for the arm (getArmState's 0.06 rad)
    awake.wait_still(list(arm_model("LArm").names))
    np.testing.assert_allclose(awake.motion.getPosition("LArm", 0, True), pose, atol=1e-3)
    right = forward_pose(arm_model("RArm"), [0.1, -0.4, 0.6, 1.1, -0.5])
    rbox = make_box("Reach Pose", awake.user, speed=1.0, arm="RArm")
    start(rbox, right)  # a position6D list: metres and radians
    assert rbox.fired[-1][0] == "onReached"
    assert awake.moves()[-1]["names"][0] == "RShoulderPitch"


def test_reach_pose_box_reports_failures(awake):
    # Turned where the arm cannot: the box says what the service says is left of the pose, in its words.
    old = dict(x=0.15, y=0.12, z=0.08, wx=0.0, wy=0.0)
    box = make_box("Reach Pose", awake.user, wz=-math.pi / 2, **old)
    start(box)
    name, (pos, rot, reason) = box.fired[-1]
    assert name == "onFailed" and rot > 0.01, box.fired
    assert reason == f"orientation: {math.degrees(rot):.3g} degrees off"
    # Turned outward (wz +90 degrees): the best compromise puts the hand 7.6 mm from the head by the robot's
    # measured shapes, within the margin: nothing is sent, and the box says why at once (it waits for nothing).
    inside = make_box("Reach Pose", awake.user, wz=math.pi / 2, **old)
    before = len(awake.moves())
    start(inside)
    name, (pos, rot, reason) = inside.fired[-1]
    assert name == "onFailed" and reason == "collision: head" and len(awake.moves()) == before
    start(box, [0.1, "a", 0.1, 0, 0, 0])
    assert box.fired[-1][0] == "onFailed" and "bad pose" in box.fired[-1][1][2]
    bad = make_box("Reach Pose", awake.user, mask="everything")
    start(bad)
    assert bad.fired[-1][0] == "onFailed" and "unknown axis mask" in bad.fired[-1][1][2]
    wrong = make_box("Reach Pose", awake.user, method="fabrik")
    start(wrong)
    assert wrong.fired[-1][0] == "onFailed" and "pose method" in wrong.fired[-1][1][2]


# ------------------------------------- the frames, pose, both-arms and hand boxes


def test_reach_to_box_takes_a_frame(awake):
    """A target in FRAME_ROBOT (and arm auto: the side from the torso transform) lands where ALMotion says."""
    target = kinematics.forward(arm_model("RArm"), [0.3, -0.4, 0.5, 0.8, 0.0])
    torso = np.array(awake.motion.getTransform("Torso", 2, True)).reshape(4, 4)
    robot = (torso[:3, :3] @ target + torso[:3, 3]).tolist()
    box = make_box("Reach To", awake.user, speed=1.0, frame="FRAME_ROBOT")
    start(box, robot)
    assert box.fired[-1][0] == "onReached", box.fired
    assert awake.moves()[-1]["names"][0] == "RShoulderPitch"
    np.testing.assert_allclose(awake.motion.getPosition("RArm", 2, True)[:3], robot, atol=1e-3)


def test_point_at_box(awake):
    box = make_box("Point At", awake.user, speed=1.0)
    start(box)  # the parameters: 1 m ahead, 0.5 m left, 0.3 m up in FRAME_ROBOT
    name, value = box.fired[-1]
    assert name == "onPointed" and value[0] < 1e-3, box.fired
    near = make_box("Point At", awake.user, frame="FRAME_TORSO")
    start(near, [0.0, 0.098, 0.1])  # the shoulder itself: nothing to point at
    assert near.fired[-1][0] == "onFailed" and "within the hand's reach" in near.fired[-1][1][1], near.fired
    own_speed_only(awake)


def own_speed_only(awake):
    """The boxes moved at their own speed parameter (1.0), and left the service's default alone."""
    assert awake.moves() and {m["speed"] for m in awake.moves()} == {1.0}
    assert awake.ik.getSpeed() == pytest.approx(0.2)


def test_reach_both_box(awake):
    box = make_box("Reach Both", awake.user, speed=1.0)
    start(box)
    assert box.fired[-1][0] == "onReached" and max(box.fired[-1][1]) < 1e-4, box.fired
    assert len(awake.moves()) == 1 and len(awake.moves()[0]["names"]) == 10
    start(box, [[0.15, 0.12], [0.1, -0.1, 0.0]])
    name, (left, right, reason) = box.fired[-1]
    assert name == "onFailed" and left is right is None and "left must be" in reason
    own_speed_only(awake)


def test_grasp_and_hand_boxes(awake):
    hand = make_box("Open/Close Hand", awake.user, speed=1.0)
    hand.onInput_onOpen()
    assert hand.fired[-1] == ("onDone", [1.0])
    grasp = make_box("Grasp", awake.user, speed=1.0)
    # Out to the side (ShoulderRoll 0.6): the approach's straight motion keeps well clear of the torso, so its last
    # check before setAngles, from wherever the arm settled at the pre-grasp point, passes whatever the timing.
    target = kinematics.forward(arm_model("LArm"), [0.3, 0.6, -0.6, -0.9, 0.0]).tolist()
    start(grasp, target)
    assert grasp.fired[-1] == ("onGrasped", ["preGrasp", "open", "approach", "close", "lift"]), grasp.fired
    start(grasp, [0.5, 0.1, 0.0])
    assert grasp.fired[-1][0] == "onFailed" and grasp.fired[-1][1][0] == "preGrasp"
    hand.onInput_onClose()
    assert hand.fired[-1] == ("onDone", [0.0])
    own_speed_only(awake)
