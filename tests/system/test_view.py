"""The live view (extra 'view'): its scene against the kinematics, recording and replay, who may use it
(its own address, its own page, the run's token), and the page in a real headless Chromium following a
reach made over qi."""

from __future__ import annotations

import http.client
import json
import re
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

pytest.importorskip("viser", reason="the view needs the 'view' extra (pip install 'nao-ik[view]')")

from nao_ik.kinematics.chain import forward  # noqa: E402
from nao_ik.model.arm import arm_model  # noqa: E402
from nao_ik.tools.view import page  # noqa: E402
from nao_ik.tools.view.browser import Browser, find_chromium  # noqa: E402
from nao_ik.tools.view.record import Recorder, read_recording  # noqa: E402
from nao_ik.tools.view.scene import VIEW_JOINTS  # noqa: E402
from nao_ik.tools.view.sources import ReplayMotion  # noqa: E402
from nao_ik.tools.view.viewer import Viewer, ViewOptions, screen_point  # noqa: E402
from tests.unit.test_cli import ENV, PY, free_port, wait_for_line  # noqa: E402

EVIL = "http://evil.example"

HAND = re.compile(r"(LArm|RArm) hand: (-?[\d.]+), (-?[\d.]+), (-?[\d.]+) mm")


class CountingMotion:
    """getAngles of a robot standing still, counting the calls."""

    def __init__(self):
        self.calls = 0

    def getAngles(self, names, useSensors):  # noqa: N802, N803
        self.calls += 1
        return [0.1] * len(names)


def page_hands(text: str) -> dict:
    """The hands the page shows, metres."""
    return {m[1]: np.array([float(m[2]), float(m[3]), float(m[4])]) / 1e3 for m in HAND.finditer(text)}


def test_the_scene_draws_the_hands_where_the_kinematics_puts_them():
    viewer = Viewer(CountingMotion(), options=ViewOptions(port=0))
    try:
        rng = np.random.default_rng(3)
        for _ in range(5):
            angles = {}
            for arm in ("LArm", "RArm"):
                m = arm_model(arm)
                angles.update(zip(m.names, rng.uniform(m.lower, m.upper)))
            viewer.scene.show(angles)
            for arm in ("LArm", "RArm"):
                expected = forward(arm_model(arm), [angles[n] for n in arm_model(arm).names])
                np.testing.assert_allclose(viewer.scene.world_position(arm), expected, atol=1e-9)
                np.testing.assert_allclose(getattr(viewer.scene.hands, arm), expected, atol=1e-12)
    finally:
        viewer.stop()


def test_an_unwatched_view_reads_nothing_and_a_recording_one_reads(tmp_path):
    idle, recording = CountingMotion(), CountingMotion()
    with (
        Viewer(idle, options=ViewOptions(port=0)),
        Viewer(recording, options=ViewOptions(port=0, rate=50, record=str(tmp_path / "r.jsonl"))),
    ):
        time.sleep(0.6)
    assert idle.calls == 0
    assert recording.calls >= 10


def test_recording_round_trip_and_replay(tmp_path):
    path = str(tmp_path / "rec.jsonl")
    rec = Recorder(path, ["A", "B"], 50.0, "test")
    assert rec.sample(0.0, [0.0, 1.0])
    assert not rec.sample(0.02, [0.0, 1.0])  # unchanged: not written
    assert rec.sample(0.04, [0.5, 1.0])
    rec.event(0.05, [0.1, 0.2, 0.3], {"arm": "LArm", "reached": True, "error": float("nan")})
    rec.sample(1.0, [0.7, -1.0])
    rec.close()
    r = read_recording(path)
    assert r.names == ("A", "B") and list(r.times) == [0.0, 0.04, 1.0]
    assert list(r.at(0.03)) == [0.0, 1.0] and list(r.at(0.5)) == [0.5, 1.0] and list(r.at(9)) == [0.7, -1.0]
    assert r.events[0]["target"] == [0.1, 0.2, 0.3] and r.events[0]["answer"]["error"] is None
    clock = [100.0]
    replay = ReplayMotion(r, speed=2.0, loop=False, clock=lambda: clock[0])
    clock[0] += 0.25  # recording time 0.5
    assert replay.getAngles(["B", "A", "C"], True) == [1.0, 0.5, 0.0]
    assert replay.target_at(0)["answer"]["arm"] == "LArm"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"t": 2.0, "q": [1.0]}) + "\n")
    with pytest.raises(ValueError, match="line 6"):
        read_recording(path)


