"""``nao-ik workspace``: the reachable workspace of an arm, its volume and its dexterity, as data and a picture.

A grid of points (``--step`` apart) around the shoulder is tested with the
exact reachability of :mod:`nao_ik.recipes.reachability` (WristYaw held at
``--wrist``): reachable or not, and the dexterity, the elbow swivel (degrees)
the joint limits still allow with the hand on the point. The reachable
volume is the count of reachable points times the cell's volume. Written to
``DIR``: ``workspace-ARM.npz`` (every grid point, reachable, dexterity),
``workspace-ARM.csv`` (the reachable points and their dexterity) and
``workspace-ARM.png`` (three slices through the shoulder and the 3-D point
cloud, coloured by dexterity; needs matplotlib, in the ``dev`` and ``plot``
extras).

The body: :func:`workspace` takes the body check of
:mod:`nao_ik.recipes.reachability` (``clear``); ``--body`` adds the volume outside
the body (:func:`body_check`: the arm's links at least the body model's
margin from its parts), once the body model (``nao_ik.geometry.collision``) is in the
package; without it ``--body`` says so and stops.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from typing import NamedTuple, Sequence

import numpy as np

from ..geometry.closest import distance_range
from ..model.arm import ARMS, arm_model
from ..recipes.reachability import ClearCheck, reachable_batch


class Workspace(NamedTuple):
    """What :func:`workspace` returns.

    Attributes:
        arm: the arm.
        step: the grid's spacing, metres.
        points: (N, 3) grid points, FRAME_TORSO metres.
        reachable: (N,) bool.
        dexterity: (N,) allowed swivel, degrees (0 where unreachable).
        litres: the reachable volume.
        seconds: how long the test took.
    """

    arm: str
    step: float
    points: np.ndarray
    reachable: np.ndarray
    dexterity: np.ndarray
    litres: float
    seconds: float


def workspace(arm: str, step: float = 0.01, wrist: float = 0.0, clear: ClearCheck | None = None) -> Workspace:
    """Test a grid around the shoulder for reachability.

    Args:
        arm: ``"LArm"`` or ``"RArm"``.
        step: grid spacing, metres (the cube, centred on the shoulder, reaches the longest shoulder-hand distance
            plus a step).
        wrist: the held WristYaw, radians.
        clear: the body check, or None (the joint limits alone).

    Returns:
        :class:`Workspace`.
    """
    model = arm_model(arm)
    k = math.ceil(distance_range(model, wrist)[1] / step) + 1
    axis = np.arange(-k, k + 1) * step  # symmetric about the shoulder: the two arms' grids are mirror images
    g = np.stack(np.meshgrid(axis, axis, axis, indexing="ij"), axis=-1).reshape(-1, 3) + np.asarray(model.shoulder)
    t0 = time.perf_counter()
    ok, dex = reachable_batch(g, model, wrist, clear)
    seconds = time.perf_counter() - t0
    return Workspace(arm, step, g, ok, dex, float(ok.sum() * step**3 * 1e3), seconds)


def body_check() -> ClearCheck:
    """The body model's check: every link at least ``nao_ik.model.body.MARGIN`` from the body's parts.

    Raises:
        RuntimeError: the body model is not in this package.
    """
    try:
        from ..geometry import collision  # the body model, where the package has it
        from ..model import body
    except ImportError:
        raise RuntimeError(
            "the body model (nao_ik.model.body, nao_ik.geometry.collision) is not in this build"
        ) from None
    return lambda model, q: collision.clearance_batch(model, q)[0] >= body.MARGIN


def write(ws: Workspace, out: str, picture: bool = True, suffix: str = "") -> list[str]:
    """Write the data (npz, csv) and the picture (png) of a workspace into ``out`` (names
    ``workspace-ARM{suffix}.*``); returns the paths."""
    os.makedirs(out, exist_ok=True)
    base = os.path.join(out, f"workspace-{ws.arm}{suffix}")
    np.savez_compressed(base + ".npz", points=ws.points, reachable=ws.reachable, dexterity=ws.dexterity,
                        step=ws.step, litres=ws.litres)  # fmt: skip
    rows = np.concatenate([ws.points[ws.reachable], ws.dexterity[ws.reachable, None]], axis=1)
    np.savetxt(base + ".csv", rows, delimiter=",", fmt="%.4f", header="x,y,z,dexterity_deg", comments="")
    paths = [base + ".npz", base + ".csv"]
    if picture:
        draw(ws, base + ".png")
        paths.append(base + ".png")
    return paths


def draw(ws: Workspace, path: str) -> None:
    """Three slices through the shoulder (x-y, x-z, y-z) and the 3-D cloud, coloured by dexterity."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = np.asarray(arm_model(ws.arm).shoulder)
    fig = plt.figure(figsize=(17, 4.6))
    fig.subplots_adjust(wspace=0.35)
    vmax = max(float(ws.dexterity.max()), 1.0)
    slices = ((0, 1, 2, "x-y at shoulder height"), (0, 2, 1, "x-z through the shoulder"),
              (1, 2, 0, "y-z through the shoulder"))  # fmt: skip
    for k, (i, j, fixed, title) in enumerate(slices):
        ax = fig.add_subplot(1, 4, k + 1)
        near = np.abs(ws.points[:, fixed] - s[fixed]) <= ws.step / 2
        p, d, ok = ws.points[near], ws.dexterity[near], ws.reachable[near]
        ax.scatter(p[~ok, i], p[~ok, j], s=2, c="0.9", marker="s")
        sc = ax.scatter(p[ok, i], p[ok, j], s=6, c=d[ok], cmap="viridis", vmin=0, vmax=vmax, marker="s")
        ax.plot(s[i], s[j], "r+", ms=10)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("xyz"[i] + " (m, FRAME_TORSO)")
        ax.set_ylabel("xyz"[j] + " (m)")
        ax.set_aspect("equal")
    ax = fig.add_subplot(1, 4, 4, projection="3d")
    p, d = ws.points[ws.reachable], ws.dexterity[ws.reachable]
    ax.scatter(p[:, 0], p[:, 1], p[:, 2], s=1, c=d, cmap="viridis", vmin=0, vmax=vmax)
    ax.set_title(f"{ws.arm}: {ws.litres:.2f} L reachable", fontsize=9)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_zlabel("z")
    fig.colorbar(sc, ax=fig.axes, shrink=0.8, label="dexterity: allowed elbow swivel (deg)")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def main(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(
        prog="nao-ik workspace",
        description="The reachable workspace of an arm (exact reachability on a grid, WristYaw held): its volume "
        "in litres, slices and a 3-D point cloud coloured by dexterity (the elbow swivel left), and the data.",
        epilog="example: nao-ik workspace --arm LArm --out workspace_out",
    )
    p.add_argument("--arm", choices=[*ARMS, "both"], default="LArm", help="LArm, RArm or both (default LArm)")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for workspace-ARM.{npz,csv,png}")
    p.add_argument("--step", type=float, default=0.01, help="grid spacing, metres (default 0.01)")
    p.add_argument("--wrist", type=float, default=0.0, help="the held WristYaw, radians (default 0)")
    p.add_argument("--no-picture", action="store_true", help="data only (no matplotlib needed)")
    p.add_argument("--body", action="store_true", help="also the volume outside the body (needs the body model)")
    a = p.parse_args(argv)
    if not (math.isfinite(a.step) and 0.002 <= a.step <= 0.1):
        p.error(f"--step must be in [0.002, 0.1] m, got {a.step}")
    if not (math.isfinite(a.wrist) and abs(a.wrist) <= 1.8238):
        p.error(f"--wrist must be within WristYaw's limits (+-1.8238 rad), got {a.wrist}")
    clear = None
    if a.body:
        try:
            clear = body_check()
        except RuntimeError as e:
            print(f"nao-ik workspace: --body: {e}", file=sys.stderr)
            return 2
    print("| arm | grid step (m) | points tested | reachable | volume (L), joint limits | median dexterity (deg) "
          "| seconds |" + (" volume (L), outside the body | median dexterity (deg) |" if clear else ""))  # fmt: skip
    print("|---|---|---|---|---|---|---|" + ("---|---|" if clear else ""))
    for arm in ARMS if a.arm == "both" else (a.arm,):
        ws = workspace(arm, a.step, a.wrist)
        paths = write(ws, a.out, picture=not a.no_picture)
        row = f"| {arm} | {a.step:g} | {len(ws.points):,} | {int(ws.reachable.sum()):,} | {ws.litres:.3f} " \
              f"| {_median(ws):.1f} | {ws.seconds:.1f} |"  # fmt: skip
        if clear:
            wb = workspace(arm, a.step, a.wrist, clear)
            paths += write(wb, a.out, picture=not a.no_picture, suffix="-body")
            row += f" {wb.litres:.3f} | {_median(wb):.1f} |"
        print(row)
        for path in paths:
            print(f"  wrote {path}", file=sys.stderr)
    if not clear:
        print("\nThe joint limits alone: --body adds the volume outside the body (the body model).\n")
    return 0


def _median(ws: Workspace) -> float:
    return float(np.median(ws.dexterity[ws.reachable])) if ws.reachable.any() else 0.0
