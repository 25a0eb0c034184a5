"""Finding the dryfire binary: DRYFIRE_BIN, the one in this wheel, then PATH."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from ._errors import DryfireError

__all__ = ["BinaryNotFound", "find_binary"]

_BUNDLED = Path(__file__).resolve().parent / "_bin" / ("dryfire.exe" if os.name == "nt" else "dryfire")

# The first lines of `dryfire version` (internal/cli/version.go): what a dryfire on PATH must answer.
_VERSION = re.compile(r"dryfire \S+\ncommit \S+\ntarget [a-z0-9]+/[a-z0-9]+\n")
_PROBE_TIMEOUT = 10.0
_probed: dict[tuple[str, int, int], str | None] = {}


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
    # dryfire._cli: this package's script before its import package was renamed to dryfire_sdk.
    return head.startswith(b"#!") and (b"dryfire_sdk._cli" in head or b"dryfire._cli" in head)


def _foreign(path: str) -> str | None:
    """None when path answers `dryfire version` as dryfire's binary does, else what it answered."""
    try:
        st = os.stat(path)
    except OSError as e:
        return f"cannot be read ({e.strerror})"
    key = (path, st.st_mtime_ns, st.st_size)
    if key not in _probed:
        _probed[key] = _probe(path)
    return _probed[key]


def _probe(path: str) -> str | None:
    try:
        p = subprocess.run([path, "version"], stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=_PROBE_TIMEOUT, env={k: v for k, v in os.environ.items() if k != "DRYFIRE_BIN"})
    except subprocess.TimeoutExpired:
        return f"`{path} version` did not answer in {_PROBE_TIMEOUT:g}s"
    except OSError as e:
        return f"`{path} version` did not start ({e.strerror})"
    out = p.stdout[:4096].decode("utf-8", "replace").replace("\r\n", "\n")
    if p.returncode == 0 and _VERSION.match(out):
        return None
    said = (out or p.stderr[:4096].decode("utf-8", "replace")).strip().splitlines()
    first = said[0][:120] if said else ""
    return f"`{path} version` exited {p.returncode} and printed {first!r}, not dryfire's version lines"


def find_binary() -> str:
    """The path of the dryfire binary the SDK runs.

    The first that exists wins: the DRYFIRE_BIN environment variable, the
    binary inside this package's platform wheel (dryfire_sdk/_bin/dryfire), a
    dryfire on PATH that answers ``dryfire version`` as dryfire's binary does
    (this package's own console script, and any other program named dryfire,
    such as the console script of PyPI's unrelated ``dryfire``, aside).
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
    skipped: list[str] = []
    for d in path.split(os.pathsep):
        found = shutil.which("dryfire", path=d) if d else None
        if not found or _is_own_entry_point(found):
            continue
        why = _foreign(found)
        if why is None:
            return found
        skipped.append(why)
    on_path = "no dryfire is on PATH"
    if skipped:
        on_path = ("no dryfire on PATH is dryfire's binary (" + "; ".join(skipped) + "; PyPI's `dryfire` is an "
                   "unrelated project with a console script of that name: pip uninstall dryfire)")
    raise BinaryNotFound(
        "the dryfire binary was not found: DRYFIRE_BIN is not set, this dryfire_sdk package "
        f"({_BUNDLED.parent.parent}) is not a platform wheel with dryfire_sdk/_bin/dryfire, and {on_path}. "
        "Install the platform wheel (pip install dryfire-sdk: macOS 12+ arm64 and x86_64, "
        "Linux x86_64 and aarch64, Windows x64; not `pip install dryfire`, another project), or build the "
        "binary (go install github.com/dryfire-dev/dryfire/cmd/dryfire@latest) and set DRYFIRE_BIN "
        f"to its path (Python {sys.version_info.major}.{sys.version_info.minor})"
    )
