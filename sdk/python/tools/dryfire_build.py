"""The build backend of the dryfire Python package (PEP 517 and PEP 660), standard library only.

The distribution is ``dryfire-sdk`` and the import package ``dryfire_sdk`` (PyPI's ``dryfire`` is an
unrelated project that imports as ``dryfire``). Building needs nothing from a package index. Where
the binary comes from:

1. ``--config-settings binary=PATH`` (or DRYFIRE_WHEEL_BINARY=PATH), with ``target=GOOS/GOARCH``
   (default linux/amd64): a platform wheel for that target (TAGS), the binary at
   dryfire_sdk/_bin/dryfire (dryfire.exe for windows). scripts/release.sh builds one per target.
2. Else, with the dryfire Go source beside this file (a clone: ../../go.mod; an sdist: go/) and
   ``go`` on PATH: the binary is built from that source for this machine (CGO_ENABLED=0), in a
   platform wheel for this machine. ``go=never`` in the config settings turns this off.
3. Else a pure wheel (py3-none-any), and a line on standard error saying that it holds no binary
   and why; the SDK then finds the binary through DRYFIRE_BIN or PATH.

Wheels and the sdist are reproducible: fixed timestamps, sorted entries.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Any

NAME = "dryfire_sdk"  # the import package (not "dryfire": PyPI's "dryfire" imports as that)
PROJECT = "dryfire-sdk"  # the distribution, free on PyPI (its "dryfire" is another project)
DIST = PROJECT.replace("-", "_")  # the distribution in file names
VERSION = "0.1.0.dev0"
ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / NAME
MODULE = "github.com/dryfire-dev/dryfire"

# The platform tag of each release target's wheel. Go 1.26's linker marks darwin binaries for
# macOS 12.0 and later (both arches); the Linux binary is static (CGO_ENABLED=0): any glibc, and
# musl too.
TAGS = {
    "darwin/arm64": "macosx_12_0_arm64",
    "darwin/amd64": "macosx_12_0_x86_64",
    "linux/amd64": "manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64",
    "linux/arm64": "manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64",
    "windows/amd64": "win_amd64",
}
PLATFORM_TAG = TAGS["linux/amd64"]
_EPOCH = (1980, 1, 1, 0, 0, 0)

_SUMMARY = "Test LLM agents offline, deterministically and fast: the Python SDK and pytest plugin of dryfire"


def _metadata() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8") if (ROOT / "README.md").exists() else ""
    head = [
        "Metadata-Version: 2.1",
        f"Name: {PROJECT}",
        f"Version: {VERSION}",
        f"Summary: {_SUMMARY}",
        "License: Apache-2.0",
        "Requires-Python: >=3.10",
        "Classifier: Framework :: Pytest",
        "Classifier: Typing :: Typed",
        "Description-Content-Type: text/markdown",
    ]
    return "\n".join(head) + "\n\n" + readme


# The command stays `dryfire` (the engine's own name, as npm's bin); the pytest plugin's name stays
# `dryfire` (what `-p no:dryfire` names; PyPI's `dryfire` registers no pytest11 entry point).
_ENTRY_POINTS = f"[console_scripts]\ndryfire = {NAME}._cli:main\n\n[pytest11]\ndryfire = {NAME}.pytest_plugin\n"


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


def _go_source() -> Path | None:
    """The dryfire Go module this file sits in: go/ of an sdist, or the clone's root."""
    for d in (ROOT / "go", ROOT.parent.parent):
        mod = d / "go.mod"
        if mod.is_file() and mod.read_text(encoding="utf-8").startswith(f"module {MODULE}\n"):
            return d
    return None


def _host_target() -> str | None:
    """This machine as a release target (GOOS/GOARCH), or None when it is none of them."""
    machine = platform.machine().lower()
    arch = {"x86_64": "amd64", "amd64": "amd64", "arm64": "arm64", "aarch64": "arm64"}.get(machine)
    goos = {"darwin": "darwin", "linux": "linux", "win32": "windows"}.get(sys.platform)
    return f"{goos}/{arch}" if goos and arch and f"{goos}/{arch}" in TAGS else None


def _build_from_source(directory: str) -> tuple[Path, str] | None:
    """The binary built from the Go source for this machine, and its wheel's platform tag; None
    (having said why on standard error) when there is no source or no Go."""
    src = _go_source()
    go = shutil.which("go")
    if src is None or go is None:
        why = "no dryfire Go source beside it" if src is None else "Go is not on PATH (it needs Go 1.26 or later, https://go.dev/dl)"
        print(f"{PROJECT}: building a wheel without the dryfire binary: {why}; the SDK will look for "
              "the binary in DRYFIRE_BIN or on PATH (go install github.com/dryfire-dev/dryfire/cmd/dryfire@latest)",
              file=sys.stderr)
        return None
    target = _host_target()
    tag = TAGS[target] if target else sysconfig_platform()
    out = Path(tempfile.mkdtemp(prefix="dryfire-build-", dir=directory)) / ("dryfire.exe" if os.name == "nt" else "dryfire")
    print(f"{PROJECT}: building the dryfire binary from {src} with {go}", file=sys.stderr)
    env = dict(os.environ, CGO_ENABLED="0")
    subprocess.run([go, "build", "-trimpath", "-ldflags=-s -w -buildid=", "-o", str(out), "./cmd/dryfire"],
                   cwd=src, env=env, check=True)
    return out, tag


