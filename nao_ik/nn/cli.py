"""``nao-ik train``: reproduce the shipped networks from scratch, and the paper's hidden-unit sweep."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from . import networks as N


def sweep_table(rows: list[tuple[int, dict]]) -> str:
    """Our sweep next to the paper's Table 2."""
    lines = [
        "| hidden units | paper training error | paper validation error | our training error | "
        "our validation error | our validation RMS | hand error mean / p99 (mm) | epochs |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for hidden, rec in rows:
        pt, pv = N.PAPER_TABLE2.get(hidden, (float("nan"), float("nan")))
        tr, va = rec["train"], rec["valid"]
        lines.append(
            f"| {hidden} | {pt:.2f} % | {pv:.2f} % | {tr['mse_percent_of_range']:.2f} % | "
            f"{va['mse_percent_of_range']:.2f} % | {va['rms_percent_of_range']:.1f} % | "
            f"{va['hand_mean_mm']:.1f} / {va['hand_p99_mm']:.1f} | {rec['epochs_run']} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    p = argparse.ArgumentParser(
        prog="nao-ik train",
        description="Train the networks from scratch (seeded, reproducible) with numpy: 'nn' (the shipped "
        "swivel network), 'nn-paper' (Poddighe 2013's 3-40-4 RPROP network) or 'sweep' (the paper's Table 2: "
        "nn-paper with 5..100 hidden units).",
        epilog="example: nao-ik train --which nn-paper --out /tmp/weights",
    )
    p.add_argument("--which", choices=["nn", "nn-paper", "sweep"], default="nn")
    p.add_argument("--out", type=Path, default=N.DATA_DIR, help=f"folder for the weights (default {N.DATA_DIR})")
    p.add_argument("--table", type=Path, help="sweep: also write the table to this markdown file")
    p.add_argument("--epochs", type=int, help="override the recipe's epoch cap (a quicker, different run)")
    a = p.parse_args(argv)
    if a.which == "sweep":
        rows = []
        for hidden in N.SWEEP:
            recipe = N.PAPER if a.epochs is None else N.PAPER._replace(epochs=a.epochs)
            _, rec = N.train(recipe, hidden=(hidden,))
            rows.append((hidden, rec))
        table = sweep_table(rows)
        print(table)
        if a.table:
            a.table.write_text(table + "\n", encoding="utf-8")
        return 0
    recipe = N.OURS if a.which == "nn" else N.PAPER
    if a.epochs is not None:
        recipe = recipe._replace(epochs=a.epochs)
    net, rec = N.train(recipe)
    path = N.write(net, a.which, a.out)
    print(f"wrote {path}")
    for split in ("train", "valid"):
        print(split, ", ".join(f"{k} {v:.4g}" for k, v in rec[split].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
