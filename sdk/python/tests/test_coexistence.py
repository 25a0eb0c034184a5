"""Our wheel and PyPI's unrelated `dryfire` in one venv: both import (ours as dryfire_sdk), the
pytest plugin loads from its entry point, and the SDK runs its own binary, not the other's script.

The other project is a stand-in built here (its import package `dryfire` and its console script
`dryfire`, as dryfire 0.4.0 has them): the real one needs Python 3.12 and a package index.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from .conftest import EXAMPLES
from .test_binary import IN_CI, dryfire_build

_STANDIN = {
    "dryfire/__init__.py": '"""A stand-in for PyPI\'s unrelated dryfire (0.4.0)."""\nSTANDIN = True\n',
    "dryfire/cli.py": ("import sys\n\n\ndef app():\n"
                       "    print(\"Usage: dryfire [OPTIONS] COMMAND [ARGS]...\", file=sys.stderr)\n"
                       "    print(\"Error: No such command 'version'.\", file=sys.stderr)\n"
                       "    raise SystemExit(2)\n"),
    "dryfire-0.4.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: dryfire\nVersion: 0.4.0\n",
    "dryfire-0.4.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    "dryfire-0.4.0.dist-info/entry_points.txt": "[console_scripts]\ndryfire = dryfire.cli:app\n",
}


def _standin_wheel(directory: Path) -> Path:
    path = directory / "dryfire-0.4.0-py3-none-any.whl"
    record = ""
    with zipfile.ZipFile(path, "w") as z:
        for name, text in _STANDIN.items():
            data = text.encode()
            z.writestr(name, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record += f"{name},sha256={digest},{len(data)}\n"
        z.writestr("dryfire-0.4.0.dist-info/RECORD", record + "dryfire-0.4.0.dist-info/RECORD,,\n")
    return path


def _our_wheel(directory: Path, binary: str) -> Path:
    wheel = os.environ.get("DRYFIRE_TEST_WHEEL")
    if wheel:
        return Path(wheel)
    return directory / dryfire_build.build_wheel(str(directory), {"binary": binary})


def _pip_install(python: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--disable-pip-version-check",
                    "--no-input", "--no-index", "--no-deps", *args], check=True, timeout=300)


_PROBE = """
import json, sys
from importlib.metadata import entry_points
import dryfire, dryfire_sdk
print(json.dumps({
    "dryfire": dryfire.__file__, "standin": getattr(dryfire, "STANDIN", False),
    "sdk": dryfire_sdk.__file__, "binary": dryfire_sdk.find_binary(),
    "pytest11": sorted((ep.name, ep.value) for ep in entry_points(group="pytest11")),
}))
"""

# pytest from the test environment, after the venv's own packages on sys.path (the venv has no
# pip and no index to install pytest from); the plugin comes from the venv's entry point.
_PYTEST = """
import sys
sys.path.extend(sys.argv[1].split("\\0"))
import pytest
code = pytest.main(sys.argv[2:])
print("plugin:", sys.modules["dryfire_sdk.pytest_plugin"].__file__ if "dryfire_sdk.pytest_plugin" in sys.modules else None)
sys.exit(code)
"""


def test_beside_pypis_unrelated_dryfire(tmp_path: Path, binary: str, clean_env: None) -> None:
    if os.name == "nt":
        pytest.skip("the venv layout below is POSIX's")
    try:
        ours = _our_wheel(tmp_path, binary)
    except OSError as e:
        if IN_CI:
            raise
        pytest.skip(f"no wheel to install: {e}")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    _pip_install(py, str(ours))
    _pip_install(py, str(_standin_wheel(tmp_path)))  # installed last: its `dryfire` command wins
    env = {k: v for k, v in os.environ.items() if not k.startswith("DRYFIRE_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"

    probe = subprocess.run([str(py), "-c", _PROBE], capture_output=True, text=True, env=env, timeout=60)
    assert probe.returncode == 0, probe.stderr
    got = json.loads(probe.stdout)
    site = Path(got["sdk"]).parent.parent
    assert got["standin"] is True and Path(got["dryfire"]).parent.parent == site  # both installed
    assert Path(got["sdk"]).is_relative_to(venv)
    assert got["binary"] == str(site / "dryfire_sdk" / "_bin" / "dryfire")  # not venv/bin/dryfire
    assert got["pytest11"] == [["dryfire", "dryfire_sdk.pytest_plugin"]]
    version = subprocess.run([got["binary"], "version"], capture_output=True, text=True, env=env, timeout=60)
    assert version.stdout.startswith("dryfire 0.1.0-dev\n"), version.stdout + version.stderr

    # The command `dryfire` is the last installed distribution's: the stand-in's now, ours again
    # after reinstalling ours (what the README says: do not install both).
    theirs = subprocess.run([str(venv / "bin" / "dryfire"), "version"], capture_output=True, text=True, env=env, timeout=60)
    assert theirs.returncode == 2 and "No such command 'version'" in theirs.stderr

    site_paths = "\0".join(p for p in sys.path if Path(p).name in ("site-packages", "dist-packages"))
    example = EXAMPLES / "pytest"
    run = subprocess.run([str(py), "-c", _PYTEST, site_paths, "-p", "no:cacheprovider", "-v", "test_records.py", "support.dryfire.yaml"],
                         cwd=example, capture_output=True, text=True, env=dict(env, CI="true"), timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    for want in ("test_records.py::test_the_agent_saves_the_intended_record PASSED",
                 "support.dryfire.yaml::a known record is read back PASSED", "4 passed"):
        assert want in run.stdout, run.stdout
    assert f"plugin: {site / 'dryfire_sdk' / 'pytest_plugin.py'}" in run.stdout

    # The plugin's name is `dryfire`: -p no:dryfire turns it off (no suite items, no fixtures).
    off = subprocess.run([str(py), "-c", _PYTEST, site_paths, "-p", "no:cacheprovider", "-p", "no:dryfire", "--co", "-q"],
                         cwd=example, capture_output=True, text=True, env=dict(env, CI="true"), timeout=300)
    assert "support.dryfire.yaml" not in off.stdout and "plugin: None" in off.stdout, off.stdout + off.stderr

    _pip_install(py, "--force-reinstall", str(ours))
    again = subprocess.run([str(venv / "bin" / "dryfire"), "version"], capture_output=True, text=True, env=env, timeout=60)
    assert again.returncode == 0 and again.stdout.startswith("dryfire 0.1.0-dev\n"), again.stdout + again.stderr
