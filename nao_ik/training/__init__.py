"""Learning the networks, off the core's path: the optimisers and the fitting loop (fit), the shipped
networks' recipes and training (networks), nn-modular's on-line learning (modular_learning) and the
``nao-ik train`` command (cli).

Layer: above the core; below :mod:`nao_ik.evidence`, which reproduces the papers' learning curves.
"""
