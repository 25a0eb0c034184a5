"""The ``dryfire`` console script: it runs the binary with the same arguments."""

from __future__ import annotations

import os
import sys

from ._binary import BinaryNotFound, find_binary


def main() -> None:
    try:
        binary = find_binary()
    except BinaryNotFound as e:
        print(f"dryfire: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    argv = [binary, *sys.argv[1:]]
    if os.name == "nt":  # no exec there: run it and pass its exit code on
        import subprocess

        raise SystemExit(subprocess.call(argv))
    os.execv(binary, argv)


if __name__ == "__main__":
    main()
