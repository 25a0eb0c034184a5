"""The build backend of the dryfire Python package (PEP 517 and PEP 660), standard library only.

It exists so that building the wheel needs nothing from a package index: CI builds the Go binary,
then ``pip wheel sdk/python --config-settings binary=PATH`` (or DRYFIRE_WHEEL_BINARY=PATH) puts it
at dryfire/_bin/dryfire in a platform wheel tagged for manylinux x86_64 (the binary is static,
built with CGO_ENABLED=0). Without a binary the wheel is pure (py3-none-any) and the SDK finds the
binary through DRYFIRE_BIN or PATH. Wheels are reproducible: fixed timestamps, sorted entries.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import zipfile
from pathlib import Path
from typing import Any

NAME = "dryfire"
VERSION = "0.1.0.dev0"
ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / NAME
PLATFORM_TAG = "manylinux_2_17_x86_64.manylinux2014_x86_64"
_EPOCH = (1980, 1, 1, 0, 0, 0)

_SUMMARY = "Test LLM agents offline, deterministically and fast: the Python SDK and pytest plugin of dryfire"


def _metadata() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8") if (ROOT / "README.md").exists() else ""
    head = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {VERSION}",
        f"Summary: {_SUMMARY}",
        "License: Apache-2.0",
        "Requires-Python: >=3.10",
        "Classifier: Framework :: Pytest",
        "Classifier: Typing :: Typed",
        "Description-Content-Type: text/markdown",
    ]
    return "\n".join(head) + "\n\n" + readme


_ENTRY_POINTS = "[console_scripts]\ndryfire = dryfire._cli:main\n\n[pytest11]\ndryfire = dryfire.pytest_plugin\n"


def _wheel_file(tag: str) -> str:
    return f"Wheel-Version: 1.0\nGenerator: dryfire_build\nRoot-Is-Purelib: {'true' if tag.endswith('any') else 'false'}\nTag: {tag}\n"


def _binary(config_settings: dict[str, Any] | None) -> Path | None:
    value = (config_settings or {}).get("binary") or os.environ.get("DRYFIRE_WHEEL_BINARY", "")
    if not value:
        return None
    p = Path(value).resolve()
    if not p.is_file():
        raise FileNotFoundError(f"building the dryfire wheel: the binary {value!r} is not a file")
    return p


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _write_wheel(directory: str, files: list[tuple[str, bytes, int]], tag: str) -> str:
    dist_info = f"{NAME}-{VERSION}.dist-info"
    files = sorted(files) + [
        (f"{dist_info}/METADATA", _metadata().encode(), 0o644),
        (f"{dist_info}/WHEEL", _wheel_file(tag).encode(), 0o644),
        (f"{dist_info}/entry_points.txt", _ENTRY_POINTS.encode(), 0o644),
    ]
    record = "".join(_record_line(n, d) + "\n" for n, d, _ in files) + f"{dist_info}/RECORD,,\n"
    files.append((f"{dist_info}/RECORD", record.encode(), 0o644))
    name = f"{NAME}-{VERSION}-{tag}.whl"
    path = Path(directory) / name
    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for n, data, mode in files:
            info = zipfile.ZipInfo(n, _EPOCH)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    os.replace(tmp, path)
    return name


def _sources() -> list[tuple[str, bytes, int]]:
    out = []
    for p in sorted(SRC.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts and p.suffix in (".py", ".typed"):
            out.append((p.relative_to(SRC.parent).as_posix(), p.read_bytes(), 0o644))
    return out


# PEP 517 hooks.


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    return []


def get_requires_for_build_sdist(config_settings: dict[str, Any] | None = None) -> list[str]:
    return []


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    return []


def build_wheel(wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None) -> str:
    files = _sources()
    binary = _binary(config_settings)
    tag = "py3-none-any"
    if binary is not None:
        files.append((f"{NAME}/_bin/dryfire", binary.read_bytes(), 0o755))
        tag = f"py3-none-{(config_settings or {}).get('plat', PLATFORM_TAG)}"
    return _write_wheel(wheel_directory, files, tag)


def build_editable(wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None) -> str:
    pth = (str(SRC.parent) + "\n").encode()
    return _write_wheel(wheel_directory, [(f"_{NAME}_editable.pth", pth, 0o644)], "py3-none-any")


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    base = f"{NAME}-{VERSION}"
    name = f"{base}.tar.gz"
    path = Path(sdist_directory) / name
    members = ["pyproject.toml", "README.md", "tools/dryfire_build.py"] + [n for n, _, _ in _sources()]
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel in sorted(members):
            src = ROOT / (rel if not rel.startswith(NAME + "/") else "src/" + rel)
            data = src.read_bytes()
            info = tarfile.TarInfo(f"{base}/{'src/' + rel if rel.startswith(NAME + '/') else rel}")
            info.size, info.mode, info.mtime = len(data), 0o644, 315532800
            tar.addfile(info, io.BytesIO(data))
        pkg_info = _metadata().encode()
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size, info.mode, info.mtime = len(pkg_info), 0o644, 315532800
        tar.addfile(info, io.BytesIO(pkg_info))
    return name


def main(argv: list[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(description="build the dryfire wheel (with the Go binary: a platform wheel)")
    ap.add_argument("--binary", help="the dryfire binary to put in the wheel (CGO_ENABLED=0, linux/amd64)")
    ap.add_argument("--plat", default=PLATFORM_TAG, help=f"the wheel's platform tag (default {PLATFORM_TAG})")
    ap.add_argument("--out", default="dist", help="the directory to write the wheel into")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    settings = {"binary": a.binary, "plat": a.plat} if a.binary else {}
    print(os.path.join(a.out, build_wheel(a.out, settings)))


if __name__ == "__main__":
    main()
