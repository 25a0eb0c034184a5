"""Finding the dryfire binary: DRYFIRE_BIN, the one in this wheel, then PATH."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path

from ._errors import DryfireError

__all__ = ["BinaryNotFound", "find_binary"]

_BUNDLED = Path(__file__).resolve().parent / "_bin" / ("dryfire.exe" if os.name == "nt" else "dryfire")


class BinaryNotFound(DryfireError):
    """No dryfire binary was found in any of the places the SDK looks."""


def _is_own_entry_point(path: str) -> bool:
    """Whether path is this package's console script (which execs the binary, so it must not be it)."""
    try:
        scripts = sysconfig.get_path("scripts")
        mine = os.path.join(scripts, os.path.basename(path))
        if os.path.exists(mine) and os.path.samefile(path, mine):
            return True
        with open(path, "rb") as f:
            head = f.read(512)
    except OSError:
        return False
    return head.startswith(b"#!") and b"dryfire._cli" in head


def find_binary() -> str:
    """The path of the dryfire binary the SDK runs.

    The first that exists wins: the DRYFIRE_BIN environment variable, the
    binary inside this package's platform wheel (dryfire/_bin/dryfire), a
    dryfire on PATH (this package's own console script aside).
    """
    env = os.environ.get("DRYFIRE_BIN", "")
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return env
        raise BinaryNotFound(
            f"DRYFIRE_BIN is {env!r}, which is not an executable file: point it at a dryfire binary "
            "(go build -o dryfire ./cmd/dryfire), or unset it to use the binary of the wheel or of PATH"
        )
    if _BUNDLED.is_file() and os.access(_BUNDLED, os.X_OK):
        return str(_BUNDLED)
    path = os.environ.get("PATH", os.defpath)
    for d in path.split(os.pathsep):
        found = shutil.which("dryfire", path=d) if d else None
        if found and not _is_own_entry_point(found):
            return found
    raise BinaryNotFound(
        "the dryfire binary was not found: DRYFIRE_BIN is not set, this dryfire package "
        f"({_BUNDLED.parent.parent}) is not a platform wheel with dryfire/_bin/dryfire, and no dryfire "
        "is on PATH. Install the platform wheel (pip install dryfire-sdk: macOS 12+ arm64 and x86_64, "
        "Linux x86_64 and aarch64, Windows x64; not `pip install dryfire`, another project), or build the "
        "binary (go install github.com/dryfire-dev/dryfire/cmd/dryfire@latest) and set DRYFIRE_BIN "
        f"to its path (Python {sys.version_info.major}.{sys.version_info.minor})"
    )
