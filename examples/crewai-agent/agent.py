"""A crewai agent whose tools come from an MCP server (Agent(mcps=[MCPServerHTTP(url=...)]): crewai names
each tool after the server's URL), its model on the OpenAI API (OPENAI_BASE_URL): the task on standard
input, the answer on standard output."""

import os
import sys

from crewai import LLM, Agent, Crew, Task
from crewai.mcp import MCPServerHTTP

llm = LLM(model="openai/gpt-4.1-mini", base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"])
agent = Agent(role="Support agent", goal="Answer questions about orders", backstory="You look orders up before you answer.",
              llm=llm, mcps=[MCPServerHTTP(url=os.environ["DRYFIRE_MCP_URL"])], verbose=False)
task = Task(description=sys.stdin.read().strip(), expected_output="A short answer", agent=agent)
print(Crew(agents=[agent], tasks=[task], verbose=False).kickoff().raw)
