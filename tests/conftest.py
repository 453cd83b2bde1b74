import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("soak", max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile("soak" if os.environ.get("NAO_IK_SOAK") else "ci" if os.environ.get("CI") else "dev")

pytest_plugins = ["tests.qi_fixtures"]


def pytest_terminal_summary(terminalreporter):
    from tests import report

    if not (report.cases or report.worst or report.lines):
        return
    tr = terminalreporter
    tr.section("reliability figures")
    for what, n in sorted(report.cases.items()):
        tr.write_line(f"cases tried: {what}: {n}")
    for what, (seconds, case) in sorted(report.worst.items()):
        tr.write_line(f"worst time: {what}: {seconds * 1e3:.1f} ms ({case})")
    for line in report.lines:
        tr.write_line(line)
