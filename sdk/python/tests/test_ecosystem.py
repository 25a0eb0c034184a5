"""The Python ecosystem as real clients of dryfire, at the versions of requirements-test.txt.

- examples/pytest/frameworks/agent.py, one agent written against the openai SDK (Chat and
  Responses, with and without streams), the anthropic SDK (Messages, with and without streams),
  google-genai (Gemini generateContent, with and without streams), ollama (Ollama's /api/chat, with and
  without streams), boto3's bedrock-runtime client (Bedrock Converse and ConverseStream), Vertex AI through
  google-genai (vertexai=True) and anthropic's AnthropicVertex (each with and without streams), openai's AzureOpenAI (a
  deployment's chat completions, with and without streams), Google ADK (an Agent on its default
  Gemini model, with and without streams; its own folder on PYTHONPATH, below),
  the OpenAI Agents SDK, pydantic-ai and LangGraph, runs as agent.command cases: recorded once
  against the repository's fake model servers (internal/test/fakeapi, served by a Go test), then,
  with those stopped, replayed twice with --record none: both replays give the same report, byte
  for byte (durations aside), and every case passes.
- The same agent.py on the script model (frameworks/scripted.dryfire.yaml, and
  adk-scripted.dryfire.yaml for ADK): no key, no cassette, no fake server; and the four agents of examples/scripted-agents (openai, anthropic streamed,
  LangGraph over MCP, with two tools and a case that must fail) as agent.command cases and in
  run_drills against examples/world.
- The mcp SDK's client over stdio and streamable HTTP against `dryfire serve`, and under `dryfire run`
  (agent.command) reading a resource, filling a prompt and answering elicitation and sampling during
  tool calls, in both protocol eras.
- pydantic-ai in-process, its function tool a mock_tool, in a drill whose model calls the
  engine records and then replays.

The compatibility table of the docs (sdk/python/compatibility.md) is what these tests ran:
the last test writes it from their rows and fails when the committed file differs
(DRYFIRE_UPDATE_COMPAT=1 rewrites it).
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import dryfire_sdk
from dryfire_sdk.testing import mock_tool

from .conftest import EXAMPLES, REPO

FRAMEWORKS = EXAMPLES / "pytest" / "frameworks"
COMPAT = Path(__file__).resolve().parents[1] / "compatibility.md"
KEY = "fake-key-for-the-ecosystem"

# The model google-adk 2.13.0 calls when an Agent names none (LlmAgent.DEFAULT_MODEL).
ADK_MODEL = "gemini-3.5-flash"
# (case, package, API, streamed) of examples/pytest/frameworks, by suite.
CASES = {
    "chat": [("openai chat", "openai", "Chat Completions", False), ("openai chat stream", "openai", "Chat Completions", True),
             ("pydantic-ai", "pydantic-ai-slim", "Chat Completions (OpenAIChatModel)", False),
             ("langgraph", "langgraph", "Chat Completions (langchain-openai ChatOpenAI, create_react_agent)", False)],
    "responses": [("openai responses", "openai", "Responses", False), ("openai responses stream", "openai", "Responses", True),
                  ("openai-agents", "openai-agents", "Responses (Runner.run_sync, function_tool)", False)],
    "anthropic": [("anthropic messages", "anthropic", "Messages", False), ("anthropic messages stream", "anthropic", "Messages", True)],
    "azure": [("azure openai", "openai", "Chat Completions (AzureOpenAI, a deployment's path)", False),
              ("azure openai stream", "openai", "Chat Completions (AzureOpenAI, a deployment's path)", True)],
    "gemini": [("google-genai", "google-genai", "Gemini generateContent", False), ("google-genai stream", "google-genai", "Gemini generateContent", True)],
    "ollama": [("ollama", "ollama", "Ollama chat", False), ("ollama stream", "ollama", "Ollama chat", True)],
    "bedrock": [("bedrock", "boto3", "Bedrock Converse (bedrock-runtime client)", False), ("bedrock stream", "boto3", "Bedrock Converse (bedrock-runtime client)", True)],
    "vertex-gemini": [("vertex gemini", "google-genai", "Vertex AI generateContent (Client(vertexai=True, project, location))", False),
                      ("vertex gemini stream", "google-genai", "Vertex AI generateContent (Client(vertexai=True, project, location))", True)],
    "vertex-anthropic": [("anthropic vertex", "anthropic", "Vertex AI rawPredict (AnthropicVertex)", False),
                         ("anthropic vertex stream", "anthropic", "Vertex AI rawPredict (AnthropicVertex)", True)],
    "adk": [("google-adk", "google-adk", f"Gemini generateContent (Agent on ADK's default model, {ADK_MODEL}; Runner)", False),
            ("google-adk stream", "google-adk", f"Gemini generateContent (Agent on ADK's default model, {ADK_MODEL}; Runner, SSE)", True)],
}
# suite → (fake, base URL variable, its path, key variable)
UPSTREAM = {"chat": ("openai_chat", "OPENAI_BASE_URL", "/v1", "OPENAI_API_KEY"), "responses": ("openai_responses", "OPENAI_BASE_URL", "/v1", "OPENAI_API_KEY"),
            "anthropic": ("anthropic", "ANTHROPIC_BASE_URL", "", "ANTHROPIC_API_KEY"), "gemini": ("gemini", "GOOGLE_GEMINI_BASE_URL", "", "GEMINI_API_KEY"),
            "azure": ("openai_chat", "AZURE_OPENAI_ENDPOINT", "", "AZURE_OPENAI_API_KEY"),
            "adk": ("gemini", "GOOGLE_GEMINI_BASE_URL", "", "GEMINI_API_KEY"), "ollama": ("ollama", "OLLAMA_HOST", "", "OLLAMA_API_KEY"),
            "bedrock": ("bedrock", "AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "", "AWS_ACCESS_KEY_ID"),
            "vertex-gemini": ("vertex", "GOOGLE_VERTEX_BASE_URL", "", "GOOGLE_OAUTH_ACCESS_TOKEN"),
            "vertex-anthropic": ("vertex", "GOOGLE_VERTEX_BASE_URL", "", "GOOGLE_OAUTH_ACCESS_TOKEN")}

# Google ADK 2.13 pins google-genai<3, opentelemetry<=1.44 and websockets<16, which this venv has
# newer: 30-python.sh installs it apart (sdk/python/requirements-adk.txt, with --target) and names
# that folder in DRYFIRE_TEST_ADK, put first on the ADK suites' PYTHONPATH (and on no other's).
ADK = os.environ.get("DRYFIRE_TEST_ADK", "")

ROWS: list[tuple[str, str, str, str, str]] = []


def _version(dist: str) -> str:
    if dist == "langchain-mcp-adapters" and MCP1:  # installed apart (below)
        return next(importlib.metadata.distributions(name=dist, path=[MCP1])).version
    if dist == "google-adk":  # installed apart (above)
        return next(importlib.metadata.distributions(name=dist, path=[ADK])).version
    return importlib.metadata.version(dist)


def _suite_env(suite: str, **more: str) -> dict[str, str]:
    """The environment of `dryfire run SUITE`: ADK's suites get ADK's folder first on PYTHONPATH."""
    env = _offline_env(**more)
    if suite.startswith("adk"):
        env["PYTHONPATH"] = os.pathsep.join(p for p in (ADK, env.get("PYTHONPATH", "")) if p)
    return env


def _row(dist: str, transport: str, stream: str, works: str) -> None:
    ROWS.append((dist, _version(dist), transport, stream, works))


def _offline_env(**more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_", "AZURE_", "OLLAMA_", "AWS_", "DRYFIRE_")) and k != "CI"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # python is this venv's
    env.update(more)
    return env


class FakeUpstreams:
    """The repository's fake model servers, served by a Go test (they are test-only Go code)."""

    def __init__(self, tmp: Path, script: dict[str, Any]) -> None:
        self.script = tmp / "script.json"
        self.script.write_text(json.dumps(script))
        self.stop = tmp / "stop"
        env = dict(os.environ, DRYFIRE_FAKE_UPSTREAMS=str(self.script), DRYFIRE_FAKE_UPSTREAMS_STOP=str(self.stop))
        self.proc = subprocess.Popen(["go", "test", "-count=1", "-run", "^TestServeFakeUpstreams$", "-v", "./examples/pytest/frameworks/"],
                                     cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        ready = Path(str(self.script) + ".ready")
        deadline = time.monotonic() + 300
        while not ready.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                out = self.proc.communicate(timeout=10)[0] if self.proc.poll() is not None else ""
                self.proc.kill()
                raise RuntimeError(f"the fake upstreams did not start:\n{out}")
            time.sleep(0.05)
        self.urls: dict[str, str] = json.loads(ready.read_text())

    def close(self) -> str:
        self.stop.write_text("")
        out = self.proc.communicate(timeout=60)[0]
        assert self.proc.returncode == 0, out
        return out


def _script() -> dict[str, Any]:
    return {
        f"Look up order A-991 ({case}).": [
            {"ToolCalls": [{"Name": "lookup_order", "Args": '{"order_id":"A-991"}'}]},
            {"Text": f"Order A-991 is a gold order ({case})."},
        ]
        for cases in CASES.values() for case, *_ in cases
    } | {"Save record-1 with the text hello.": [
        {"ToolCalls": [{"Name": "save_record", "Args": '{"id":"record-1","text":"hello"}'}]},
        {"Text": "Saved record-1."},
    ]}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory, binary: str) -> Iterator[tuple[Path, dict[str, str]]]:
    """A copy of examples/pytest/frameworks with its cassettes recorded against the fakes (then stopped)."""
    tmp = tmp_path_factory.mktemp("frameworks")
    work = tmp / "frameworks"
    shutil.copytree(FRAMEWORKS, work, ignore=shutil.ignore_patterns("*.go", "cassettes", "__pycache__"))
    fakes = FakeUpstreams(tmp, _script())
    reports = {}
    try:
        for suite, (upstream, base_var, path, key_var) in UPSTREAM.items():
            if suite == "adk" and not ADK:
                continue  # skipped below
            env = _suite_env(suite, **{base_var: fakes.urls[upstream] + path, key_var: KEY})
            r = subprocess.run([binary, "run", f"{suite}.dryfire.yaml", "--record", "all", "--json", "-"], cwd=work, env=env,
                               capture_output=True, text=True, timeout=600)
            reports[suite] = r.stdout
            assert r.returncode == 0, f"recording {suite}:\n{r.stderr}\n{r.stdout}"
    finally:
        log = fakes.close()
    assert re.search(r"requests: chat [1-9]\d*, responses [1-9]\d*, anthropic [1-9]\d*, gemini [1-9]\d*, ollama [1-9]\d*, bedrock [1-9]\d*, vertex [1-9]\d*", log), log
    yield work, reports


