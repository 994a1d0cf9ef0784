"""What every subcommand shares: a parser that fails in one line, the bad-input exit code, and emit()."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

EXIT_BAD_INPUT = 2


class Parser(argparse.ArgumentParser):
    def error(self, message: str):            # one line, not argparse's usage block
        print(f"fairviz: error: {message} (see '{self.prog} --help')", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def emit(summary_text: str, payload: dict, json_target: Path | None, write=None) -> None:
    """Print the summary and write the JSON (through ``write(path, text)`` when given: an atomic write); with
    '--json -' the summary goes to stderr so stdout stays pure JSON."""
    to_stdout = json_target is not None and str(json_target) == "-"
    print(summary_text, file=sys.stderr if to_stdout else sys.stdout)
    if json_target is None:
        return
    text = json.dumps(payload, indent=2) + "\n"
    if to_stdout:
        sys.stdout.write(text)
    elif write is not None:
        write(json_target, text)
    else:
        json_target.write_text(text)
