"""A drill with a world under pytest (run_drills) for the Claude Agent SDK agent of claude_agent.py:
the agent in this process, Claude Code under it reaching the drill's model endpoint and the
world's tools over MCP, the script answering, the world judging."""

from __future__ import annotations

import os
from pathlib import Path

from claude_agent import run_agent
from dryfire_sdk import DrillContext, run_drills

HERE = Path(__file__).resolve().parent
SUITE = HERE.parent / "sdk-drills.dryfire.yaml"
ROOT = HERE.parents[2]  # the repository: the world is examples/world's

# Claude Code's calls home off, as agent.cli claude-code sets them.
OFFLINE = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "ENABLE_TOOL_SEARCH": "false",
}


def test_the_claude_agent_sdk_refunds_through_a_busy_service(tmp_path: Path) -> None:
    def agent(d: DrillContext) -> str:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
        env.update(OFFLINE)
        env.update(d.binding.env)
        env["HOME"] = str(tmp_path)  # a home of its own
        return run_agent(d.task.instruction, cwd=str(tmp_path), env=env)

    result = run_drills(drill="a coding agent refunds through a busy refund service", suite=SUITE, agent=agent, cwd=ROOT)
    assert result.failures == [], result.failures
    assert result.verdict == "passed"
    assert [(e["operation"], e["is_error"]) for e in result.evidence] == [
        ("orders/orders.get", False), ("refunds/refunds.create", True), ("refunds/refunds.create", False),
    ]
    assert result.output == "Order A-991 is refunded in full (refund R-1)."
