"""The report's sections on NAO's body, the motion profiles and known paths, from the bench functions that measure
them (each table is written once, in :mod:`nao_ik.evidence.body_bench`, :mod:`nao_ik.evidence.body_report` and
:mod:`nao_ik.evidence.path_bench`), and the body model set beside the real robot's measured shape
(:data:`REAL_SHAPE`)."""

from __future__ import annotations

import io
import re
from typing import Callable, NamedTuple

import numpy as np

from ...model import body_data
from ...model.arm import arm_model
from ...model.body import LINKS
from .. import body_bench, body_report, path_bench, profile_runs
from .size import Size

ARM = "LArm"


class Real(NamedTuple):
    """One measured figure of the real robot and the body model's figure it stands beside."""

    part: str
    real: str  # the real robot's figure, millimetres
    model: Callable[[], str]  # the body model's figure, millimetres, computed from the model


#: The real robot's shape, measured from the visual meshes and collision primitives of Cyberbotics' Webots NAO
#: (github.com/cyberbotics/webots: projects/robots/softbank/nao/protos/Nao.proto, NaoLeftWristH25Realistic.proto,
#: NaoRightWristH25Realistic.proto; numbers only, no file copied), FRAME_TORSO, millimetres, the left arm (the
#: right mirrors y). The model's figures are computed from ``arm_model("LArm").body`` and
#: :data:`nao_ik.model.body.LINKS` at run time.
REAL_SOURCE = ("Cyberbotics' Webots NAO (github.com/cyberbotics/webots, projects/robots/softbank/nao/protos: Nao.proto "
               "and the H25 realistic wrist protos), its visual meshes and collision primitives")  # fmt: skip


def _inside(pts: np.ndarray) -> np.ndarray:
    from .tables import _inside_body

    return _inside_body(pts)


def _reach(axis: int, sign: float, z_band: tuple[float, float], other: int) -> tuple[float, float]:
    """The body's surface along ``axis`` (0: x, 1: y) on the side ``sign``, at ``other`` = 0, for every
    millimetre of z in ``z_band`` (metres): its least and largest distance from the origin, millimetres."""
    s = np.arange(0.0, 0.2, 0.00025) * sign
    far = []
    for z in np.arange(z_band[0], z_band[1] + 1e-9, 0.001):
        pts = np.zeros((len(s), 3))
        pts[:, axis], pts[:, other], pts[:, 2] = s, 0.0, z
        inside = np.flatnonzero(_inside(pts))
        far.append(abs(s[inside[-1]]) * 1e3 if inside.size else 0.0)
    return min(far), max(far)


def _span(lo_hi: tuple[float, float]) -> str:
    lo, hi = lo_hi
    return f"{lo:.1f}" if abs(hi - lo) < 0.05 else f"{lo:.1f}-{hi:.1f}"


def _head() -> str:
    head = [c for c in arm_model(ARM).body if c.part == "head"][0]
    a, b = np.asarray(head.a), np.asarray(head.b)
    c = (a + b) / 2 * 1e3
    half = (np.linalg.norm(b - a) / 2 + head.radius) * 1e3
    return (f"capsule r {1e3 * head.radius:.0f} across y, centre ({c[0]:.1f}, {c[1]:.1f}, {c[2]:.1f}) at rest, "
            f"width +-{half:.1f}")  # fmt: skip


def _knee() -> str:
    """The thigh's box at the knee: its farthest reach from the hip-knee line (its corners, the rounding added)."""
    low, high, rounding = body_data.THIGH_BOX
    core = [(lo + rounding, hi - rounding) for lo, hi in zip(low, high)]
    far = max(np.hypot(x, y) for x in core[0] for y in core[1]) + rounding
    return f"{1e3 * far:.0f} (a box rounded by {1e3 * rounding:.0f})"


def _link(name: str) -> float:
    return 1e3 * next(link.radius for link in LINKS if link.name == name)


REAL_SHAPE: tuple[Real, ...] = (
    Real("chest front at the sternum (z 20-100), x", "56-58", lambda: _span(_reach(0, 1.0, (0.020, 0.100), 1))),
    Real("back (z 20-100), x", "-52.5", lambda: "-" + _span(_reach(0, -1.0, (0.020, 0.100), 1))),
    Real("waist (z -60..0), half-width", "36-48", lambda: _span(_reach(1, 1.0, (-0.060, 0.0), 0))),
    Real("head", "mesh width +-66.5; capsule r 50 across y, centre (0, 0, 181.5) at HeadYaw = HeadPitch = 0", _head),
    Real(
        "upper arm, radius",
        "mesh 24-30 (30.7 from the shoulder-elbow line); capsule 24",
        lambda: f"{_link('upper arm'):.0f} about the shoulder-elbow line",
    ),
    Real(
        "upper arm, behind the shoulder joint along the arm",
        "42 (its capsule's root)",
        lambda: f"{1e3 * body_data.SHOULDER_BACK:.0f}",
    ),
    Real("forearm, radius", "mesh about 27; capsule 22; elbow sphere 20", lambda: f"{_link('forearm'):.0f}"),
    Real(
        "hand",
        "mesh 84 long x 68 wide x 63 thick; fingertips 102.5 past the wrist (bases at 69, two 14 mm phalanges, r 5.5)",
        lambda: (
            f"capsule r {_link('hand'):.0f} from the wrist to {1e3 * body_data.HAND_REACH:.0f} along the "
            f"forearm's axis (reaches {1e3 * body_data.HAND_REACH + _link('hand'):.0f})"
        ),
    ),  # fmt: skip
    Real("thigh at the knee, radius", "58-59", _knee),
)


def real_shape_table() -> str:
    """The body model beside the real robot's measured shape (:data:`REAL_SHAPE`)."""
    lines = ["| part | real robot (mm) | nao-ik's body model (mm) |", "|---|---|---|"]
    lines += [f"| {r.part} | {r.real} | {r.model()} |" for r in REAL_SHAPE]
    return "\n".join(lines)


def _captured(write: Callable[[io.StringIO], None]) -> str:
    """What ``write`` prints, its numbered headings ("## 2. ...") made subsections of the report's section."""
    buf = io.StringIO()
    write(buf)
    return re.sub(r"^## \d+\. ", "### ", buf.getvalue().strip(), flags=re.M)


def body_sections(size: Size, seed: int, step: Callable[[str], None]) -> dict[str, str]:
    """The body, the motion profiles and the paths, as markdown by name."""
    ev: dict[str, str] = {}
    arms = ("LArm", "RArm")
    step("the body: answers through it, targets only it reaches")
    ev["through"] = _captured(
        lambda out: body_bench.print_through(size.body_targets, seed, size.body_alternatives, out)
    )
    ev["unreachable"] = _captured(lambda out: body_bench.print_unreachable(arms, size.body_targets, seed, out))
    step("the body: what the check costs")
    ev["cost"] = _captured(lambda out: body_report.print_cost(out, size.body_single, size.body_rounds, seed))
    step("the body model")
    ev["model"] = _captured(body_report.print_model)
    ev["real"] = real_shape_table()
    step("the motion profiles")
    runs = profile_runs.profile_runs(size.profile_pairs, seed)
    ev["profiles"] = _captured(lambda out: profile_runs.print_profiles(out, size.profile_pairs, seed, runs))
    step("paths: greedy against planned")
    ev["paths"] = _captured(lambda out: path_bench.compare([ARM], path_bench.METHODS, size.path_lines, out,
                                                           size.path_every))  # fmt: skip
    ev["path shapes"] = f"{len(path_bench.shapes(ARM)[:: size.path_every])}"
    return ev
