"""The measurements behind the claims: the benchmark protocol (bench: targets, interleaved timing) and each
bench, what the service costs a client (latency, loadtest), continuity and the workspace; report/ builds the
papers' reproduction.

Layer: above the core, the service and training; below :mod:`nao_ik.tools` and :mod:`nao_ik.cli`.
"""
