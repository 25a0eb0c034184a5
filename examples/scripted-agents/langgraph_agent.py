"""A support agent on LangGraph (create_react_agent, langchain-openai's ChatOpenAI) whose tools come
from an MCP server through langchain-mcp-adapters: the task on standard input, the answer on
standard output. ChatOpenAI reads OPENAI_BASE_URL and OPENAI_API_KEY; the MCP server is
DRYFIRE_MCP_URL (streamable HTTP). One MCP session serves the whole run, so a tool's answers
follow each other as they would on one connection."""

from __future__ import annotations

import asyncio
import os
import sys

from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent

from support_tools import SYSTEM

MODEL = "gpt-4.1-mini"
ALLOWED = {"lookup_order", "issue_refund"}  # the tools this agent may use, of all the server offers


async def run(task: str) -> str:
    client = MultiServerMCPClient({"support": {"transport": "streamable_http", "url": os.environ["DRYFIRE_MCP_URL"]}})
    async with client.session("support") as session:
        tools = [t for t in await load_mcp_tools(session) if t.name in ALLOWED]
        agent = create_react_agent(ChatOpenAI(model=MODEL, max_retries=0), tools, prompt=SYSTEM)
        out = await agent.ainvoke({"messages": [("user", task)]}, {"recursion_limit": 20})
    return str(out["messages"][-1].content)


if __name__ == "__main__":
    print(asyncio.run(run(sys.stdin.read().strip())))
