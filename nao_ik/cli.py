"""The ``nao-ik`` command: one entry point, one subcommand per job."""

from __future__ import annotations

import sys
from typing import Sequence

USAGE = """usage: nao-ik COMMAND [options]

commands:
  bench    benchmark every IK method on the paper's protocol (markdown table)

Run 'nao-ik COMMAND --help' for the options of a command.
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to the subcommand's own ``main``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    command, rest = args[0], args[1:]
    if command == "bench":
        from .bench import main as run
    else:
        print(f"nao-ik: unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
        return 2
    return run(rest)


if __name__ == "__main__":
    sys.exit(main())
