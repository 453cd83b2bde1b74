"""The library's entry points: position targets (position: solve, solve_batch, forward, METHODS), full hand
poses (pose: solve_pose, forward_pose) and every exact solution of a target (all_solutions: solve_all).

Layer: above :mod:`nao_ik.solvers`, below :mod:`nao_ik.recipes`; :mod:`nao_ik` re-exports the public names.
"""
