"""The page's panel: status, hands, target and method controls, the last answer.

Widgets only; :mod:`.viewer` wires them to the robot. The texts are made by
plain functions so tests can read what the page shows.
"""

from __future__ import annotations

from typing import Callable, Mapping, NamedTuple, Sequence

import numpy as np

ARM_CHOICES = ("auto", "LArm", "RArm")
DEFAULT_METHOD_LABEL = "(service default)"
START_TARGET = (0.15, 0.12, 0.08)
#: The answer's fields the page lists, in this order, when the answer has them.
ANSWER_FIELDS = ("reached", "error", "solveTimeMs", "jointChange", "moveSeconds", "iterations", "clamped", "moved")


class Panel(NamedTuple):
    """The panel's widgets (viser GUI handles)."""

    status: object
    hands: object
    method: object
    arm: object
    target: object
    reach: object
    clear_trail: object
    answer: object


def build_panel(server, methods: Sequence[str], controls: bool = True) -> Panel:
    """Add the panel to a viser server.

    Args:
        server: the ``viser.ViserServer``.
        methods: the method names to offer.
        controls: False for a replay (no robot to command): the controls are hidden.

    Returns:
        The :class:`Panel`.
    """
    gui = server.gui
    status = gui.add_markdown("connecting...")
    hands = gui.add_markdown("")
    with gui.add_folder("Reach", visible=controls):
        method = gui.add_dropdown("method", (DEFAULT_METHOD_LABEL, *methods), initial_value=DEFAULT_METHOD_LABEL)
        arm = gui.add_dropdown("arm", ARM_CHOICES, initial_value="auto")
        target = gui.add_vector3("target (m)", START_TARGET, step=0.001)
        reach = gui.add_button("Reach")
    clear_trail = gui.add_button("Clear trail")
    answer = gui.add_markdown("Drag the gizmo (or set the target and press Reach) to call NaoArmIK.reachTo.")
    return Panel(status, hands, method, arm, target, reach, clear_trail, answer)


def method_argument(label: str) -> str:
    """The ``method`` argument of ``reachTo`` for a dropdown label ("" is the service's default)."""
    return "" if label == DEFAULT_METHOD_LABEL else label


def hands_markdown(hands: Mapping[str, np.ndarray], target: Sequence[float] | None, target_arm: str | None) -> str:
    """The hands' positions in millimetres, and the distance of the target's arm to the last target."""
    lines = []
    for arm, hand in hands.items():
        x, y, z = (float(c) * 1e3 for c in hand)
        lines.append(f"{arm} hand: {x:.1f}, {y:.1f}, {z:.1f} mm")
    if target is not None and target_arm in hands:
        d = float(np.linalg.norm(np.asarray(hands[target_arm]) - np.asarray(target))) * 1e3
        x, y, z = (float(c) * 1e3 for c in target)
        lines.append(f"last target: {x:.1f}, {y:.1f}, {z:.1f} mm ({target_arm}); hand to target: {d:.1f} mm")
    return "  \n".join(lines)


def answer_markdown(answer: Mapping) -> str:
    """NaoArmIK's answer as the page shows it (the fields it has, in :data:`ANSWER_FIELDS` order)."""
    lines = [f"**answer** ({answer.get('arm', '?')}, method {answer.get('method', '?') or 'default'})"]
    for key in ANSWER_FIELDS:
        if key not in answer:
            continue
        value = answer[key]
        if key == "error":
            text = f"{float(value) * 1e3:.3f} mm"
        elif key == "jointChange":
            text = _number_or_list(value, "rad")
        elif key == "moveSeconds":
            text = f"{float(value):.3f} s"
        elif key == "solveTimeMs":
            text = f"{float(value):.3f} ms"
        elif isinstance(value, bool):
            text = "yes" if value else "no"
        elif isinstance(value, (list, tuple)):
            text = ", ".join(str(v) for v in value) or "none"
        else:
            text = str(value)
        lines.append(f"{key}: {text}")
    return "  \n".join(lines)


def refusal_markdown(error: str) -> str:
    """A refused reach as the page shows it."""
    first = error.strip().splitlines()[0] if error.strip() else "error"
    return f"**refused**: {first}"


def _number_or_list(value, unit: str) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(f"{float(v):.3f}" for v in value) + f"] {unit}"
    return f"{float(value):.3f} {unit}"


def on_click(button, action: Callable[[], None]) -> None:
    """Run ``action`` when the button is pressed."""
    button.on_click(lambda _event: action())
