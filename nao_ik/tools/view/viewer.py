"""The live view: reads a robot's joint angles, draws them, and turns the page's target into reaches.

A :class:`Viewer` runs a viser server (loopback unless told otherwise) and one
thread. While a browser is connected (or a recording is being written) the
thread reads the joint angles at ``rate`` Hz, turns the scene's joints that
moved, extends the hands' trails, and updates the panel's text; with no
browser and no recording it sleeps until one connects, so the robot's
process pays nothing for an unwatched view.

Reaches from the page (the gizmo released, or the Reach button) call
``NaoArmIK.reachTo`` (``reachToWithArm`` when an arm is chosen) over the qi
session given, as any client would: the page's controls go through NaoArmIK's
checks and nothing else (no ALMotion call; waking the robot and resting it are
left to the operator's own program). Only the view's own page, with the run's
token, can use it (:mod:`.guard`).
"""

from __future__ import annotations

import contextlib
import io
import math
import threading
import time
from typing import Any, NamedTuple, Sequence

import numpy as np

from . import page
from .guard import TOKEN_PARAM, Guard, guarded_serve, url_host
from .record import Recorder
from .scene import VIEW_JOINTS, RobotScene

IDLE_CHECK = 5.0  # s: with nobody watching the loop sleeps until a browser connects (this is a safety net)
PANEL_EVERY = 5  # frames between updates of the panel's text and the trails
RETRY = 1.0  # s before reading again after the robot failed to answer
LOOPBACK = "127.0.0.1"


class Camera(NamedTuple):
    """Where the page's camera starts (FRAME_TORSO; the up direction is +z)."""

    position: tuple[float, float, float]
    look_at: tuple[float, float, float]
    fov: float  # vertical field of view, degrees


#: In front of the robot and to its left, looking at the chest.
CAMERA = Camera((0.62, 0.40, 0.20), (0.03, 0.0, -0.03), 75.0)


def screen_point(point: Sequence[float], width: int, height: int, camera: Camera = CAMERA) -> tuple[float, float]:
    """Where ``point`` (FRAME_TORSO, m) appears on a ``width`` x ``height`` page seen from ``camera`` (pixels).

    The pinhole projection of the browser's camera (three.js, +z up), for
    driving the page with a mouse: a test drags the target gizmo with it.
    """
    eye = np.asarray(camera.position, dtype=float)
    forward = np.asarray(camera.look_at, dtype=float) - eye
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, (0.0, 0.0, 1.0))
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    d = np.asarray(point, dtype=float) - eye
    depth = float(d @ forward)
    scale = height / 2 / math.tan(math.radians(camera.fov) / 2) / depth
    return (width / 2 + float(d @ right) * scale, height / 2 - float(d @ up) * scale)


class ViewOptions(NamedTuple):
    """Where and how fast the view runs.

    Attributes:
        host: the address the page listens on (loopback by default).
        port: its port (the next free one if taken; 0 for any).
        rate: joint readings per second while watched (Hz).
        record: a file to record the joint trajectories to, or None.
    """

    host: str = LOOPBACK
    port: int = 8080
    rate: float = 50.0
    record: str | None = None


