"""The registry of solvers: method name -> :class:`~nao_ik.solvers.base.SolverSpec`."""

from __future__ import annotations

from .base import BatchSolution, Run, Solution, SolverSpec
from .fabrik import fabrik_loop
from .jacobian import dls_loop, pinv_loop, sdls_loop, transpose_loop

SOLVERS: dict[str, SolverSpec] = {
    s.name: s
    for s in (
        SolverSpec("fabrik", fabrik_loop, 100, "FABRIK on shoulder/elbow/hand, limits projected every pass"),
        SolverSpec("jacobian-transpose", transpose_loop, 1000, "Jacobian transpose with Buss's optimal step"),
        SolverSpec("jacobian-pinv", pinv_loop, 100, "SVD pseudoinverse, 1 % singular cutoff, step halving"),
        SolverSpec("dls", dls_loop, 100, "damped least squares, damping shrinking with the error"),
        SolverSpec("sdls", sdls_loop, 200, "Buss & Kim selectively damped least squares"),
    )
}

#: Other names for registered methods. ``jacobian`` is the best Jacobian method
#: measured by ``nao-ik bench``.
ALIASES: dict[str, str] = {"jacobian": "dls"}

__all__ = ["ALIASES", "SOLVERS", "BatchSolution", "Run", "Solution", "SolverSpec"]
