"""Under pytest, agent.command: [python, ...] runs pytest's own interpreter (the plugin puts its
directory first on PATH), not whichever python the user's PATH finds first."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from dryfire_sdk._suites import interpreter_first, run_suite

SUITE = """\
version: 1
agent:
  command: [python, agent.py]
cases:
  - name: which python
    input: hello
    expect:
      - output: {{equals: {want}}}
"""


def test_interpreter_first_puts_this_interpreter_first_once() -> None:
    here = os.path.dirname(os.path.abspath(sys.executable))
    env = interpreter_first({"PATH": os.pathsep.join(["/elsewhere/bin", here, "/usr/bin"])})
    assert env["PATH"].split(os.pathsep) == [here, "/elsewhere/bin", "/usr/bin"]


def test_agent_command_python_is_pytests_interpreter(tmp_path: Path, binary: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # A decoy python first on PATH: without the plugin's PATH, the agent would run it.
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    (decoy / "python").write_text("#!/bin/sh\necho decoy python\n")
    (decoy / "python").chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(decoy), os.environ.get("PATH", "")]))
    for k in list(os.environ):
        if k.startswith("DRYFIRE_") and k not in ("DRYFIRE_BIN",):
            monkeypatch.delenv(k)
    (tmp_path / "agent.py").write_text("import sys\nsys.stdin.read()\nprint(sys.prefix)\n")
    (tmp_path / "which.dryfire.yaml").write_text(SUITE.format(want=repr(sys.prefix)))
    results, out, code = run_suite(binary, str(tmp_path), str(tmp_path / "which.dryfire.yaml"), None,
                                   record="none", concurrency=None, python=None)
    assert code == 0, out
    assert results["which python"].status == "passed", textwrap.indent(out, "  ")
