"""Programs for people: the demo (a simulated robot, the service and a table) and the live 3-D view (view/,
extra "view").

Layer: above :mod:`nao_ik.evidence`, below :mod:`nao_ik.cli`.
"""
