"""The motion core: what the service decides about the arms from the robot's readings, with no qi and no I/O.

Written in the common subset of Python 2.7 and 3 with no numpy, like :mod:`nao_ik.geometry.scalar`, so that the
computer-side service and the robot runtime decide by the same code.

- :mod:`~nao_ik.motion.truth`: the robot is the truth: what readings of an arm's commanded angles prove (moving,
  seen at rest), and whether the service's record of its own last command to the arm still holds.
"""