class Viewer:
    """A live view of a robot.

    Args:
        motion: what the angles are read from: anything with ALMotion's
            ``getAngles(names, useSensors)`` (the stub in process, an ALMotion
            proxy over qi, a :class:`~.sources.ReplayMotion`).
        session: the qi session reaches are made over (``NaoArmIK`` only);
            None: no reaches (a replay).
        options: :class:`ViewOptions` (default: loopback, port 8080, 50 Hz).
        source: what the page says it shows (a URL, a file).
        methods: the method names to offer; default: ``NaoArmIK.getMethods()``,
            or the library's if the service is not registered yet.
    """

    def __init__(
        self,
        motion: Any,
        session: Any = None,
        options: ViewOptions | None = None,
        source: str = "",
        methods: Sequence[str] | None = None,
    ):
        import viser

        options = options or ViewOptions()
        if not 0.0 < options.rate <= 100.0:
            raise ValueError(f"view rate must be in (0, 100] Hz, got {options.rate!r}")
        self.motion = motion
        self.session = session
        self.options = options
        self.source = source
        self.guard = Guard(options.host)
        # viser prints a banner; the commands print the address their own way
        with _quiet(), guarded_serve(self.guard):
            self.server = viser.ViserServer(host=options.host, port=options.port, verbose=False)
        if not self.guard.installed:
            with _quiet():
                self.server.stop()
            raise RuntimeError("the view could not hook its access checks into viser's server; not serving it")
        self.server.initial_camera.position = CAMERA.position
        self.server.initial_camera.look_at = CAMERA.look_at
        self.server.initial_camera.fov = math.radians(CAMERA.fov)
        self.scene = RobotScene(self.server)
        self.panel = page.build_panel(self.server, methods or self._methods(), controls=session is not None)
        self.gizmo = None
        if session is not None:
            self._wire_controls()
        self.recorder = Recorder(options.record, VIEW_JOINTS, options.rate, source) if options.record else None
        self.last_target: tuple | None = None
        self.last_arm: str | None = None
        self.last_answer: dict | None = None
        self.frames = 0
        self._texts: dict[str, str] = {}
        self._reach_lock = threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()  # a browser connected, or stop: the idle loop's only alarm
        self.server.on_client_connect(lambda _client: self._wake.set())
        self._start = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="nao-ik-view", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """The page's address, with the run's token (the page refuses a request without it)."""
        return f"http://{url_host(self.options.host)}:{self.server.get_port()}/?{TOKEN_PARAM}={self.guard.token}"

    @property
    def token(self) -> str:
        """The run's token (see :mod:`.guard`)."""
        return self.guard.token

    # ------------------------------------------------------------------ reaches

    def reach(self, target: Sequence[float]) -> dict | None:
        """Reach ``target`` (FRAME_TORSO, m) over qi with the page's method and arm; the answer, or None if refused."""
        target = tuple(float(c) for c in target)
        arm = self.panel.arm.value
        method = page.method_argument(self.panel.method.value)
        with self._reach_lock:
            try:
                ik = self.session.service("NaoArmIK")
                if arm == "auto":
                    answer = ik.reachTo(*target, method)
                else:
                    answer = ik.reachToWithArm(arm, *target, method)
            except RuntimeError as e:
                self._set("answer", page.refusal_markdown(str(e)))
                return None
            answer = dict(answer)
            self.note_reach(target, answer)
            return answer

    def note_reach(self, target: Sequence[float], answer: dict) -> None:
        """Show a reach (made from the page, or by the caller in this process) and record it."""
        self.last_target = tuple(float(c) for c in target)
        self.last_arm = answer.get("arm")
        self.last_answer = answer
        self.scene.show_target(self.last_target)
        if self.gizmo is not None:
            self.gizmo.position = self.last_target
            self.panel.target.value = self.last_target
        self._set("answer", page.answer_markdown(answer))
        if self.recorder:
            self.recorder.event(time.monotonic() - self._start, self.last_target, answer)

    def _wire_controls(self) -> None:
        p = self.panel
        self.gizmo = self.server.scene.add_transform_controls(
            "/gizmo", scale=0.06, disable_rotations=True, depth_test=False, position=page.START_TARGET
        )

        @self.gizmo.on_update
        def _(event) -> None:
            if event.phase == "end":
                target = tuple(float(c) for c in event.target.position)
                p.target.value = target
                self.reach(target)

        page.on_click(p.reach, lambda: self.reach(p.target.value))
        page.on_click(p.clear_trail, self.scene.clear_trails)

        @p.target.on_update
        def _(_event) -> None:
            self.gizmo.position = tuple(float(c) for c in p.target.value)

    def _methods(self) -> list[str]:
        if self.session is not None:
            try:
                return list(self.session.service("NaoArmIK").getMethods())
            except RuntimeError:
                pass
        from ...api.position import METHODS

        return list(METHODS)

    # --------------------------------------------------------------------- loop

    def _run(self) -> None:
        period = 1.0 / self.options.rate
        due = time.monotonic()
        while not self._stop.is_set():
            watched = bool(self.server.get_clients())
            if not watched and self.recorder is None:
                self._wake.wait(IDLE_CHECK)
                self._wake.clear()
                due = time.monotonic()
                continue
            if not self._frame(watched):
                self._stop.wait(RETRY)
                due = time.monotonic()
                continue
            due += period
            delay = due - time.monotonic()
            if delay < -period:  # fell behind (a slow robot): start counting again
                due, delay = time.monotonic(), 0.0
            self._stop.wait(max(delay, 0.0))

    def _frame(self, watched: bool) -> bool:
        now = time.monotonic() - self._start
        try:
            q = self.motion.getAngles(list(VIEW_JOINTS), True)
        except RuntimeError as e:
            self._set("status", page.refusal_markdown(f"cannot read the joints from {self.source}: {e}"))
            return False
        if self.recorder:
            self.recorder.sample(now, q)
        if watched:
            hands = self.scene.show(dict(zip(VIEW_JOINTS, q)))
            if self.frames % PANEL_EVERY == 0:
                self.scene.draw_trails()
                self._set("hands", page.hands_markdown(hands._asdict(), self.last_target, self.last_arm))
                clients = len(self.server.get_clients())
                source = f"**{self.source}** · " if self.source else ""
                self._set("status", f"{source}{self.options.rate:g} Hz · {clients} browser(s)")
                target = getattr(self.motion, "target_at", None)
                if target is not None:
                    self._show_replayed_target(target(now))
            self.frames += 1
        return True

    def _show_replayed_target(self, event: dict | None) -> None:
        if event is not None and tuple(event["target"]) != self.last_target:
            self.last_target = tuple(event["target"])
            self.last_arm = event["answer"].get("arm")
            self.scene.show_target(self.last_target)
            self._set("answer", page.answer_markdown(event["answer"]))

    def _set(self, which: str, text: str) -> None:
        """Set a panel text if it changed (each change is a message to every browser)."""
        if self._texts.get(which) != text:
            self._texts[which] = text
            getattr(self.panel, which).content = text

    def hands(self) -> dict[str, np.ndarray] | None:
        """The hands as last drawn (FRAME_TORSO, m), or None before the first frame."""
        return None if self.scene.hands is None else self.scene.hands._asdict()

    def text(self, which: str) -> str:
        """A panel text as last sent (``status``, ``hands``, ``answer``)."""
        return self._texts.get(which, "")

    def stop(self) -> None:
        """Stop the loop, the page and the recording."""
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=5)
        with _quiet():
            self.server.stop()
        if self.recorder:
            self.recorder.close()

    def __enter__(self) -> Viewer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _quiet():
    """Swallow what viser prints on stdout (its banner, "Server stopped")."""
    return contextlib.redirect_stdout(io.StringIO())
