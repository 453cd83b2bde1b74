"""The view's body (:mod:`nao_ik.tools.view.shapes`) is the library's body model."""

from __future__ import annotations

import numpy as np

from nao_ik.model.body import BODY, Box, corners
from nao_ik.tools.view import shapes


def _matrix(wxyz):
    w, x, y, z = wxyz
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])  # fmt: skip


def test_the_view_draws_every_box_of_the_body_model_where_it_is():
    """Each rounded box of the standing body model is one box of the view, its radius added to each side: every
    corner of the model's box lies, in the view box's frame, at its half size less the radius (so a turned box,
    the thighs, is drawn turned the right way)."""
    boxes = [c for c in BODY if isinstance(c, Box)]
    drawn = [s for s in shapes.BODY if s.kind == "box" and s.name.rstrip("0123456789") in {c.part for c in boxes}]
    assert len(drawn) == len(boxes) and any(c.turn is not None for c in boxes)
    for c, s in zip(boxes, drawn):
        turn = _matrix(s.wxyz)
        np.testing.assert_allclose(turn @ turn.T, np.eye(3), atol=1e-12)
        local = (np.array(corners(c)) - s.position) @ turn  # into the drawn box's frame
        np.testing.assert_allclose(np.abs(local), np.broadcast_to(np.array(s.size) / 2 - c.radius, local.shape),
                                   atol=1e-12)  # fmt: skip


def test_a_half_turn_has_its_quaternion():
    for turn in (np.diag([1.0, -1.0, -1.0]), np.diag([-1.0, 1.0, -1.0]), np.diag([-1.0, -1.0, 1.0])):
        np.testing.assert_allclose(_matrix(shapes.quaternion(turn)), turn, atol=1e-12)
