"""A coding agent on the Claude Agent SDK (Python): the task on standard input, the answer on
standard output. The SDK runs Claude Code, which reads ANTHROPIC_BASE_URL (dryfire's endpoint
under agent.command); its tools are Claude Code's own (Read, Edit, Bash) and those of the MCP
server at DRYFIRE_MCP_URL. run_agent takes the working directory and the environment, so that a
test can run it in process against a drill's binding (run_drills)."""

from __future__ import annotations

import asyncio
import os
import sys

from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query


async def _run(task: str, cwd: str, env: dict[str, str]) -> str:
    url = env.get("DRYFIRE_MCP_URL")
    options = ClaudeAgentOptions(
        cwd=cwd,
        env=dict(env),
        mcp_servers={"dryfire": {"type": "http", "url": url}} if url else {},
        allowed_tools=["Read", "Edit", "Bash", "mcp__dryfire"],
        permission_mode="acceptEdits",
        setting_sources=[],
        max_turns=12,
    )
    answer = ""
    async for message in query(prompt=task, options=options):
        if isinstance(message, ResultMessage):
            if message.subtype != "success":
                raise RuntimeError(f"the agent ended with {message.subtype}")
            answer = message.result or ""
    return answer


def run_agent(task: str, cwd: str | None = None, env: dict[str, str] | None = None) -> str:
    return asyncio.run(_run(task, cwd or os.getcwd(), dict(os.environ) if env is None else env))


if __name__ == "__main__":
    print(run_agent(sys.stdin.read().strip()))
