"""Shared fixtures of the SDK's tests: the repository, the binary under test, the venv it runs in."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import dryfire_sdk

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples"


@pytest.fixture(scope="session")
def binary() -> str:
    """The dryfire binary the SDK finds (in CI: the one inside the installed wheel)."""
    return dryfire_sdk.find_binary()


@pytest.fixture(scope="session")
def venv_bin() -> Path:
    """The bin directory of the environment the tests run in."""
    return Path(sys.executable).parent


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No DRYFIRE_ variables and no CI: the tests set what they need."""
    for k in list(os.environ):
        if k.startswith("DRYFIRE_") and k not in ("DRYFIRE_TEST_WHEEL", "DRYFIRE_TEST_VENV"):
            monkeypatch.delenv(k)
