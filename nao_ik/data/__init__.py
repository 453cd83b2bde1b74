"""The data nao-ik ships: trained networks, cells and the arms' kinematic chain.

A package, so that it installs with its files.
"""
