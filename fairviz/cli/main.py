"""The ``fairviz`` command: one module per subcommand (audit, explain, forecast/ptn, probe/augment, synth, conditions), dispatched here.

Bad input prints one line to stderr and exits with status 2; never a traceback.
"""
from __future__ import annotations

import sys

from fairviz.cli import audit, conditions, explain, forecast, probe, slices, synth
from fairviz.cli.common import EXIT_BAD_INPUT, Parser
from fairviz.data import DataError

SUBCOMMANDS = (audit, forecast, explain, probe, synth, conditions, slices)


def build_parser() -> Parser:
    parser = Parser(prog="fairviz", description="Visual fairness exploration of model predictions.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for module in SUBCOMMANDS:
        module.add_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except DataError as err:
        print(f"fairviz: error: {' '.join(err.problems)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (OSError, ValueError) as err:
        print(f"fairviz: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
