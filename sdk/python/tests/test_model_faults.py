"""The official openai and anthropic Python clients, with their default retries, against declared
model faults (model_faults) on dryfire's model endpoint: a 429 with Retry-After and a connection
dropped before the answer of a stream, each retried by the client itself; and a stream cut after
its first event, which no client retries by itself once it is under way, retried by the agent's
own code around it. Recorded once against
the repository's fake model servers with the faults declared, then replayed offline under CI
(network isolated where the machine allows it): every case passes, the report lists each fault
with retried: true, and the cassette holds one interaction per turn.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from .test_ecosystem import KEY, FakeUpstreams, _offline_env

AGENT = '''
import os, sys
import anthropic, openai

def again(turn):
    """A streamed turn, tried again once when its stream breaks off (the agent's own retry)."""
    try:
        return turn()
    except Exception as e:
        print("stream broke off:", type(e).__name__, file=sys.stderr)
        return turn()

question = sys.stdin.read()
texts = []
if question.startswith("anthropic"):
    client = anthropic.Anthropic()  # ANTHROPIC_BASE_URL and the key from dryfire; default retries
    messages = [{"role": "user", "content": question}]
    m = client.messages.create(model="claude-test", max_tokens=100, messages=messages)
    texts.append(m.content[0].text)
    messages += [{"role": "assistant", "content": texts[-1]}, {"role": "user", "content": "go on"}]
    def turn():
        with client.messages.stream(model="claude-test", max_tokens=100, messages=messages) as s:
            return s.get_final_message().content[0].text
    texts.append(again(turn))
else:
    client = openai.OpenAI()  # OPENAI_BASE_URL and the key from dryfire; default retries
    messages = [{"role": "user", "content": question}]
    c = client.chat.completions.create(model="gpt-test", messages=messages)
    texts.append(c.choices[0].message.content)
    messages += [{"role": "assistant", "content": texts[-1]}, {"role": "user", "content": "go on"}]
    def turn():
        stream = client.chat.completions.create(model="gpt-test", messages=messages, stream=True)
        return "".join(ch.choices[0].delta.content or "" for ch in stream if ch.choices)
    texts.append(again(turn))
print("|".join(texts))
'''

SUITE = '''version: 1
agent:
  command: [python, agent.py]
cases:
  - name: openai
    input: openai faults
    model_faults: &faults
      - {request: 1, status: 429, retry_after: 0.1}
      - {request: 3, drop: true}
    expect:
      - output: {equals: "one|two"}
  - name: anthropic
    input: anthropic faults
    model_faults: *faults
    expect:
      - output: {equals: "one|two"}
  - name: openai cut
    input: openai cut
    model_faults: &cut
      - {request: 2, cut_after: 1}
    expect:
      - output: {equals: "one|two"}
  - name: anthropic cut
    input: anthropic cut
    model_faults: *cut
    expect:
      - output: {equals: "one|two"}
'''


def test_the_python_clients_retry_declared_faults(tmp_path: Path, binary: str) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "faults.dryfire.yaml").write_text(SUITE)
    turns = [{"Text": "one"}, {"Text": "two"}]
    fakes = FakeUpstreams(tmp_path, {"openai faults": turns, "anthropic faults": turns, "openai cut": turns, "anthropic cut": turns})
    try:
        env = _offline_env(OPENAI_BASE_URL=fakes.urls["openai_chat"] + "/v1", ANTHROPIC_BASE_URL=fakes.urls["anthropic"],
                           OPENAI_API_KEY=KEY, ANTHROPIC_API_KEY=KEY)
        r = subprocess.run([binary, "run", "faults.dryfire.yaml", "--record", "all", "--json", "-"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"recording:\n{r.stderr}\n{r.stdout}"
    finally:
        fakes.close()
    for name in ("openai", "anthropic", "openai-cut", "anthropic-cut"):
        tape = json.loads((tmp_path / "cassettes" / "faults" / f"{name}.json").read_text())
        assert len(tape["interactions"]) == 2, tape
    r = subprocess.run([binary, "run", "faults.dryfire.yaml", "--record", "none", "--json", "-"], cwd=tmp_path,
                       env=_offline_env(CI="true"), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"replaying:\n{r.stderr}\n{r.stdout}"
    want = {
        "faults": [(1, "answered 429 with Retry-After: 0.1 s", True), (3, "connection dropped before an answer", True)],
        "cut": [(2, "answer cut after 1 stream event, connection closed", True)],
    }
    cases = json.loads(r.stdout)["cases"]
    assert sorted(c["name"] for c in cases) == ["anthropic", "anthropic cut", "openai", "openai cut"], cases
    for case in cases:
        assert case["status"] == "passed" and case["turns"] == 2, json.dumps(case, indent=1)
        got = [(f["request"], f["fault"], f["retried"]) for f in case["model_faults"]]
        assert got == want["cut" if case["name"].endswith("cut") else "faults"], case["model_faults"]
