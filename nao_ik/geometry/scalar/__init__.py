"""The numpy-free twins of the geometry: plain floats, the common subset of Python 2.7 and 3.

The robot runtime (:mod:`nao_ik.robot`) ships these files as they are; each imports only the standard library,
:mod:`nao_ik.model.arm_data`, :mod:`nao_ik.model.body_data`, :mod:`nao_ik.geometry.scalar.intervals` and its siblings
here. The numpy modules of :mod:`nao_ik.geometry` share their formulas and the tests hold the two equal.
"""
