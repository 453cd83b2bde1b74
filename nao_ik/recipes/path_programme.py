"""A path's plan over its states: the programme that picks one state per point, the smallest largest step first,
then the smallest sum of squares, with the body checked lazily (steps 2 and 4 of :mod:`nao_ik.recipes.path_plan`,
whose docstring gives the method and why it holds).
"""

from __future__ import annotations

import numpy as np

from ..geometry.collision import clearance_batch
from ..model.arm import ArmModel
from ..model.body import MARGIN
from .path_states import DELTA, Layers

#: Plans whose largest step is within this (rad, at the fastest joint's speed) of the best are as good: the
#: states' resolution (DELTA / 2 from any configuration); among them the first state nearest the start.
TIE = DELTA / 2
#: Rounds of the lazy body check, and the layers either side of a blocked choice checked whole.
ROUNDS = 6
NEAR = 2
#: Bytes of the programme's step costs kept between its two passes (the others are built again).
KEPT = 16 << 20
#: Extra move time (s) of a step whose motion is not certified clear.
BLOCKED = 1e3
#: States whose clearance is computed at once: their working arrays (2 kB a state) do not grow with the path.
CHECKS = 4096


def choose(model: ArmModel, lay: Layers, checked: np.ndarray, weights: np.ndarray, q0: np.ndarray | None,
            blocked: set = frozenset(), index: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """Steps 2 and 4: the plan over the layers' states, clear of the body (lazily): the chosen state per layer
    (-1 where a layer has none). ``checked`` (M, K) holds the clearances computed so far (NaN: not yet) and is
    updated; ``lay.ok`` loses the blocked states."""
    m = lay.ok.shape[0]
    for rnd in range(ROUNDS + 1):
        picks = programme(lay, weights, q0, blocked, index)
        if not model.body:
            return picks
        rows = np.flatnonzero(picks >= 0)
        clearances(model, lay, checked, rows, picks[rows])
        bad = rows[checked[rows, picks[rows]] < MARGIN]
        if not bad.size:
            return picks
        near = np.unique(np.clip(bad[:, None] + np.arange(-NEAR, NEAR + 1), 0, m - 1))
        if rnd == ROUNDS - 1:  # the last round: every state
            near = np.arange(m)
        r, k = np.nonzero(lay.ok[near])
        clearances(model, lay, checked, near[r], k)
        lay.ok[checked < MARGIN] = False
    return programme(lay, weights, q0, blocked, index)


def clearances(model: ArmModel, lay: Layers, checked: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> None:
    """The body's clearance of states (rows, cols) not yet checked, into ``checked`` (CHECKS at a time)."""
    todo = np.flatnonzero(np.isnan(checked[rows, cols]))
    for a in range(0, todo.size, CHECKS):
        r, k = rows[todo[a : a + CHECKS]], cols[todo[a : a + CHECKS]]
        checked[r, k] = clearance_batch(model, lay.q[r, k], model.body)[0]


def programme(lay: Layers, weights: np.ndarray, q0: np.ndarray | None, blocked: set = frozenset(),
               index: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """Step 2 over the layers that have states: the chosen state per layer, -1 where a layer has none.

    ``blocked``: steps (layer, state, layer, state) that cost BLOCKED more. ``index``: the layers' points on
    the path (default one layer a point): a step across several points costs its move time shared among them
    (the points between are filled evenly, step 3).
    """
    live = np.flatnonzero(lay.ok.any(axis=1))
    picks = np.full(lay.ok.shape[0], -1, dtype=np.int64)
    if not live.size:
        return picks
    m = live.size
    used = [int(np.flatnonzero(lay.ok[r])[-1]) + 1 for r in live]  # a layer's states are its first slots
    qw = [(lay.q[r, :u, :4] * weights).astype(np.float32) for r, u in zip(live, used)]
    ok = [lay.ok[r, :u] for r, u in zip(live, used)]
    share = np.ones(m - 1) if index is None else np.diff(index[live]).astype(float)
    where = {int(r): i for i, r in enumerate(live)}
    cut = {}
    for a, sa, b, sb in blocked:
        if where.get(b, -1) == where.get(a, -2) + 1:
            cut.setdefault(where[a], []).append((sa, sb))
    cost = Steps(qw, ok, share, cut)
    # Backward: each state's smallest largest step to the end.
    w = np.where(ok[-1], 0.0, np.inf).astype(np.float32)
    for i in range(m - 2, -1, -1):
        worst = np.maximum(cost.base(i), w[None, :])
        if i in cut:
            sa, sb, c = cost.cut(i)
            worst[sa, sb] = np.maximum(c, w[sb])
        w = worst.min(axis=1)
    w = np.where(ok[0], w, np.inf)
    if q0 is None:
        s0 = int(w.argmin())
    else:  # the first state nearest the start among the optimal ones, to the states' resolution
        first = (np.abs(lay.q[live[0], : used[0], :4] - q0[:4]) * weights).max(axis=1)
        s0 = int(np.where(w <= float(w.min()) + TIE * weights.min(), first, np.inf).argmin())
    bound = np.float32(float(w[s0]) * (1.0 + 1e-6) + 1e-9)
    # Forward: the smallest sum of squares within the bound, from that first state.
    total = np.full(used[0], np.inf, dtype=np.float32)
    total[s0] = 0.0
    back = []
    for i in range(m - 1):
        tried = cost.squares(i, bound) + total[:, None]
        if i in cut:
            sa, sb, c = cost.cut(i)
            tried[sa, sb] = np.where(c > bound, np.float32(np.inf), c * c) + total[sa]
        b = tried.argmin(axis=0)
        back.append(b)
        total = tried[b, np.arange(b.size)]
    pick = np.zeros(m, dtype=np.int64)
    pick[-1] = int(total.argmin())
    for i in range(m - 2, -1, -1):
        pick[i] = back[i][pick[i + 1]]
    picks[live] = pick
    return picks


class Steps:
    """The programme's step costs between live layers i and i + 1: the move times (speed-weighted radians) from
    every state of one to every state of the other, shared by ``share[i]`` points, inf where a state is out; the
    ``cut`` steps cost BLOCKED more.

    Both passes read each step: its matrix (float32, states x states) is built once and kept where it fits, else
    built again: the matrices kept total at most KEPT bytes, so that a plan's memory does not grow with its
    layers (a path of 2000 via points has 2000 steps, each matrix up to a quarter of a megabyte). Steps between
    layers of the same states (a path that comes back to its places) share one matrix: an alternation between
    two places builds two. A cut step is its matrix with the cut entries changed: the passes change those
    entries alone (:meth:`cut`), so that cut steps share their matrix too.
    """

    def __init__(self, qw: list, ok: list, share: np.ndarray, cut: dict):
        self.qw, self.ok, self.share = qw, ok, share
        self.cuts = {i: tuple(np.array(v) for v in zip(*pairs)) for i, pairs in cut.items()}
        names: dict = {}  # a layer's states (bit for bit) -> their number among the distinct ones
        self.name = [names.setdefault((q.tobytes(), k.tobytes()), len(names)) for q, k in zip(qw, ok)]
        self.kept: dict = {}
        self.room = KEPT

    def base(self, i: int) -> np.ndarray:
        """Step i's matrix, no cut."""
        return self._kept(("base", self.name[i], self.name[i + 1], float(self.share[i])), lambda: self._build(i))

    def squares(self, i: int, bound: np.float32) -> np.ndarray:
        """Step i's squared move times, inf beyond ``bound``, no cut."""

        def build() -> np.ndarray:
            c = self.base(i)
            out = c * c
            out[c > bound] = np.inf
            return out

        return self._kept(("squares", self.name[i], self.name[i + 1], float(self.share[i]), float(bound)), build)

    def cut(self, i: int) -> tuple:
        """(rows, columns, move times) of step i's cut entries: BLOCKED more than its matrix's."""
        sa, sb = self.cuts[i]
        return sa, sb, self.base(i)[sa, sb] + np.float32(BLOCKED)

    def _kept(self, key: tuple, build) -> np.ndarray:
        c = self.kept.get(key)
        if c is None:
            c = build()
            if c.nbytes <= self.room:
                self.kept[key] = c
                self.room -= c.nbytes
        return c

    def _build(self, i: int) -> np.ndarray:
        qw, ok = self.qw, self.ok
        c = np.abs(qw[i][:, None, 0] - qw[i + 1][None, :, 0])
        for j in range(1, 4):
            np.maximum(c, np.abs(qw[i][:, None, j] - qw[i + 1][None, :, j]), out=c)
        if self.share[i] != 1.0:
            c /= np.float32(self.share[i])
        c[~ok[i]] = np.inf
        c[:, ~ok[i + 1]] = np.inf
        return c
