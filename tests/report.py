"""Figures the reliability tests collect; conftest prints them at the end of the run."""

from collections import Counter, defaultdict

cases: Counter = Counter()  # what was tried -> how many times
worst: dict = defaultdict(lambda: (0.0, ""))  # what -> (seconds, which case)
lines: list = []  # free-form lines, e.g. the load table


def slowest(what: str, seconds: float, case: str) -> None:
    if seconds > worst[what][0]:
        worst[what] = (seconds, case)
