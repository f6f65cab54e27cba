"""``python -m runner.train [tagger|forget|all] [--check]``: retrain the shipped
models and write their weights, or (``--check``) verify the shipped files are
reproduced bit-for-bit. Exit status 1 when a check fails."""

from __future__ import annotations

import argparse
import sys
import time

from runner.train import TRAINERS, weight_differences, write_weights


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.train", description=__doc__)
    parser.add_argument("model", nargs="?", default="all", choices=[*sorted(TRAINERS), "all"])
    parser.add_argument("--check", action="store_true",
                        help="retrain and compare with the shipped weights; write nothing")
    args = parser.parse_args(argv)
    names = sorted(TRAINERS) if args.model == "all" else [args.model]
    failed = False
    for name in names:
        start = time.perf_counter()
        if args.check:
            diffs = weight_differences(name)
            status = "reproduced bit-for-bit" if not diffs else "DIFFERS"
            print(f"{name}: {status} ({time.perf_counter() - start:.1f} s)")
            for line in diffs:
                print(f"  {line}")
            failed |= bool(diffs)
        else:
            path = write_weights(name)
            print(f"{name}: wrote {path} ({time.perf_counter() - start:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
