"""A support agent on the anthropic SDK's Messages API, streamed: the task on standard input, the
answer on standard output. The client reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY."""

from __future__ import annotations

import sys

import anthropic

from support_tools import SYSTEM, TOOLS, call_tool

MODEL = "claude-sonnet-4-6"


def run(task: str, max_turns: int = 8) -> str:
    client = anthropic.Anthropic(max_retries=0)
    tools = [{"name": n, "description": d, "input_schema": s} for n, d, s in TOOLS]
    messages: list = [{"role": "user", "content": task}]
    for _ in range(max_turns):
        with client.messages.stream(model=MODEL, max_tokens=1024, system=SYSTEM, messages=messages, tools=tools) as stream:
            for _text in stream.text_stream:
                pass
            msg = stream.get_final_message()
        if msg.stop_reason != "tool_use":
            return "".join(b.text for b in msg.content if b.type == "text")
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in msg.content]})
        results = []
        for b in msg.content:
            if b.type == "tool_use":
                content, is_error = call_tool(b.name, b.input)
                results.append({"type": "tool_result", "tool_use_id": b.id, "content": content, "is_error": is_error})
        messages.append({"role": "user", "content": results})
    raise RuntimeError(f"no answer after {max_turns} model calls")


if __name__ == "__main__":
    print(run(sys.stdin.read().strip()))
