"""The poison caller's measurement: each crash's downtime is read off the service directory's signals."""

from nao_ik.evidence.poison import PoisonReport, downtimes, format_report, nested


def test_each_departure_waits_for_the_next_registration():
    got = downtimes([1.0, 3.0, 7.0], [0.0, 1.5, 3.25, 3.9])  # 7.0: not back
    assert got == [0.5, 0.25]


def test_the_poison_is_nested_as_deep_as_asked():
    v, depth = nested(5), 0
    while isinstance(v, list):
        v, depth = v[0], depth + 1
    assert (depth, v) == (5, 0.1)


def test_the_report_is_one_row():
    row = format_report(PoisonReport(60, 1200, 30, 40, 40, [0.1, 0.3, 0.2], 0.25)).splitlines()[-1]
    assert row == "| 60 | 1200 | 30 (2.5 %) | 40 | 40 | 0.10 / 0.20 / 0.20 / 0.30 | 25 % |"
