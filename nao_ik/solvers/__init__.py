"""The registry of solvers: method name -> :class:`~nao_ik.solvers.base.SolverSpec`."""

from __future__ import annotations

from .analytic import analytic_loop, analytic_start
from .base import BatchSolution, Run, Solution, SolverSpec
from .fabrik import fabrik_loop
from .jacobian import dls_loop, pinv_loop, sdls_loop, transpose_loop
from .network import cells_start, hold_loop, modular_seeds, modular_start, paper_start, swivel_start

SOLVERS: dict[str, SolverSpec] = {
    s.name: s
    for s in (
        SolverSpec(
            "analytic",
            analytic_loop,
            100,
            "closed form: the exact solution nearest to the start posture",
            analytic_start,
            False,
            nearest=True,
        ),
        SolverSpec("fabrik", fabrik_loop, 100, "FABRIK on shoulder/elbow/hand, limits projected every pass"),
        SolverSpec("jacobian-transpose", transpose_loop, 1000, "Jacobian transpose with Buss's optimal step"),
        SolverSpec("jacobian-pinv", pinv_loop, 100, "SVD pseudoinverse, 1 % singular cutoff, step halving"),
        SolverSpec("dls", dls_loop, 100, "damped least squares, damping shrinking with the error"),
        SolverSpec("sdls", sdls_loop, 200, "Buss & Kim selectively damped least squares"),
        SolverSpec("nn-paper", hold_loop, 0, "the paper's 3-40-4 sigmoid MLP (RPROP)", paper_start, False, None, True),
        SolverSpec(
            "nn", hold_loop, 0, "MLP predicts the elbow swivel; geometry gives exact angles", swivel_start, False
        ),
        SolverSpec("nn-refined", dls_loop, 100, "nn's answer refined by damped least squares", swivel_start),
        SolverSpec(
            "nn-modular",
            dls_loop,
            100,
            "Oyama & Tachi's modular experts, selected by predicted error, refined by error feedback",
            modular_start,
            True,
            modular_seeds,
        ),
        SolverSpec(
            "cells",
            hold_loop,
            0,
            "Kim & Tarokh's cell lookup: linear models per cell and branch",
            cells_start,
            False,
            None,
            True,
        ),
    )
}

#: The methods that iterate until the hand is within the tolerance (the
#: others answer in one evaluation and report their error).
ITERATIVE: tuple[str, ...] = tuple(n for n, s in SOLVERS.items() if s.loop is not hold_loop)

#: Other names for registered methods. ``jacobian`` is the best Jacobian method
#: measured by ``nao-ik bench``.
ALIASES: dict[str, str] = {"jacobian": "dls"}

__all__ = ["ALIASES", "ITERATIVE", "SOLVERS", "BatchSolution", "Run", "Solution", "SolverSpec"]
