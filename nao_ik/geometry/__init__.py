"""The exact solution set of a hand position: the elbow's swivel circle, the
joint angles on it (both ElbowRoll branches), the swivel intervals the joint
limits allow, and the configuration nearest to a start posture.

Layer: above :mod:`nao_ik.kinematics`, below :mod:`nao_ik.solvers`.
"""
