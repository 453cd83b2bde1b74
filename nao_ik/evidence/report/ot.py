"""Oyama & Tachi (2001) at NAO's scale: every figure as a fraction of the arm's reach, the tracking rule scaled.

The paper's arms: a planar 2-DOF arm (L1 + L2 = 0.55 m, its section 4.1) and
the PA-10 (7 DOF). The paper does not give the PA-10's dimensions; its reach
here is the manufacturer's upper arm + forearm + wrist (0.45 + 0.48 + 0.07 m
= 1.0 m), an assumption the table states. NAO's reach is measured (largest
shoulder-to-hand distance inside the limits).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from ...kinematics.chain import forward_batch
from ...model.arm import arm_model
from ...nn import modular
from ...nn.data import random_configurations
from ...recipes.track import GIVE_UP, follow, random_lines, reach, track_path
from ...solvers.pipeline import reach_range
from ...training.modular_learning import HIDDEN, Curve, learn

ARM = "LArm"
TWO_DOF_REACH = 0.55
PA10_REACH = 1.0  # assumed: 0.45 + 0.48 + 0.07 m (not in the paper)
#: The paper's path step (std of the total change, m) and give-up distance; nao-ik's paths use 0.05 m.
PAPER_STEP, NAO_STEP = 0.2, 0.05
#: The give-up rule scaled like the path step: 5 cm x 0.05 / 0.2.
SCALED_GIVE_UP = GIVE_UP * NAO_STEP / PAPER_STEP


def nao_reach() -> float:
    """NAO's reach, metres: the largest shoulder-to-hand distance the limits allow (reach_range less its 1 mm)."""
    return reach_range(arm_model(ARM)._replace(body=()))[1] - 1e-3


class Tracked(NamedTuple):
    """Tracking over paths under the paper's rule and the scaled one."""

    paths: int
    paper_rule: float  # fraction completed, given up at 5 cm
    scaled_rule: float  # fraction completed, given up at SCALED_GIVE_UP
    rms_mm: float  # RMS error over the paths completed under the scaled rule


def _tracked(tracks) -> Tracked:
    done = [t for t in tracks if t.completed]
    scaled = [t for t in done if t.errors.max() <= SCALED_GIVE_UP]
    errs = np.concatenate([t.errors for t in scaled]) if scaled else np.array([np.nan])
    n = len(tracks)
    return Tracked(n, len(done) / n, len(scaled) / n, float(np.sqrt(np.mean(errs**2)) * 1e3))


def model_alone_mm(mod: modular.Modular, targets: np.ndarray) -> tuple[float, float]:
    """RMS and median hand error (mm) of the selected expert's answer alone (clamped), the paper's Fig. 2a/6a."""
    model = arm_model(ARM)._replace(body=())
    _, p, order = modular.select(model, mod, targets, 0.0)
    alone = p[order[0], np.arange(targets.shape[0])] * 1e3
    return float(np.sqrt(np.mean(alone**2))), float(np.median(alone))


def track_model(mod: modular.Modular, paths: Sequence[np.ndarray]) -> Tracked:
    """Equations (6)-(9) with one expert per path (section 3), as ``nn-modular`` tracks."""
    model = arm_model(ARM)._replace(body=())
    return _tracked([follow(model, p, *modular.path_inverse(model, mod, p, reach)) for p in paths])


def track_method(method: str, paths: Sequence[np.ndarray]) -> Tracked:
    """Equations (6)-(9) with a method as Phi."""
    return _tracked([track_path(p, arm_model(ARM)._replace(body=()), method) for p in paths])


class Scale(NamedTuple):
    """What the O&T section measures."""

    reach: float
    untrained: modular.Modular
    shipped: modular.Modular
    targets: int
    alone: dict  # name -> (rms mm, median mm)
    tracked: dict  # name -> Tracked
    curve: list  # a fresh learning run from scratch (Curve rows)
    curve_trials: int