def test_the_answer_shows_the_fields_it_has():
    base = {"arm": "LArm", "method": "dls", "reached": True, "error": 2e-5, "solveTimeMs": 0.31, "clamped": []}
    text = page.answer_markdown(base)
    assert "reached: yes" in text and "error: 0.020 mm" in text and "solveTimeMs: 0.310 ms" in text
    assert "jointChange" not in text and "moveSeconds" not in text
    text = page.answer_markdown(dict(base, jointChange=0.42, moveSeconds=1.5))
    assert "jointChange: 0.420 rad" in text and "moveSeconds: 1.500 s" in text


def _get(port: int, path: str, host: str | None = None, headers: dict | None = None) -> tuple[int, str | None, str]:
    """A plain HTTP GET to the view with the Host header given: (status, Set-Cookie, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest("GET", path, skip_host=True)
        conn.putheader("Host", host or f"127.0.0.1:{port}")
        for key, value in (headers or {}).items():
            conn.putheader(key, value)
        conn.endheaders()
        r = conn.getresponse()
        return r.status, r.getheader("Set-Cookie"), r.read().decode("utf-8", "replace")
    finally:
        conn.close()


def _websocket(port: int, path: str, origin: str | None, headers: dict | None = None) -> int | bytes:
    """Open the view's websocket as viser's client does: its first message, or the HTTP status refusing it."""
    import viser
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    try:
        with connect(
            f"ws://127.0.0.1:{port}{path}",
            origin=origin,
            subprotocols=[f"viser-v{viser.__version__}"],
            additional_headers=headers,
            open_timeout=10,
        ) as ws:
            return ws.recv(timeout=10)
    except InvalidStatus as e:
        return e.response.status_code


def _port_token(viewer: Viewer) -> tuple[int, str]:
    """The view's port and the token its printed address carries ("" if none)."""
    return viewer.server.get_port(), parse_qs(urlsplit(viewer.url).query).get("token", [""])[0]


@pytest.fixture
def view():
    viewer = Viewer(CountingMotion(), options=ViewOptions(port=0))
    try:
        yield viewer
    finally:
        viewer.stop()


def test_the_url_carries_a_fresh_token(view):
    assert re.fullmatch(rf"http://127\.0\.0\.1:{view.server.get_port()}/\?token=[\w-]{{32,}}", view.url)
    with Viewer(CountingMotion(), options=ViewOptions(port=0)) as other:
        assert _port_token(other)[1] != _port_token(view)[1] and other.token == _port_token(other)[1]


def test_the_page_refuses_a_foreign_host(view):
    port, token = _port_token(view)
    for host in ("evil.example", f"evil.example:{port}", f"127.0.0.1.evil.example:{port}", f"127.0.0.1:{port + 1}"):
        status, cookie, _ = _get(port, f"/?token={token}", host=host)
        assert status == 403 and cookie is None, host
    # With the token, the view's own names work (it listens on loopback).
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
        status, _, body = _get(port, f"/?token={token}", host=host)
        assert status == 200 and "<html" in body.lower(), host


def test_the_page_refuses_a_missing_or_wrong_token(view):
    port, token = _port_token(view)
    for path in ("/", "/index.html", "/?token=", f"/?token={token[:-1]}", f"/?token={token}x", "/?tok=" + token):
        assert _get(port, path)[0] == 403, path
    status, cookie, body = _get(port, f"/?token={token}")
    assert status == 200 and "<html" in body.lower()
    assert cookie.startswith(f"nao-ik-view-{port}={token};") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    # The cookie it set lets the page in again; a wrong one does not.
    assert _get(port, "/", headers={"Cookie": f"nao-ik-view-{port}={token}"})[0] == 200
    assert _get(port, "/", headers={"Cookie": f"nao-ik-view-{port}=wrong"})[0] == 403


def test_the_websocket_refuses_a_foreign_origin(view):
    port, token = _port_token(view)
    for origin in (EVIL, f"{EVIL}:{port}", f"http://127.0.0.1:{port + 1}", "null", None):
        assert _websocket(port, f"/?token={token}", origin) == 403, origin
    assert not view.server.get_clients()


def test_the_websocket_refuses_a_missing_or_wrong_token(view):
    port, token = _port_token(view)
    own = f"http://127.0.0.1:{port}"
    assert _websocket(port, "/", own) == 403
    assert _websocket(port, "/?token=wrong", own) == 403
    assert _websocket(port, "/", own, {"Cookie": f"nao-ik-view-{port}=wrong"}) == 403
    assert _websocket(port, "/", own, {"Cookie": f"nao-ik-view-{port + 1}={token}"}) == 403  # another view's cookie
    assert not view.server.get_clients()
    # The right token with the view's own origin: in the query, or as viser's client sends it (no query, the
    # cookie the page set).
    assert isinstance(_websocket(port, f"/?token={token}", own), bytes)
    cookie = {"Cookie": f"other=1; nao-ik-view-{port}={token}"}
    assert isinstance(_websocket(port, "/", f"http://localhost:{port}", cookie), bytes)


