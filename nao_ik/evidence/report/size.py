"""How big each experiment of the report is: :data:`FULL` (the report as published) and :data:`QUICK`
(``--quick``, about a minute)."""

from __future__ import annotations

from typing import NamedTuple


class Size(NamedTuple):
    """The counts of every experiment; built by keyword (:data:`FULL`, :data:`QUICK`), never by position."""

    targets: int  # Table 1 targets
    timed: int  # of those, timed as single calls
    repeats: int  # timing repeats (median of medians)
    ikpy: int  # targets for ikpy (slow)
    figure3: int  # targets per tolerance in Figure 3
    grid: int  # workspace slice resolution
    paths: int  # continuity paths
    path_points: int
    peers: int  # targets for TRAC-IK, pinocchio and nao-ik side by side
    ot_targets: int  # Oyama & Tachi: held-out targets, paths, learning trials of the fresh run
    ot_paths: int
    ot_trials: int
    kt_queries: int  # Kim & Tarokh lookups timed
    sec53: int  # configurations of the section 5.3 check
    alone: int  # targets of the algorithm-alone tables and the tests (the first ``timed`` of them timed)
    planar: int  # learning trials of the planar 2-DOF arm (Oyama & Tachi section 4.1)
    kt_pose: int  # Kim & Tarokh's full posture (eq. 7, eqs. 8-12): queries,
    kt_samples: int  # random configurations per fit,
    kt_epochs: int  # and the cell networks' training steps
    ot_track: int  # Oyama & Tachi: learning paths of the learning-during-tracking run
    ot_fm: int  # configurations the learned forward model (expert selection) learns from
    body_targets: int  # the body: benchmark targets per arm (answers through the body, targets only it reaches)
    body_alternatives: int  # of those, solved by ikpy and the ALMotion-style pseudoinverse
    body_single: int  # the check's cost: single solves per arm,
    body_rounds: int  # and reachTo round trips over qi
    profile_pairs: int  # the motion profiles: random pairs of clear postures
    path_lines: int  # paths: joint-space lines,
    path_every: int  # and every path_every-th Cartesian shape of nao_ik.evidence.path_bench.shapes


FULL = Size(
    targets=10_000,
    timed=1000,
    repeats=3,
    ikpy=300,
    figure3=300,
    grid=45,
    paths=40,
    path_points=40,
    peers=2000,
    ot_targets=1000,
    ot_paths=200,
    ot_trials=10_000,
    kt_queries=10_000,
    sec53=10_000,
    alone=10_000,
    planar=50_000,
    kt_pose=1000,
    kt_samples=4_000_000,
    kt_epochs=1500,
    ot_track=4000,
    ot_fm=100_000,
    body_targets=10_000,
    body_alternatives=200,
    body_single=1000,
    body_rounds=300,
    profile_pairs=2000,
    path_lines=30,
    path_every=1,
)
QUICK = Size(
    targets=200,
    timed=40,
    repeats=1,
    ikpy=10,
    figure3=6,
    grid=4,
    paths=3,
    path_points=10,
    peers=30,
    ot_targets=100,
    ot_paths=6,
    ot_trials=400,
    kt_queries=500,
    sec53=1000,
    alone=60,
    planar=600,
    kt_pose=100,
    kt_samples=300_000,
    kt_epochs=200,
    ot_track=60,
    ot_fm=3000,
    body_targets=200,
    body_alternatives=10,
    body_single=50,
    body_rounds=20,
    profile_pairs=100,
    path_lines=2,
    path_every=9,
)
