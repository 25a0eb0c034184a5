"""A LangGraph agent (create_react_agent, ChatOpenAI) with a tool of its own (convert, a Python
function) and dryfire's tools over MCP on stdio (langchain-mcp-adapters, DRYFIRE_MCP_ARGV: the
command that bridges to the case's tools). LangGraph runs the calls of one turn concurrently."""

import asyncio
import json
import os
import sys

from langchain_core.tools import tool
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent


@tool
def convert(amount: float, currency: str) -> str:
    """Convert an amount in euros to another currency."""
    return json.dumps({"amount": round(amount * 1.1, 2), "currency": currency})


async def run(task: str) -> str:
    argv = json.loads(os.environ["DRYFIRE_MCP_ARGV"])
    client = MultiServerMCPClient({"dryfire": {"transport": "stdio", "command": argv[0], "args": argv[1:]}})
    tools = await client.get_tools() + [convert]
    agent = create_react_agent(ChatOpenAI(model="gpt-4.1-mini", max_retries=0), tools)
    out = await agent.ainvoke({"messages": [("user", task)]}, {"recursion_limit": 20})
    return str(out["messages"][-1].content)


if __name__ == "__main__":
    print(asyncio.run(run(sys.stdin.read().strip())))
