"""Finding the binary, the console script, and the platform wheel that carries the binary."""

from __future__ import annotations

import hashlib
import base64
import os
import stat
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import dryfire_sdk
from dryfire_sdk import _binary

SDK = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SDK / "tools"))
import dryfire_build  # noqa: E402

IN_CI = bool(os.environ.get("CI"))


# A stand-in binary that answers `dryfire version` as the real one does.
_VERSION_SCRIPT = "#!/bin/sh\nprintf 'dryfire 0.1.0-dev\\ncommit unknown\\ntarget linux/amd64\\ngo go1.26\\n'\n"


def _exe(path: Path, text: str = "#!/bin/sh\necho fake\n") -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_DRYFIRE_BIN_comes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _exe(tmp_path / "my-dryfire")
    monkeypatch.setenv("DRYFIRE_BIN", str(fake))
    assert dryfire_sdk.find_binary() == str(fake)


def test_DRYFIRE_BIN_that_is_not_executable_is_an_error_not_a_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "plain").write_text("x")
    monkeypatch.setenv("DRYFIRE_BIN", str(tmp_path / "plain"))
    with pytest.raises(dryfire_sdk.BinaryNotFound, match="DRYFIRE_BIN is .*plain.*not an executable file"):
        dryfire_sdk.find_binary()


def test_the_wheels_binary_comes_before_PATH(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_env: None) -> None:
    if not _binary._BUNDLED.exists():
        if IN_CI:
            pytest.fail(f"CI runs the tests from the platform wheel, but {_binary._BUNDLED} is not there")
        pytest.skip("not installed from a platform wheel")
    _exe(tmp_path / "dryfire")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert dryfire_sdk.find_binary() == str(_binary._BUNDLED)


def test_PATH_comes_last_and_skips_this_packages_console_script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_env: None) -> None:
    monkeypatch.setattr(_binary, "_BUNDLED", tmp_path / "no-wheel" / "dryfire")
    shim_dir, real_dir = tmp_path / "shim", tmp_path / "real"
    shim_dir.mkdir()
    real_dir.mkdir()
    _exe(shim_dir / "dryfire", "#!/usr/bin/python3\nimport sys\nfrom dryfire_sdk._cli import main\nsys.exit(main())\n")
    real = _exe(real_dir / "dryfire", _VERSION_SCRIPT)
    monkeypatch.setenv("PATH", f"{shim_dir}{os.pathsep}{real_dir}")
    assert dryfire_sdk.find_binary() == str(real)


# What PyPI's unrelated `dryfire` (0.4.0) installs as its console script, and what a typer app
# answers to an unknown command.
_FOREIGN_SCRIPT = ("#!/bin/sh\n# from dryfire.adapters.driving.cli.app import app\n"
                   "echo \"Usage: dryfire [OPTIONS] COMMAND [ARGS]...\" >&2\necho \"Error: No such command 'version'.\" >&2\nexit 2\n")


def test_a_foreign_dryfire_on_PATH_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_env: None) -> None:
    monkeypatch.setattr(_binary, "_BUNDLED", tmp_path / "no-wheel" / "dryfire")
    other_dir, real_dir = tmp_path / "other", tmp_path / "real"
    other_dir.mkdir()
    real_dir.mkdir()
    _exe(other_dir / "dryfire", _FOREIGN_SCRIPT)
    real = _exe(real_dir / "dryfire", _VERSION_SCRIPT)
    monkeypatch.setenv("PATH", f"{other_dir}{os.pathsep}{real_dir}")
    assert dryfire_sdk.find_binary() == str(real)


def test_only_a_foreign_dryfire_on_PATH_is_an_error_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_env: None) -> None:
    monkeypatch.setattr(_binary, "_BUNDLED", tmp_path / "no-wheel" / "dryfire")
    foreign = _exe(tmp_path / "dryfire", _FOREIGN_SCRIPT)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(dryfire_sdk.BinaryNotFound) as e:
        dryfire_sdk.find_binary()
    msg = str(e.value)
    assert f"no dryfire on PATH is dryfire's binary (`{foreign} version` exited 2 and printed " in msg
    assert "'Usage: dryfire [OPTIONS] COMMAND [ARGS]...', not dryfire's version lines" in msg
    assert "PyPI's `dryfire` is an unrelated project" in msg


def test_no_binary_is_one_error_naming_the_three_places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_env: None) -> None:
    monkeypatch.setattr(_binary, "_BUNDLED", tmp_path / "no-wheel" / "dryfire")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(dryfire_sdk.BinaryNotFound) as e:
        dryfire_sdk.find_binary()
    msg = str(e.value)
    for want in ("DRYFIRE_BIN is not set", "platform wheel", "no dryfire", "PATH", "pip install dryfire-sdk", "go install github.com/dryfire-dev/dryfire/cmd/dryfire@latest"):
        assert want in msg


