"""Suites as pytest tests: *.dryfire.yaml collected, one item per case, run by dryfire."""

from __future__ import annotations

import shutil
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from .conftest import EXAMPLES
from dryfire_sdk._suites import case_names, run_suite


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("version: 1\ncases:\n  - name: a\n    input: x\n  - name: b\n    input: y\n", ["a", "b"]),
        ("cases:\n- name: at column zero\n  input: x\n", ["at column zero"]),
        ("cases:\n  - input: x\n    name: name second\n", ["name second"]),
        ("cases:\n  - name: 'it''s quoted'\n  - name: \"double \\\"q\\\"\"\n", ["it's quoted", 'double "q"']),
        ("cases:\n  - name: with # a comment\n", ["with"]),
        ("cases:  # the cases\n  # a comment line\n\n  - name: a\n    script:\n      - name: not a case\n", ["a"]),
        ("cases:\n  - {name: flow, input: x}\n  - {input: y, name: 'flow 2'}\n", ["flow", "flow 2"]),
        ("cases:\n  -\n    name: on its own line\n", ["on its own line"]),
        ("version: 1\nagent: {provider: script}\n", []),
        ("cases:\n  - name: a\nmocks: {}\n", ["a"]),
        # Shapes this reader does not follow: the file becomes one item.
        ("cases: [{name: a}]\n", None),
        ("cases:\n  - name: >\n      folded\n", None),
        ("cases:\n  - input: no name\n", None),
    ],
)
def test_case_names(text: str, want: list[str] | None) -> None:
    assert case_names(text) == want


def test_case_names_of_the_examples() -> None:
    assert case_names((EXAMPLES / "failing" / "refund.dryfire.yaml").read_text()) == ["typo in the order id", "the order is found"]
    assert case_names((EXAMPLES / "quickstart" / "support.dryfire.yaml").read_text()) == [
        "gold customer gets a refund after a retry", "refund outage is reported, not hidden", "no coupon for a standard customer",
    ]


def run(pytester: pytest.Pytester, *args: str, autoload: bool = False) -> pytest.RunResult:
    """pytest in a subprocess, with only the dryfire and xdist plugins (third-party plugins of the
    test environment, such as langsmith's, cost seconds each start); autoload=True loads every
    installed plugin, dryfire's through its pytest11 entry point."""
    if autoload:
        return pytester.runpytest_subprocess(*args)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        return pytester.runpytest_subprocess("-p", "dryfire_sdk.pytest_plugin", "-p", "xdist.plugin", *args)


@pytest.fixture
def suites(pytester: pytest.Pytester) -> Path:
    shutil.copy(EXAMPLES / "failing" / "refund.dryfire.yaml", pytester.path / "refund.dryfire.yaml")
    shutil.copy(EXAMPLES / "quickstart" / "support.dryfire.yaml", pytester.path / "support.dryfire.yaml")
    return pytester.path


def test_every_case_is_an_item_and_a_failing_case_fails_with_dryfires_text(pytester: pytest.Pytester, suites: Path) -> None:
    r = run(pytester, "-v", autoload=True)
    r.assert_outcomes(passed=4, failed=1)
    r.stdout.fnmatch_lines(["plugins: *dryfire-sdk-0.1.0.dev0*"])
    r.stdout.fnmatch_lines([
        "refund.dryfire.yaml::typo in the order id FAILED*",
        "refund.dryfire.yaml::the order is found PASSED*",
        "support.dryfire.yaml::gold customer gets a refund after a retry PASSED*",
    ])
    # The failure is dryfire's own report text for the case, paths relative to the rootdir.
    r.stdout.fnmatch_lines([
        "*_ refund.dryfire.yaml::typo in the order id *_",
        "FAIL  refund.dryfire.yaml: typo in the order id",
        "      check failed at refund.dryfire.yaml:30: called: {tool: lookup_order, with: {order_id: A-991}, times: 1}",
        '        expected lookup_order with {"order_id":"A-991"} to be called exactly 1 time; it was never called with matching arguments*',
        "      check failed at refund.dryfire.yaml:31: output: {contains: gold}",
        '        expected output to contain "gold"; output was "Your order is standard tier."',
        '      unmatched call in turn 1: lookup_order {"order_id":"A-992"}',
    ])
    assert r.ret == pytest.ExitCode.TESTS_FAILED


def test_k_selects_cases_and_only_they_run(pytester: pytest.Pytester, suites: Path) -> None:
    r = run(pytester, "-v", "-k", "gold", "--junitxml", "junit.xml")
    r.assert_outcomes(passed=1, deselected=4)
    tree = ET.parse(pytester.path / "junit.xml")
    cases = [(c.get("classname"), c.get("name")) for c in tree.iter("testcase")]
    assert cases == [("support.dryfire.yaml", "gold customer gets a refund after a retry")]