def test_the_hosts_a_view_answers_to_follow_the_address_it_listens_on():
    from nao_ik.tools.view.guard import Guard

    lan, anywhere, v6 = Guard("192.168.1.5"), Guard("0.0.0.0"), Guard("::1")
    assert lan.host_allowed("192.168.1.5:8080", 8080) and not lan.host_allowed("localhost:8080", 8080)
    assert not lan.host_allowed("192.168.1.5:8081", 8080) and not lan.host_allowed("192.168.1.5", 8080)
    assert anywhere.host_allowed("10.0.0.7:8080", 8080) and anywhere.host_allowed("[fe80::1]:8080", 8080)
    assert not anywhere.host_allowed("evil.example:8080", 8080)  # a name could be rebound; an IP cannot
    assert v6.host_allowed("[::1]:8080", 8080) and v6.host_allowed("localhost:8080", 8080)
    for bad in ("", "127.0.0.1:80:80", "[::1", "127.0.0.1:x", "127.0.0.1:8080@evil.example"):
        assert not Guard("127.0.0.1").host_allowed(bad, 8080), bad
    assert Guard("127.0.0.1").origin_allowed("http://localhost:8080", 8080)
    assert not Guard("127.0.0.1").origin_allowed("https://localhost:8080", 8080)


class RecordingSession:
    """A qi session that records which services are asked for; NaoArmIK answers every reach."""

    def __init__(self):
        self.services: list[str] = []
        self.reaches: list[tuple] = []

    def service(self, name):
        self.services.append(name)
        session = self

        class IK:
            def getMethods(self):  # noqa: N802
                return ["dls"]

            def reachTo(self, *args):  # noqa: N802
                session.reaches.append(args)
                return {"arm": "LArm", "reached": True, "error": 0.0}

        return IK()


def test_every_control_of_the_page_goes_through_naoarmik_only():
    session = RecordingSession()
    with Viewer(CountingMotion(), session, ViewOptions(port=0)) as viewer:
        buttons = [w for w in viewer.panel if type(w).__name__ == "GuiButtonHandle"]
        labels = sorted(b.label for b in buttons)
        assert labels == ["Clear trail", "Reach"], labels
        for button in buttons:  # press each as the page would
            for callback in list(button._impl.update_cb):
                callback(None)
    assert session.reaches and set(session.services) == {"NaoArmIK"}, session.services


def test_commands_have_help_with_an_example():
    for command in ("view", "view-cost"):
        out = subprocess.run(PY + [command, "--help"], capture_output=True, text=True, env=ENV, timeout=60)
        assert out.returncode == 0 and "example" in out.stdout


def _png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.fixture
def browser():
    if find_chromium() is None:
        pytest.skip("no Chromium on this machine (Debian: apt-get install chromium; .ci/run installs it as root)")
    with Browser(width=1000, height=700) as b:
        yield b


def _wait_hand(b: Browser, arm: str, target, timeout: float = 10.0) -> dict:
    end = time.monotonic() + timeout
    while True:
        hands = page_hands(b.text())
        if arm in hands and np.linalg.norm(hands[arm] - target) < 1e-3:
            return hands
        if time.monotonic() > end:
            raise AssertionError(f"the page shows the {arm} hand at {hands.get(arm)}, not at {target}")
        time.sleep(0.1)


