"""Neural-network IK: numpy inference, numpy training, datasets.

Runtime needs numpy only: :mod:`nao_ik.nn.mlp` evaluates the shipped weights.
Training (``nao-ik train``) is numpy too: RPROP as in the Poddighe paper, Adam
for our network; ``tests/unit/nn/test_networks.py`` checks the RPROP against PyTorch's
``torch.optim.Rprop`` when PyTorch is installed (the ``train`` extra).
"""
