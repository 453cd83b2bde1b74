"""nao_ik.evidence.versus: this code's single solve against another checkout's, each in its own process."""

import io

import numpy as np

from nao_ik.evidence.protocol import sample_targets
from nao_ik.evidence.versus import HERE, best_times, print_methods_versus, print_versus


def test_each_code_times_every_target_with_and_without_the_body():
    targets = sample_targets("LArm", 6, 0)
    best = best_times({"a": HERE, "b": HERE}, targets, "LArm", 2)
    for name in ("a", "b"):
        for key in ("body", "none"):
            assert best[name][key].shape == (6,) and np.all(best[name][key] > 0) and np.all(best[name][key] < 1)


def test_the_table_has_both_codes_and_their_ratios():
    out = io.StringIO()
    print_versus(out, HERE, sample_targets("LArm", 4, 0), "LArm", 1)
    rows = [line for line in out.getvalue().splitlines() if line.startswith("| ")]
    assert [r.split(" | ")[0] for r in rows] == ["| code", "| this code", f"| {HERE}", "| this / that"]
    ratios = rows[-1].strip("| ").split(" | ")[1:]
    # The times' ratios are positive; the check's cost is a difference of two noisy medians (this code against
    # itself, 4 targets once: it may come out negative on a busy machine), so its ratios need only be numbers.
    assert len(ratios) == 5 and float(ratios[0]) > 0 and float(ratios[1]) > 0
    assert all(x == "-" or np.isfinite(float(x)) for x in ratios)


def test_each_methods_single_solve_against_another_checkout_has_a_row_and_a_ratio():
    out = io.StringIO()
    print_methods_versus(out, HERE, sample_targets("RArm", 5, 0), "RArm", ["dls", "fabrik"], 2)
    rows = [line.strip("| ").split(" | ") for line in out.getvalue().splitlines() if line.startswith("| ")]
    assert rows[0] == ["method", "this code", f"`{HERE}`", "this / that"]
    assert [r[0] for r in rows[1:]] == ["dls", "fabrik"]
    assert all(r[1].endswith(" µs") and r[2].endswith(" µs") and float(r[3]) > 0 for r in rows[1:])


def test_the_round_trips_of_each_code_with_and_without_the_body_and_their_table():
    """Each code's two simulated robots over real libqi (this checkout twice): every reach answered, in turns."""
    from nao_ik.evidence.versus import print_round_trips, round_trips

    times = round_trips({"a": HERE, "b": HERE}, 6, [(0.15, 0.12, 0.08), (0.12, 0.15, 0.02)])
    assert sorted(times) == ["a body", "a none", "b body", "b none", "getAngles"]
    assert all(t.shape == (6,) and np.all(t > 0) and np.all(t < 5) for t in times.values())
    out = io.StringIO()
    print_round_trips(out, HERE, 4)
    rows = [line for line in out.getvalue().splitlines() if line.startswith("| ")]
    assert [r.split(" | ")[0] for r in rows] == ["| code", "| this code", f"| {HERE}", "| this / that"] * 2
    assert all(float(x) > 0 for r in (rows[3], rows[7]) for x in r.strip("| ").split(" | ")[1:4])
    assert "One arm" in out.getvalue() and "Both arms" in out.getvalue()