def measure(targets: int, paths: int, trials: int, seed: int = 11) -> Scale:
    """Untrained, freshly learned and shipped models on held-out targets and paths; a short learning run.

    Args:
        targets: held-out targets for the model-alone error.
        paths: held-out straight paths (21 points, 5 cm step).
        trials: learning trials of the fresh run (its curve starts untrained, trial 0).
    """
    model = arm_model(ARM)._replace(body=())
    held = forward_batch(model, random_configurations(model, targets, np.random.default_rng(seed)))
    lines = random_lines(ARM, paths, 21, seed + 1)
    untrained, _ = learn(trials=0, evaluations=10, paths=0)
    fresh, curve = learn(trials=trials, batch=min(500, trials), every=max(trials // 4, 1), evaluations=targets,
                         paths=min(paths, 50))  # fmt: skip
    shipped = modular.shipped()
    alone = {"untrained (0 trials)": model_alone_mm(untrained, held),
             f"fresh run ({trials:,} trials)": model_alone_mm(fresh, held),
             f"shipped ({shipped.record['trials']:,} trials)": model_alone_mm(shipped, held)}  # fmt: skip
    tracked = {
        "untrained (0 trials)": track_model(untrained, lines),
        f"fresh run ({trials:,} trials)": track_model(fresh, lines),
        f"shipped ({shipped.record['trials']:,} trials)": track_model(shipped, lines),
        "nn-paper (a single network)": track_method("nn-paper", lines),
        "dls": track_method("dls", lines),
    }
    return Scale(nao_reach(), untrained, shipped, targets, alone, tracked, curve, trials)


def scale_table(s: Scale) -> str:
    """The paper's figures and NAO's, each also as a fraction of the arm's reach."""
    r = s.reach
    ship = [k for k in s.alone if k.startswith("shipped")][0]
    rms, med = s.alone[ship]
    trk = s.tracked[ship]
    single = s.tracked["nn-paper (a single network)"]
    lines = [
        "| figure | paper, 2-DOF arm (reach 0.55 m) | paper, PA-10 (reach ~1.0 m, assumed) | "
        f"nao-ik, NAO left arm (reach {r * 1e3:.0f} mm) |",
        "|---|---|---|---|",
        f"| RMS error of the model alone | 1.50 mm = {0.15 / TWO_DOF_REACH:.2f} % of reach (5x10^7 trials) | "
        f"12.0 mm = {1.2 / PA10_REACH:.1f} % (10^7 trials) | {rms:.1f} mm = {100 * rms * 1e-3 / r:.1f} % "
        f"({s.shipped.record['trials']:,} trials; median {med:.1f} mm) |",
        f"| straight paths: std of the total step | | 0.2 m = {100 * PAPER_STEP / PA10_REACH:.0f} % | "
        f"{NAO_STEP * 1e3:.0f} mm = {100 * NAO_STEP / r:.0f} % |",
        f"| give-up distance of the tracking | | 5 cm = {100 * GIVE_UP / PA10_REACH:.0f} % | scaled like the step: "
        f"{SCALED_GIVE_UP * 1e3:.1f} mm = {100 * SCALED_GIVE_UP / r:.1f} % (5 cm would be {100 * GIVE_UP / r:.0f} %) |",
        f"| paths tracked | | more than 98 % (10^6 trials) | {100 * trk.scaled_rule:.1f} % at "
        f"{SCALED_GIVE_UP * 1e3:.1f} mm ({100 * trk.paper_rule:.1f} % at 5 cm), {trk.paths} paths |",
        f"| paths tracked by a single network | | under 95 % (Jordan's forward-and-inverse modelling) | "
        f"{100 * single.scaled_rule:.1f} % at {SCALED_GIVE_UP * 1e3:.1f} mm with `nn-paper` (a 3-40-4 network "
        "trained on configurations, not Jordan's method) |",
    ]
    return "\n".join(lines)


def tracking_table(s: Scale) -> str:
    """Tracking under the paper's rule and the scaled one, and the model-alone errors."""
    lines = [
        f"| inverse model used as Phi | model alone: RMS / median (mm) | RMS as % of reach | paths tracked (5 cm) | "
        f"paths tracked ({SCALED_GIVE_UP * 1e3:.1f} mm) | RMS tracking error (mm, scaled rule) |",
        "|---|---|---|---|---|---|",
    ]
    for name, t in s.tracked.items():
        a = s.alone.get(name)
        alone = "" if a is None else f"{a[0]:.1f} / {a[1]:.1f}"
        pct = "" if a is None else f"{100 * a[0] * 1e-3 / s.reach:.1f} %"
        lines.append(f"| {name} | {alone} | {pct} | {100 * t.paper_rule:.1f} % | {100 * t.scaled_rule:.1f} % | "
                     f"{'n/a' if np.isnan(t.rms_mm) else f'{t.rms_mm:.2f}'} |")  # fmt: skip
    return "\n".join(lines)


def curve_table(curve: Sequence[Curve], reach: float) -> str:
    """A learning curve from an untrained model, errors also as fractions of the reach."""
    lines = [
        "| learning trials | experts | model alone RMS (mm) | as % of reach | first selection succeeds | "
        "paths tracked (5 cm) | within 1 cm throughout |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in curve:
        lines.append(f"| {c.trials:,} | {c.experts} | {c.rms_mm:.1f} | {100 * c.rms_mm * 1e-3 / reach:.1f} % | "
                     f"{100 * c.first_selection:.1f} % | {100 * c.tracking:.1f} % | "
                     f"{100 * c.tracking_1cm:.1f} % |")  # fmt: skip
    return "\n".join(lines)


def learning_adds(s: Scale) -> str:
    """What learning adds, from the measured figures."""
    names = list(s.alone)
    u, f = names[0], names[-1]
    tu, tf = s.tracked[u], s.tracked[f]
    c0 = s.curve[0]
    return (
        f"With zero learning trials (one expert that answers its zero posture everywhere) the reaching motion "
        f"still solves {100 * c0.first_selection:.1f} % of first selections and {100 * tu.paper_rule:.1f} % of the "
        f"paths are tracked under the paper's 5 cm rule: on NAO's 4-joint arm the error feedback does that work, "
        f"so those two figures show no learning. What learning adds is the model itself (RMS "
        f"{s.alone[u][0]:.0f} mm -> {s.alone[f][0]:.1f} mm) and tight tracking: under the scaled "
        f"{SCALED_GIVE_UP * 1e3:.1f} mm rule {100 * tu.scaled_rule:.1f} % -> {100 * tf.scaled_rule:.1f} % of the "
        f"paths, RMS tracking error {tu.rms_mm:.1f} -> {tf.rms_mm:.2f} mm."
    )


def controller_differences() -> str:
    """The controller's differences from the paper, from the code's constants."""
    rec = modular.shipped().record
    return "\n".join(
        [
            "| | Oyama & Tachi (2001) | nao-ik `nn-modular` |",
            "|---|---|---|",
            "| reaching motion | straight line to the target in small steps, pseudoinverse RMRC (eqs. 2-4) | "
            f"{modular.REACH_ITERATIONS} damped-least-squares iterations toward the target (no straight line) |",
            f"| precise solution (r_e) | 5 mm | {modular.PRECISE * 1e3:g} mm |",
            f"| predicted error under which other experts are tried | r_eim = 0.3 m (r_st = 0.02 m) | "
            f"{modular.R_SIM:g} m |",
            f"| experts | 4 layers, 15-15 hidden (2-DOF) or 25-25 (PA-10), linear input and output, back-propagation | "
            f"3-{'-'.join(map(str, HIDDEN))}-4 tanh, Adam ({rec['passes']} passes) |",
            "| forward model for selection | learned (MNFM) or complete (MNCFM) | complete (NAO's exact FK): MNCFM; "
            "both in the planar reproduction below |",
            "| learning during tracking (section 3) | yes | no: learning trials are reaching trials only |",
            "| single-network baseline | Jordan's forward-and-inverse modelling | not for NAO (`nn-paper` is a "
            "different single network); in the planar reproduction below |",
        ]
    )