def sysconfig_platform() -> str:
    """This machine's platform tag by the standard library (a local wheel, not for an index)."""
    import sysconfig

    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _write_wheel(directory: str, files: list[tuple[str, bytes, int]], tag: str) -> str:
    dist_info = f"{DIST}-{VERSION}.dist-info"
    files = sorted(files) + [
        (f"{dist_info}/METADATA", _metadata().encode(), 0o644),
        (f"{dist_info}/WHEEL", _wheel_file(tag).encode(), 0o644),
        (f"{dist_info}/entry_points.txt", _ENTRY_POINTS.encode(), 0o644),
    ]
    record = "".join(_record_line(n, d) + "\n" for n, d, _ in files) + f"{dist_info}/RECORD,,\n"
    files.append((f"{dist_info}/RECORD", record.encode(), 0o644))
    name = f"{DIST}-{VERSION}-{tag}.whl"
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
    settings = config_settings or {}
    files = _sources()
    binary = _binary(settings)
    target = settings.get("target", "linux/amd64")
    if target not in TAGS:
        raise ValueError(f"building the dryfire wheel: target {target!r} is not one of {', '.join(TAGS)}")
    plat = settings.get("plat") or TAGS[target]
    built = None
    if binary is None and settings.get("go") != "never":
        built = _build_from_source(wheel_directory)
        if built is not None:
            binary, plat = built
            target = _host_target() or f"{sys.platform}/{platform.machine()}"
    tag = "py3-none-any"
    try:
        if binary is not None:
            exe = "dryfire.exe" if target.startswith("windows/") else "dryfire"
            files.append((f"{NAME}/_bin/{exe}", binary.read_bytes(), 0o755))
            tag = f"py3-none-{plat}"
    finally:
        if built is not None:
            shutil.rmtree(built[0].parent, ignore_errors=True)
    return _write_wheel(wheel_directory, files, tag)


def build_editable(wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None) -> str:
    pth = (str(SRC.parent) + "\n").encode()
    return _write_wheel(wheel_directory, [(f"_{NAME}_editable.pth", pth, 0o644)], "py3-none-any")


def _go_files(src: Path) -> list[str]:
    """The files of the dryfire module that building cmd/dryfire reads, on every target: go.mod,
    go.sum, and each package's Go and embedded files (tests and test data left out; other modules
    come from the Go module proxy, checked against go.sum)."""
    fmt = ('{{if .Module}}{{if eq .Module.Path "%s"}}{{.Dir}}\t{{join .GoFiles " "}} '
           '{{join .IgnoredGoFiles " "}} {{join .EmbedFiles " "}}\n{{end}}{{end}}') % MODULE
    files = {"go.mod", "go.sum"}
    for target in TAGS:
        goos, goarch = target.split("/")
        env = dict(os.environ, GOOS=goos, GOARCH=goarch, CGO_ENABLED="0")
        out = subprocess.run(["go", "list", "-deps", "-f", fmt, "./cmd/dryfire"], cwd=src, env=env,
                             check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            d, _, names = line.partition("\t")
            rel = Path(d).relative_to(src)
            files.update((rel / n).as_posix() for n in names.split() if not n.endswith("_test.go"))
    return sorted(files)


def _tar_member(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o644, 315532800
    tar.addfile(info, io.BytesIO(data))


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    """The sdist: the SDK, this backend and, when Go is here to list it, the Go source the binary
    is built from (go/), so that a wheel built from the sdist where Go is installed holds it."""
    import gzip

    base = f"{DIST}-{VERSION}"
    name = f"{base}.tar.gz"
    path = Path(sdist_directory) / name
    members = ["pyproject.toml", "README.md", "tools/dryfire_build.py"] + ["src/" + n for n, _, _ in _sources()]
    src = _go_source()
    go_files: list[str] = []
    if src is not None and src != ROOT / "go" and shutil.which("go"):
        go_files = _go_files(src)
    else:
        print(f"{PROJECT}: the sdist holds no Go source (no clone with Go here): wheels built from it "
              "have no binary", file=sys.stderr)
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for rel in sorted(members):
                _tar_member(tar, f"{base}/{rel}", (ROOT / rel).read_bytes())
            for rel in go_files:
                _tar_member(tar, f"{base}/go/{rel}", ((src or ROOT) / rel).read_bytes())
            _tar_member(tar, f"{base}/PKG-INFO", _metadata().encode())
    return name


def main(argv: list[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(description="build the dryfire-sdk wheel (with the Go binary: a platform wheel) or sdist")
    ap.add_argument("--binary", help="the dryfire binary to put in the wheel (CGO_ENABLED=0, built for --target)")
    ap.add_argument("--target", default="linux/amd64", choices=sorted(TAGS), help="the binary's GOOS/GOARCH (default linux/amd64)")
    ap.add_argument("--plat", default=None, help="the wheel's platform tag (default: the target's, TAGS)")
    ap.add_argument("--sdist", action="store_true", help="build the sdist instead")
    ap.add_argument("--out", default="dist", help="the directory to write into")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    if a.sdist:
        print(os.path.join(a.out, build_sdist(a.out)))
        return
    settings = {"binary": a.binary, "target": a.target, "plat": a.plat or TAGS[a.target]} if a.binary else {"go": "never"}
    print(os.path.join(a.out, build_wheel(a.out, settings)))


if __name__ == "__main__":
    main()
