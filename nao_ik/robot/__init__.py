"""The robot runtime: the NaoArmIK service that runs on NAO itself, started by NAOqi's ServiceManager.

The common subset of Python 2.7 and 3, the standard library and ``qi`` only (no numpy):

- :mod:`nao_ik.robot.arms`: the arm models, from :mod:`nao_ik.model.arm_data` (the library's numbers);
- :mod:`nao_ik.robot.solve`: forward kinematics and the ``analytic`` method (the nearest exact
  configuration, :mod:`nao_ik.geometry.scalar.nearest`: the library's scalar path itself), clear
  of NAO's standing body (:mod:`nao_ik.model.body_data`, :mod:`nao_ik.geometry.scalar.clearance`: the
  library's own per-configuration check);
- :mod:`nao_ik.robot.checks`: argument validation;
- :mod:`nao_ik.robot.record`: what the runtime knows of each arm's motion, held against the robot's readings by
  the motion core (:mod:`nao_ik.motion.truth`: the computer-side service's rule, the same code);
- :mod:`nao_ik.robot.other`: the other arm as part of the body (where it stands, where a command the
  runtime sent it may still take it, or its whole range); :mod:`nao_ik.robot.link`: ALMotion with a time limit
  on every call;
- :mod:`nao_ik.robot.service`: the qi service (the setAngles motion checked against the body with
  :mod:`nao_ik.geometry.scalar.sweep`, the library's sweep; a budget per call); :mod:`nao_ik.robot.main`: the
  executable the package's manifest declares (a supervisor that restarts the service's process after a crash,
  libqi's message cap); :mod:`nao_ik.robot.bench`: the single-solve time.

The package that carries it to the robot is built by :mod:`nao_ik.robot.package` (``make package``).
See docs/robot-runtime.md.
"""