def test_the_page_in_a_real_browser_follows_reaches_over_qi(awake, browser, tmp_path):
    stack = awake
    stack.ik.setSpeed(1.0)
    record = tmp_path / "session.jsonl"
    viewer = Viewer(stack.stub, stack.user, ViewOptions(port=0, record=str(record)), source="test robot")
    try:
        assert viewer.url.startswith("http://127.0.0.1:") and "?token=" in viewer.url
        browser.open(viewer.url)
        before = page_hands(browser.wait_for_text("LArm hand"))
        target = np.array([0.12, 0.18, 0.05])
        assert np.linalg.norm(before["LArm"] - target) > 0.05  # the hand starts far from it
        answer = stack.ik.reachTo(*map(float, target), "dls")  # a client of the service, not the page
        assert answer["reached"]
        _wait_hand(browser, "LArm", target)
        np.testing.assert_allclose(viewer.scene.world_position("LArm"), target, atol=1e-3)
        # The page's own path: its Reach button calls NaoArmIK.reachTo with the page's target.
        moves = len(stack.moves())
        browser.click_button("Reach")
        text = browser.wait_for_text("reached: yes")
        assert "answer (LArm" in text and len(stack.moves()) == moves + 1
        _wait_hand(browser, "LArm", np.array(page.START_TARGET))
        assert "hand to target: 0.0 mm" in browser.wait_for_text("hand to target: 0.0 mm")
        # Drag the gizmo's z arrow (drawn from the target up) 40 pixels up with the mouse: on release the page
        # reaches the gizmo's new position.
        browser.close_notices()
        time.sleep(0.5)
        grip = screen_point(np.add(page.START_TARGET, (0.0, 0.0, 0.045)), 1000, 700)
        browser.drag(grip, (grip[0], grip[1] - 40))
        end = time.monotonic() + 10
        # The command reaches the robot before reachTo's answer reaches the page: wait for both.
        while (len(stack.moves()) < moves + 2 or np.allclose(viewer.last_target, page.START_TARGET)) and (
            time.monotonic() < end
        ):
            time.sleep(0.05)
        dragged = np.asarray(viewer.gizmo.position, dtype=float)
        assert len(stack.moves()) == moves + 2, "releasing the gizmo made no reach"
        assert dragged[2] > page.START_TARGET[2] + 0.01 and np.allclose(dragged[:2], page.START_TARGET[:2], atol=1e-3)
        np.testing.assert_allclose(viewer.last_target, dragged)
        _wait_hand(browser, "LArm", dragged)
        shot = tmp_path / "view.png"
        size = browser.screenshot(str(shot))
        assert _png_size(shot) == (1000, 700) and size == shot.stat().st_size > 40_000
    finally:
        viewer.stop()
    rec = read_recording(str(record))
    left = [rec.names.index(n) for n in arm_model("LArm").names]
    np.testing.assert_allclose(forward(arm_model("LArm"), rec.angles[-1, left]), dragged, atol=1e-3)
    np.testing.assert_allclose([e["target"] for e in rec.events], [page.START_TARGET, dragged])


def _http(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode("utf-8", "replace")


def test_sim_view_record_and_replay_commands(tmp_path):
    qi = pytest.importorskip("qi")
    url = f"tcp://127.0.0.1:{free_port()}"
    record = tmp_path / "robot.jsonl"
    procs = []

    def start(args):
        procs.append(subprocess.Popen(PY + args, stdout=subprocess.PIPE, text=True, env=ENV))
        return procs[-1]

    try:
        sim = start(["sim", "--listen", url, "--view", "--view-port", "0"])
        wait_for_line(sim, "simulated robot listening at")
        page_url = wait_for_line(sim, "view: http://127.0.0.1:").split()[1]
        assert "<html" in _http(page_url).lower() and "?token=" in page_url
        with pytest.raises(urllib.error.HTTPError, match="403"):
            _http(page_url.split("?")[0])
        view = start(["view", "--qi-url", url, "--port", "0", "--rate", "20", "--record", str(record)])
        wait_for_line(view, "view: http://127.0.0.1:")
        user = qi.Session()
        user.connect(url)
        motion = user.service("ALMotion")
        motion.wakeUp()
        motion.setAngles(["LShoulderPitch", "HeadYaw"], [0.5, 0.3], 1.0)
        time.sleep(1.5)
        user.close()
        view.terminate()
        view.wait(timeout=20)
        rec = read_recording(str(record))
        assert rec.names == VIEW_JOINTS and rec.header["source"] == url and rec.header["rate"] == 20
        assert rec.angles[-1, rec.names.index("LShoulderPitch")] == pytest.approx(0.5)
        assert rec.angles[-1, rec.names.index("HeadYaw")] == pytest.approx(0.3)
        assert len(rec.times) >= 3  # the motion, sampled on the way
        replay = start(["view", "--replay", str(record), "--port", "0"])
        assert "<html" in _http(wait_for_line(replay, "view: http://127.0.0.1:").split()[1]).lower()
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(timeout=20)


def test_demo_serves_the_view_while_it_runs(tmp_path, capsys):
    from nao_ik import cli

    argv = ["demo", "--out", str(tmp_path), "--methods", "dls", "--view", "--view-port", "0", "--rounds", "0"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert re.search(r"^view: http://127\.0\.0\.1:\d+/\?token=[\w-]+ ", out, re.M) and "| dls | in front, left |" in out


def test_the_view_stays_off_the_core_path():
    code = (
        "import sys, nao_ik, nao_ik.cli, nao_ik.tools.demo, nao_ik.service.serve, nao_ik.service.surface, "
        "sim_stub.robot; "
        "print(sorted(m for m in sys.modules if m.startswith(('viser', 'nao_ik.tools.view'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr
