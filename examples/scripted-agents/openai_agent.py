"""A support agent on the openai SDK's Chat Completions: the task on standard input, the answer on
standard output. The client reads OPENAI_BASE_URL and OPENAI_API_KEY, as any openai program does."""

from __future__ import annotations

import json
import sys

import openai

from support_tools import SYSTEM, TOOLS, call_tool

MODEL = "gpt-4.1-mini"


def run(task: str, max_turns: int = 8) -> str:
    client = openai.OpenAI(max_retries=0)
    tools = [{"type": "function", "function": {"name": n, "description": d, "parameters": s}} for n, d, s in TOOLS]
    messages: list = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}]
    for _ in range(max_turns):
        msg = client.chat.completions.create(model=MODEL, messages=messages, tools=tools).choices[0].message
        if not msg.tool_calls:
            return msg.content or ""
        messages.append({"role": "assistant", "content": msg.content, "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}} for c in msg.tool_calls]})
        for c in msg.tool_calls:
            content, _ = call_tool(c.function.name, json.loads(c.function.arguments or "{}"))
            messages.append({"role": "tool", "tool_call_id": c.id, "content": content})
    raise RuntimeError(f"no answer after {max_turns} model calls")


if __name__ == "__main__":
    print(run(sys.stdin.read().strip()))
