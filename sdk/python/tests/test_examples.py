"""examples/pytest run by pytest as a user runs it: the passing tests and suite, and the
deliberately failing variant, whose failure text is the verdict rendered for a person."""

from __future__ import annotations

import fnmatch
import os
import subprocess
import sys

from .conftest import EXAMPLES

EXAMPLE = EXAMPLES / "pytest"


def pytest_in_example(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "dryfire_sdk.pytest_plugin", "-p", "no:cacheprovider", *args],
                          cwd=EXAMPLE, env=env, capture_output=True, text=True, timeout=300)


def test_the_example_passes_drills_and_suite_cases() -> None:
    r = pytest_in_example("-v", "-rA")
    assert r.returncode == 0, r.stdout + r.stderr
    for want in (
        "test_records.py::test_the_agent_saves_the_intended_record PASSED",
        "test_records.py::test_a_busy_store_is_retried_with_the_same_key PASSED",
        "support.dryfire.yaml::a known record is read back PASSED",
        "support.dryfire.yaml::an unknown record is reported PASSED",
    ):
        assert want in r.stdout, r.stdout
    assert "records.dryfire.yaml" not in r.stdout  # the SDK's drills are not collected as tests
    assert "4 passed" in r.stdout


def test_the_failing_variant_fails_with_the_rendered_verdict() -> None:
    r = pytest_in_example("failing")
    assert r.returncode == 1, r.stdout + r.stderr
    out = r.stdout
    # pytest's assertion, then the verdict: checks with expected vs got, the evidence, the output.
    expected = [
        "E       AssertionError: assert 'failed' == 'passed'",
        "E         drill 'save-record' failed (seed 42, sha256:*): 2 of 3 checks failed",
        "E           FAIL state: {path: record-store.records.record-1.text, equals: hello}  (records.dryfire.yaml:10)",
        "E           FAIL called: {operation: record-store/records.save, with: {id: record-1}}  (records.dryfire.yaml:11)",
        "*- dryfire verdict: drill 'save-record' -*",
        "drill 'save-record' failed (seed 42, sha256:*): 2 of 3 checks failed",
        "  FAIL state: {path: record-store.records.record-1.text, equals: hello}  (records.dryfire.yaml:10)",
        "         expected record-store.records.record-1.text to exist; it is absent (record-store.records exists; it holds record-0, record-2)",
        "  FAIL called: {operation: record-store/records.save, with: {id: record-1}}  (records.dryfire.yaml:11)",
        '         expected record-store/records.save with {"id":"record-1"} to be called at least once; it was called 0 times (and 1 call to record-store/records.save did not match)',
        "  ok   output: {contains: Saved}  (records.dryfire.yaml:12)",
        "evidence:",
        '  1. 2026-01-01T09:00:00Z agent record-store/records.save {"id":"record-2","text":"hello"} -> behavior: {"id":"record-2","version":1}',
        "output: 'Saved record-2 (version 1).'",
        "FAILED failing/test_wrong_record.py::test_the_agent_saves_the_intended_record*",
    ]
    lines = out.splitlines()
    at = 0
    for pattern in expected:  # in this order, each matched as a whole line
        while at < len(lines) and not fnmatch.fnmatchcase(lines[at], pattern):
            at += 1
        assert at < len(lines), f"missing (in order) {pattern!r} in:\n{out}"