def test_a_file_runs_once_for_the_selected_cases_only(binary: str, suites: Path) -> None:
    results, out, code = run_suite(binary, str(suites), str(suites / "refund.dryfire.yaml"), ["the order is found"],
                                   record=None, concurrency=None, python=None)
    assert list(results) == ["the order is found"] and code == 0, out
    assert results["the order is found"].status == "passed"
    # Names with the regular expressions' special characters are quoted.
    (suites / "odd.dryfire.yaml").write_text(textwrap.dedent("""\
        version: 1
        agent: {provider: script}
        cases:
          - {name: "a.b (c)+[d]|e", input: x, script: [{text: one}]}
          - {name: "a.b (c)+[d]|f", input: x, script: [{text: two}]}
        """))
    results, out, code = run_suite(binary, str(suites), str(suites / "odd.dryfire.yaml"), ["a.b (c)+[d]|e"],
                                   record=None, concurrency=None, python=None)
    assert list(results) == ["a.b (c)+[d]|e"], out


def test_junitxml_has_a_testcase_per_case_with_the_failure_text(pytester: pytest.Pytester, suites: Path) -> None:
    run(pytester, "--junitxml", "junit.xml")
    tree = ET.parse(pytester.path / "junit.xml")
    cases = {c.get("name"): c for c in tree.iter("testcase")}
    assert sorted(cases) == sorted([
        "typo in the order id", "the order is found", "gold customer gets a refund after a retry",
        "refund outage is reported, not hidden", "no coupon for a standard customer",
    ])
    failure = cases["typo in the order id"].find("failure")
    assert failure is not None
    assert "check failed at refund.dryfire.yaml:31: output: {contains: gold}" in (failure.text or "")
    assert cases["the order is found"].find("failure") is None


def test_xdist_workers_run_the_items(pytester: pytest.Pytester, suites: Path) -> None:
    r = run(pytester, "-n", "2", "--dist", "loadfile")
    r.assert_outcomes(passed=4, failed=1)
    r.stdout.fnmatch_lines(["*FAIL  refund.dryfire.yaml: typo in the order id*"])


def test_record_option_reaches_dryfire(pytester: pytest.Pytester) -> None:
    pytester.makefile(".dryfire.yaml", live=textwrap.dedent("""\
        version: 1
        agent: {provider: openai, model: gpt-4o-mini}
        cases:
          - name: needs a cassette
            input: hello
        """))
    r = run(pytester, "--dryfire-record", "none", "--dryfire-concurrency", "1")
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["ERROR*live.dryfire.yaml: needs a cassette", "*cassette*"])


def test_a_world_suite_without_an_agent_is_the_sdks_drills_and_not_collected(pytester: pytest.Pytester) -> None:
    shutil.copy(EXAMPLES / "world" / "support.world.yaml", pytester.path)
    shutil.copy(EXAMPLES / "world" / "behaviors.star", pytester.path)
    pytester.makefile(".dryfire.yaml", sdk=textwrap.dedent("""\
        version: 1
        world: support.world.yaml
        cases:
          - name: only for an SDK
            input: Please refund order A-991.
        """))
    r = run(pytester)
    assert r.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    # With an agent, its drills are tests.
    (pytester.path / "sdk.dryfire.yaml").write_text((pytester.path / "sdk.dryfire.yaml").read_text() + "\nagent: {command: [\"false\"]}\n")
    r = run(pytester)
    r.assert_outcomes(failed=1)


def test_an_invalid_suite_fails_with_positioned_errors(pytester: pytest.Pytester) -> None:
    pytester.makefile(".dryfire.yaml", bad=textwrap.dedent("""\
        version: 1
        agent:
          provider: script
          max_turn: 4
        cases:
          - name: one
            input: x
            script: [{text: hi}]
        """))
    r = run(pytester)
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(['*bad.dryfire.yaml:4:3: unknown key "max_turn" in agent (did you mean "max_turns"?)*'])


def test_suites_can_be_turned_off(pytester: pytest.Pytester, suites: Path) -> None:
    r = run(pytester, "--no-dryfire-suites")
    assert r.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def _big_suite(n: int) -> str:
    cases = "".join(
        f"  - name: case {i}\n    input: Look up A-{i}.\n    script:\n"
        f"      - tool_calls: [{{name: lookup_order, args: {{order_id: A-{i}}}}}]\n      - text: found {i}\n"
        f"    expect:\n      - called: {{tool: lookup_order, times: 1}}\n      - output: {{contains: found {i}}}\n"
        for i in range(n)
    )
    return ("version: 1\nagent: {provider: script}\ntools:\n  lookup_order:\n"
            "    input_schema: {type: object, properties: {order_id: {type: string}}}\n"
            "mocks:\n  lookup_order:\n    - return: {tier: gold}\ncases:\n" + cases)


def test_a_thousand_cases_are_a_thousand_items(pytester: pytest.Pytester) -> None:
    (pytester.path / "big.dryfire.yaml").write_text(_big_suite(1000))
    r = run(pytester, "-q", "-p", "no:cacheprovider")
    r.assert_outcomes(passed=1000)