def test_console_script_runs_the_binary(venv_bin: Path, clean_env: None) -> None:
    script = venv_bin / "dryfire"
    if not script.exists() or not _binary._BUNDLED.exists():
        if IN_CI:
            pytest.fail("CI runs the tests from the platform wheel, with its console script and binary")
        pytest.skip("the package's console script or binary is not installed here")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DRYFIRE_")}
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True, env=env, check=True)
    assert out.stdout == "dryfire 0.1.0-dev\n"
    # The exit status of the binary is the script's.
    bad = subprocess.run([str(script), "validate", "no-such-dir"], capture_output=True, text=True, env=env)
    assert bad.returncode == 2, bad.stderr


def test_console_script_without_a_binary_says_so(venv_bin: Path, tmp_path: Path) -> None:
    script = venv_bin / "dryfire"
    if not script.exists():
        pytest.skip("the package's console script is not installed here")
    out = subprocess.run([str(script), "--version"], capture_output=True, text=True,
                         env={"PATH": str(tmp_path), "DRYFIRE_BIN": str(tmp_path / "missing")})
    assert out.returncode == 2
    assert out.stderr.startswith("dryfire: DRYFIRE_BIN is ")


def _wheel_entries(path: Path) -> dict[str, zipfile.ZipInfo]:
    with zipfile.ZipFile(path) as z:
        return {i.filename: i for i in z.infolist()}


def test_platform_wheel_carries_an_executable_binary_and_is_reproducible(tmp_path: Path) -> None:
    fake = _exe(tmp_path / "dryfire-bin", "#!/bin/sh\necho 1\n")
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    name = dryfire_build.build_wheel(str(a), {"binary": str(fake)})
    assert name == "dryfire_sdk-0.1.0.dev0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64.whl"
    assert dryfire_build.build_wheel(str(b), {"binary": str(fake)}) == name
    assert (a / name).read_bytes() == (b / name).read_bytes()
    entries = _wheel_entries(a / name)
    mode = entries["dryfire_sdk/_bin/dryfire"].external_attr >> 16
    assert stat.S_ISREG(mode) and mode & 0o111
    for must in ("dryfire_sdk/py.typed", "dryfire_sdk/pytest_plugin.py", "dryfire_sdk/testing.py"):
        assert must in entries
    with zipfile.ZipFile(a / name) as z:
        wheel = z.read("dryfire_sdk-0.1.0.dev0.dist-info/WHEEL").decode()
        assert "Root-Is-Purelib: false" in wheel and "Tag: py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64" in wheel
        eps = z.read("dryfire_sdk-0.1.0.dev0.dist-info/entry_points.txt").decode()
        assert "[pytest11]\ndryfire = dryfire_sdk.pytest_plugin" in eps and "dryfire = dryfire_sdk._cli:main" in eps
        # Every file's RECORD line has its hash and size.
        for line in z.read("dryfire_sdk-0.1.0.dev0.dist-info/RECORD").decode().splitlines():
            path, digest, size = line.split(",")
            if path.endswith("RECORD"):
                assert digest == size == ""
                continue
            data = z.read(path)
            assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert int(size) == len(data)


def test_without_a_binary_the_wheel_is_pure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DRYFIRE_WHEEL_BINARY", raising=False)
    name = dryfire_build.build_wheel(str(tmp_path), {"go": "never"})
    assert name.endswith("-py3-none-any.whl")
    assert not any(n.startswith("dryfire_sdk/_bin/") for n in _wheel_entries(tmp_path / name))


def test_the_installed_wheel_is_the_platform_wheel_ci_built() -> None:
    wheel = os.environ.get("DRYFIRE_TEST_WHEEL")
    if not wheel:
        pytest.skip("not run by scripts/ci.d/30-python.sh")
    entries = _wheel_entries(Path(wheel))
    installed = Path(dryfire_sdk.__file__).parent
    with zipfile.ZipFile(wheel) as z:
        assert z.read("dryfire_sdk/_bin/dryfire") == (installed / "_bin" / "dryfire").read_bytes()
    assert "dryfire_sdk/_bin/dryfire" in entries


def test_one_version_everywhere() -> None:
    project = tomllib.loads((SDK / "pyproject.toml").read_text())["project"]
    assert project["version"] == dryfire_build.VERSION == dryfire_sdk.__version__
    assert project["requires-python"] == ">=3.10"