DURATIONS = re.compile(r'"duration_ms": [0-9.e+-]+')


def _replay(binary: str, work: Path, suite: str) -> str:
    r = subprocess.run([binary, "run", f"{suite}.dryfire.yaml", "--record", "none", "--json", "-"], cwd=work,
                       env=_suite_env(suite, CI="true"), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"replaying {suite}:\n{r.stderr}\n{r.stdout}"
    return DURATIONS.sub('"duration_ms": 0', r.stdout)


@pytest.mark.parametrize("suite", list(CASES))
def test_clients_and_frameworks_record_once_and_replay_identically(recorded: tuple[Path, dict[str, str]], binary: str, suite: str) -> None:
    if suite == "adk" and not ADK:
        pytest.skip("google-adk is installed apart: run scripts/ci.d/30-python.sh, which sets DRYFIRE_TEST_ADK")
    work, _ = recorded
    first, second = _replay(binary, work, suite), _replay(binary, work, suite)
    assert first == second, "two offline replays gave different reports"
    report = json.loads(first)
    by_name = {c["name"]: c for c in report["cases"]}
    for case, dist, api, stream in CASES[suite]:
        c = by_name[case]
        assert c["status"] == "passed", json.dumps(c, indent=1)
        if suite == "adk":  # ADK's default model, at the Gemini API's path
            calls = json.loads((work / "cassettes" / "adk" / f"{case.replace(' ', '-')}.json").read_text())["interactions"]
            method = "streamGenerateContent?alt=sse" if stream else "generateContent"
            assert [i["request"]["path"] for i in calls] == [f"/v1beta/models/{ADK_MODEL}:{method}"] * 2, calls
        assert c["turns"] == 2 and [t["tool"] for t in c["tool_calls"]] == ["lookup_order"]
        assert c["output"] == f"Order A-991 is a gold order ({case})."
        _row(dist, f"{api} via agent.command", "yes" if stream else "no",
             "recorded once, replayed offline twice: same report; tool over HTTP; checks pass")


def _serve_http(binary: str, suite: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([binary, "serve", str(suite), "--http", "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=_offline_env())
    assert proc.stdout is not None
    line = proc.stdout.readline()
    m = re.search(r"on (http://127\.0\.0\.1:\d+)", line)
    assert m, line
    return proc, m.group(1)


def test_the_mcp_client_over_stdio_and_streamable_http_against_dryfire_serve(binary: str) -> None:
    mcp = pytest.importorskip("mcp")
    suite = EXAMPLES / "quickstart" / "support.dryfire.yaml"

    async def use(client: Any) -> None:
        async with client as c:
            tools = await c.list_tools()
            assert [t.name for t in tools.tools][:2] == ["lookup_order", "issue_refund"]
            got = await c.call_tool("lookup_order", {"order_id": "A-991"})
            # A mock tool declares no output schema: its result is the JSON text, no structured content.
            assert not got.is_error and got.structured_content is None
            assert json.loads(got.content[0].text) == {"order_id": "A-991", "tier": "gold", "total": 120.5}
            bad = await c.call_tool("issue_refund", {"order_id": "A-991"})
            assert bad.is_error

    asyncio.run(use(mcp.Client(mcp.StdioServerParameters(command=binary, args=["serve", str(suite), "--stdio"], env=_offline_env()))))
    _row("mcp", "MCP over stdio (dryfire serve --stdio)", "-", "tools/list, tools/call: JSON results, error results")
    proc, url = _serve_http(binary, suite)
    try:
        asyncio.run(use(mcp.Client(url + "/mcp")))
    finally:
        proc.terminate()
        proc.wait(10)
    _row("mcp", "MCP over streamable HTTP (dryfire serve --http)", "-", "tools/list, tools/call: JSON results, error results")


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_the_mcp_client_reads_prompts_and_answers_the_servers_requests_under_agent_command(tmp_path: Path, binary: str, era: str) -> None:
    """tests/mcp_asks_agent.py on e2e/node/asks.dryfire.yaml (the suite the TypeScript clients answer in
    internal/runner's TestMCPAsksNode): it reads a resource, gets a prompt, answers an elicitation and a
    sampling request sent during tool calls; the report shows each, and the checks on them pass and fail."""
    pytest.importorskip("mcp")
    own = "command: [node, mcp-asks-agent.mjs]"
    suite = (REPO / "e2e" / "node" / "asks.dryfire.yaml").read_text()
    assert own in suite
    agent = Path(__file__).with_name("mcp_asks_agent.py")
    (tmp_path / "asks.dryfire.yaml").write_text(suite.replace(own, f"command: [{json.dumps(sys.executable)}, {json.dumps(str(agent))}, {era}]"))
    r = subprocess.run([binary, "run", "asks.dryfire.yaml", "--record", "none", "--json", "-"], cwd=tmp_path, env=_offline_env(),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, f"{r.stderr}\n{r.stdout}"  # the second case fails, as it should
    ok, bad = json.loads(r.stdout)["cases"]
    assert ok["status"] == "passed", json.dumps(ok, indent=1)
    assert ok["output"].startswith(f"era: {'2026-07-28' if era == 'modern' else '2025-11-25'}\n"), ok["output"]
    assert [(u["method"], u.get("uri") or u.get("name")) for u in ok["mcp"]] == [("resources/read", "docs://refund-policy"), ("prompts/get", "refund_request")]
    said = "python says: Summarise: the printer is on fire."
    assert [(c["tool"], c["asked"]["method"], c["asked"]["answer"], c["result"]) for c in ok["tool_calls"]] == [
        ("book_flight", "elicitation/create", {"action": "accept", "content": {"confirm": True, "seat": "window"}}, "Booked: seat window."),
        ("summarise", "sampling/createMessage", {"content": {"text": said, "type": "text"}, "model": "python-model", "role": "assistant"},
         f"Summary (python-model): {said}"),
    ]
    assert [(c["passed"], c["message"]) for c in bad["checks"]][:3] == [
        (False, "expected an elicitation during a call of book_flight answered accept; the client answered: decline"),
        (False, f'expected a sampling request during a call of summarise answered by model another-model; the client answered: python-model: "{said}"'),
        (False, "expected no read of resource docs://refund-policy; it was read 1 time"),
    ]
    assert bad["checks"][3]["passed"], bad
    how = "2026-07-28: input_required, retried" if era == "modern" else "2025-11-25: requests in the call's stream"
    _row("mcp", f"MCP over streamable HTTP via agent.command ({how})", "-",
         "resources/read, prompts/get, elicitation and sampling during tool calls; read, prompted, elicited, sampled checks pass and fail")


def test_pydantic_ai_in_process_with_mock_tool_records_and_replays_a_drill(tmp_path: Path, binary: str) -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    project = tmp_path / "project"
    shutil.copytree(EXAMPLES / "pytest", project, ignore=shutil.ignore_patterns("frameworks", "failing", "__pycache__", "cassettes"))

    def agent(d: dryfire_sdk.DrillContext) -> str:
        save = mock_tool(d.binding, operation="record-store/records.save")

        def save_record(id: str, text: str) -> dict:
            """Save a record."""
            return save(id=id, text=text)

        model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=d.binding.env["OPENAI_BASE_URL"], api_key=d.binding.env["OPENAI_API_KEY"]))
        return str(Agent(model, tools=[save_record], retries=0).run_sync(d.task.instruction).output)

    fakes = FakeUpstreams(tmp_path, _script())
    try:
        env = _offline_env(OPENAI_BASE_URL=fakes.urls["openai_chat"] + "/v1", OPENAI_API_KEY=KEY)
        with dryfire_sdk.Engine.start(cwd=project, env=env, record="all", binary=binary) as eng:
            first = dryfire_sdk.run_drills(drill="save-record", agent=agent, cwd=project, engine=eng)
    finally:
        fakes.close()
    assert first.verdict == "passed", first.render()
    assert (project / "cassettes" / "records" / "save-record.json").exists()
    with dryfire_sdk.Engine.start(cwd=project, env=_offline_env(CI="true"), binary=binary) as eng:
        again = dryfire_sdk.run_drills(drill="save-record", agent=agent, cwd=project, engine=eng, record="none")
        reproduced = dryfire_sdk.run_drills(agent=agent, reproduce=first, cwd=project, engine=eng)
    assert again.verdict == "passed", again.render()
    assert again.evidence == first.evidence and again.output == first.output == "Saved record-1."
    assert reproduced.reproduction == {"identical": True, "differences": []}
    _row("pydantic-ai-slim", "in-process, function tool = mock_tool, drill model endpoint", "no",
         "drill recorded by the engine, replayed offline: same evidence; reproduction identical")


API_OF = {"Chat Completions": "openai-chat", "Responses": "openai-responses", "Messages": "anthropic", "Gemini generateContent": "gemini", "Ollama chat": "ollama", "Bedrock Converse": "bedrock",
          "Vertex AI generateContent": "gemini", "Vertex AI rawPredict": "anthropic"}


@pytest.mark.parametrize("suite", ["scripted", "adk-scripted"])
def test_clients_and_frameworks_on_the_script_model_with_no_key_and_no_cassette(tmp_path: Path, binary: str, suite: str) -> None:
    """The same clients and frameworks, each case answered by frameworks/scripted.dryfire.yaml's script (ADK's by adk-scripted's)."""
    if suite.startswith("adk") and not ADK:
        pytest.skip("google-adk is installed apart: run scripts/ci.d/30-python.sh, which sets DRYFIRE_TEST_ADK")
    work = tmp_path / "frameworks"
    shutil.copytree(FRAMEWORKS, work, ignore=shutil.ignore_patterns("*.go", "cassettes", "__pycache__"))
    r = subprocess.run([binary, "run", f"{suite}.dryfire.yaml", "--concurrency", "2", "--json", "-"], cwd=work, env=_suite_env(suite, CI="true"),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{r.stderr}\n{r.stdout}"
    by_name = {c["name"]: c for c in json.loads(r.stdout)["cases"]}
    ran = [c for s, cases in CASES.items() if (s == "adk") == suite.startswith("adk") for c in cases]
    assert sorted(by_name) == sorted(case for case, *_ in ran), f"{suite}.dryfire.yaml's cases are not CASES'"
    for case, dist, api, stream in ran:
        c = by_name[case]
        assert c["status"] == "passed" and c["output"] == "Order A-991 is a gold order.", json.dumps(c, indent=1)
        assert [(s["turn"], s["api"], s["streamed"]) for s in c["script"]] == [(1, API_OF[api.split(" (")[0]], stream), (2, API_OF[api.split(" (")[0]], stream)]
        _row(dist, f"{api} via agent.command, script model (one suite-level script)", "yes" if stream else "no",
             "no key, no cassette: the script's guarded turns answer its calls; checks pass")
    assert not (work / "cassettes").exists()


# The script model on the wire: the agents of examples/scripted-agents, with no key and no
# cassette. LangGraph's MCP adapters need mcp<2 while the rest of this venv has mcp 2: 30-python.sh
# installs them apart (sdk/python/requirements-mcp1.txt, with --target) and names that folder in
# DRYFIRE_TEST_MCP1, put first on the LangGraph agent's PYTHONPATH.
SCRIPTED = EXAMPLES / "scripted-agents"
MCP1 = os.environ.get("DRYFIRE_TEST_MCP1", "")
# (suite, agent program, package, API, streamed)
SCRIPTED_AGENTS = [
    ("openai", "openai_agent.py", "openai", "Chat Completions", False),
    ("anthropic", "anthropic_agent.py", "anthropic", "Messages", True),
    ("langgraph", "langgraph_agent.py", "langchain-mcp-adapters", "Chat Completions (langgraph create_react_agent, ChatOpenAI; tools over MCP)", False),
]
API_NAMES = {"Chat Completions": "openai-chat", "Messages": "anthropic"}
REFUNDED = "Order A-991 is refunded in full (refund R-1)."
NOT_OFFERED = 'script turn 2 calls tool "open_ticket", which model request 2 does not offer'


def _agent_env(program: str, **more: str) -> dict[str, str]:
    env = _offline_env(**more)
    if program == "langgraph_agent.py":
        if not MCP1:
            pytest.skip("langchain-mcp-adapters needs mcp<2: run scripts/ci.d/30-python.sh, which sets DRYFIRE_TEST_MCP1")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (MCP1, env.get("PYTHONPATH", "")) if p)
    return env


@pytest.mark.parametrize(("suite", "program", "dist", "api", "stream"), SCRIPTED_AGENTS, ids=[a[0] for a in SCRIPTED_AGENTS])
def test_existing_agents_run_offline_on_the_script_model(tmp_path: Path, binary: str, suite: str, program: str, dist: str, api: str,
                                                         stream: bool) -> None:
    work = tmp_path / "scripted-agents"
    shutil.copytree(SCRIPTED, work, ignore=shutil.ignore_patterns("openai-agents-js", "__pycache__", "cassettes"))
    r = subprocess.run([binary, "run", f"{suite}.dryfire.yaml", "--json", "-"], cwd=work, env=_agent_env(program),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, f"one case fails, the other passes:\n{r.stderr}\n{r.stdout}"
    ok, bad = json.loads(r.stdout)["cases"]
    assert ok["status"] == "passed", json.dumps(ok, indent=1)
    assert ok["output"] == REFUNDED
    assert [(c["tool"], c["is_error"]) for c in ok["tool_calls"]] == [("lookup_order", False), ("issue_refund", True), ("issue_refund", False)]
    wire = API_NAMES[api.split(" (")[0]]
    assert [(s["request"], s.get("turn"), s["api"], s["streamed"]) for s in ok["script"]] == [(i, i, wire, stream) for i in (1, 2, 3, 4)]
    assert bad["status"] != "passed" and NOT_OFFERED in bad["reason"], json.dumps(bad, indent=1)
    assert [c["tool"] for c in bad["tool_calls"]] == ["lookup_order"]
    assert not (work / "cassettes").exists(), "a scripted case writes no cassette"
    _row(dist, f"{api} via agent.command, script model", "yes" if stream else "no",
         "no key, no cassette: two tools (one a sequence: error, then value); a scripted call of a tool it does not offer fails with the reason")


def _in_process(module: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """An agent of examples/scripted-agents imported in this process, its environment the drill's."""
    monkeypatch.syspath_prepend(str(SCRIPTED))
    mod = importlib.import_module(module)

    def agent(d: dryfire_sdk.DrillContext) -> str:
        for k, v in d.binding.env.items():
            monkeypatch.setenv(k, v)
        return mod.run(d.task.instruction)

    return agent


def _as_program(program: str) -> Any:
    """An agent of examples/scripted-agents run as a program, with the drill's environment."""

    def agent(d: dryfire_sdk.DrillContext) -> str:
        r = subprocess.run([sys.executable, program], cwd=SCRIPTED, env=_agent_env(program, **d.binding.env), input=d.task.instruction,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return r.stdout.removesuffix("\n")

    return agent


@pytest.mark.parametrize(("suite", "program", "dist", "api", "stream"), SCRIPTED_AGENTS, ids=[a[0] for a in SCRIPTED_AGENTS])
def test_existing_agents_in_run_drills_on_the_script_model_with_a_world(monkeypatch: pytest.MonkeyPatch, binary: str, suite: str, program: str,
                                                                        dist: str, api: str, stream: bool) -> None:
    # openai and anthropic in this process; LangGraph's MCP adapters (mcp<2) as a program
    agent = _as_program(program) if program == "langgraph_agent.py" else _in_process(program.removesuffix(".py"), monkeypatch)
    if program == "langgraph_agent.py":
        _agent_env(program)  # skips without the mcp<2 folder
    for k in [k for k in os.environ if k.startswith(("OPENAI_", "ANTHROPIC_"))]:
        monkeypatch.delenv(k)
    with dryfire_sdk.Engine.start(cwd=EXAMPLES / "world", env=_offline_env(), binary=binary) as eng:
        result = dryfire_sdk.run_drills(drill="refund through a busy refund service", suite="scripted-agents.dryfire.yaml", agent=agent,
                                    cwd=EXAMPLES / "world", engine=eng)
    assert result.verdict == "passed", result.render()
    assert result.output == REFUNDED
    assert [(e["operation"], e["is_error"]) for e in result.evidence] == [
        ("orders/orders.get", False), ("refunds/refunds.create", True), ("refunds/refunds.create", False)]
    how = "as a program" if program == "langgraph_agent.py" else "in-process"
    _row(dist, f"{api} in run_drills ({how}), script model, world tools", "yes" if stream else "no",
         "no key, no cassette: the support-desk world's tools, a refund that fails once; verdict passed")


def test_zz_the_compatibility_table_is_what_ran() -> None:
    header = ("<!-- generated by sdk/python/tests/test_ecosystem.py from what it ran; "
              "DRYFIRE_UPDATE_COMPAT=1 rewrites it -->\n# Python clients and frameworks checked against dryfire\n\n"
              "Each row is a test of `sdk/python/tests/test_ecosystem.py`, run in CI offline at the pinned version\n"
              "(`sdk/python/requirements-test.txt`). No offline setting is passed by hand: dryfire gives every agent\n"
              "program its own (tracing and telemetry off: docs/agents.md, \"Offline settings\"); pydantic-ai sends\n"
              "nothing unless logfire is configured. SDK clients are made with `max_retries=0`.\n\n"
              "| client / framework | version | transport | stream | what works |\n|---|---|---|---|---|\n")
    table = header + "".join(f"| {d} | {v} | {t} | {s} | {w} |\n" for d, v, t, s, w in sorted(set(ROWS)))
    if os.environ.get("DRYFIRE_UPDATE_COMPAT"):
        COMPAT.write_text(table)
    assert len(set(ROWS)) >= 12, ROWS
    assert COMPAT.read_text() == table, "sdk/python/compatibility.md differs from what ran: DRYFIRE_UPDATE_COMPAT=1 rewrites it"
