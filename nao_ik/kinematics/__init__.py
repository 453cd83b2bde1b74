"""Forward kinematics and the position Jacobian (chain), their float and numpy backends (ops), the hand's pose
as ALMotion's position6D (hand_pose) and ALMotion's frames (frames).

Layer: above :mod:`nao_ik.model`, below :mod:`nao_ik.geometry`.
"""
