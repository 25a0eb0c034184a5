"""One support agent, written against each Python client and framework that the ecosystem tests
run under dryfire unchanged. DRYFIRE_CASE picks which; the model is whatever OPENAI_BASE_URL /
ANTHROPIC_BASE_URL / GOOGLE_GEMINI_BASE_URL / AZURE_OPENAI_ENDPOINT / OLLAMA_HOST /
AWS_ENDPOINT_URL_BEDROCK_RUNTIME point at (dryfire's model endpoint), the tool is dryfire's, over HTTP
(DRYFIRE_TOOLS_URL). The task is on standard input; the answer goes to standard output."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import urllib.request
from typing import Any

# No offline settings of its own: dryfire gives every agent program those that turn the
# frameworks' tracing and telemetry off (docs/agents.md, "Offline settings").

MODEL = "gpt-4o-mini"
CLAUDE = "claude-sonnet-4-5"
GEMINI = "gemini-2.5-flash"
OLLAMA = "qwen3:8b"
BEDROCK = "anthropic.claude-sonnet-4-5-20250929-v1:0"
SYSTEM = "You are a support agent. Use lookup_order to find an order's tier."
TOOL_SCHEMA = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}


def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    req = urllib.request.Request(os.environ["DRYFIRE_TOOLS_URL"] + "/lookup_order", data=json.dumps({"order_id": order_id}).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.load(resp)["content"]


def openai_chat(task: str, stream: bool, client: Any = None) -> str:
    import openai

    client = client or openai.OpenAI(max_retries=0)
    tools = [{"type": "function", "function": {"name": "lookup_order", "description": "Look up an order by its id.", "parameters": TOOL_SCHEMA}}]
    messages: list = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}]
    for _ in range(4):
        if stream:
            text, calls = "", {}
            for chunk in client.chat.completions.create(model=MODEL, messages=messages, tools=tools, stream=True,
                                                       stream_options={"include_usage": True}):
                for ch in chunk.choices:
                    text += ch.delta.content or ""
                    for tc in ch.delta.tool_calls or []:
                        c = calls.setdefault(tc.index, {"id": "", "name": "", "args": ""})
                        c["id"] += tc.id or ""
                        c["name"] += (tc.function.name or "") if tc.function else ""
                        c["args"] += (tc.function.arguments or "") if tc.function else ""
            calls = [calls[i] for i in sorted(calls)]
        else:
            msg = client.chat.completions.create(model=MODEL, messages=messages, tools=tools).choices[0].message
            text = msg.content or ""
            calls = [{"id": c.id, "name": c.function.name, "args": c.function.arguments} for c in msg.tool_calls or []]
        if not calls:
            return text
        messages.append({"role": "assistant", "content": text or None, "tool_calls": [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["args"]}} for c in calls]})
        for c in calls:
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": lookup_order(**json.loads(c["args"]))})
    raise RuntimeError("too many turns")


def openai_responses(task: str, stream: bool) -> str:
    import openai

    client = openai.OpenAI(max_retries=0)
    tools = [{"type": "function", "name": "lookup_order", "description": "Look up an order by its id.", "strict": True,
              "parameters": dict(TOOL_SCHEMA, additionalProperties=False)}]
    items: list = [{"role": "user", "content": task}]
    for _ in range(4):
        if stream:
            with client.responses.stream(model=MODEL, instructions=SYSTEM, input=items, tools=tools) as s:
                for _event in s:
                    pass
                resp = s.get_final_response()
        else:
            resp = client.responses.create(model=MODEL, instructions=SYSTEM, input=items, tools=tools)
        calls = [o for o in resp.output if o.type == "function_call"]
        if not calls:
            return resp.output_text
        for o in resp.output:
            items.append(o.model_dump(exclude_none=True))
        for c in calls:
            items.append({"type": "function_call_output", "call_id": c.call_id, "output": lookup_order(**json.loads(c.arguments))})
    raise RuntimeError("too many turns")


def azure_openai(task: str, stream: bool) -> str:
    import openai

    # AZURE_OPENAI_ENDPOINT and AZURE_OPENAI_API_KEY from the environment; the deployment is MODEL.
    client = openai.AzureOpenAI(api_version="2024-10-21", max_retries=0)
    return openai_chat(task, stream, client)


def anthropic_messages(task: str, stream: bool, client: Any = None) -> str:
    import anthropic

    client = client or anthropic.Anthropic(max_retries=0)
    tools = [{"name": "lookup_order", "description": "Look up an order by its id.", "input_schema": TOOL_SCHEMA}]
    messages: list = [{"role": "user", "content": task}]
    for _ in range(4):
        if stream:
            with client.messages.stream(model=CLAUDE, max_tokens=1024, system=SYSTEM, messages=messages, tools=tools) as s:
                msg = s.get_final_message()
        else:
            msg = client.messages.create(model=CLAUDE, max_tokens=1024, system=SYSTEM, messages=messages, tools=tools)
        uses = [b for b in msg.content if b.type == "tool_use"]
        if not uses:
            return "".join(b.text for b in msg.content if b.type == "text")
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in msg.content]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": u.id, "content": lookup_order(**u.input)} for u in uses]})
    raise RuntimeError("too many turns")


def google_genai(task: str, stream: bool, client: Any = None) -> str:
    from google import genai
    from google.genai import types

    client = client or genai.Client()  # GEMINI_API_KEY / GOOGLE_API_KEY and GOOGLE_GEMINI_BASE_URL from the environment
    decl = types.FunctionDeclaration(name="lookup_order", description="Look up an order by its id.", parameters_json_schema=TOOL_SCHEMA)
    config = types.GenerateContentConfig(system_instruction=SYSTEM, tools=[types.Tool(function_declarations=[decl])],
                                         automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    contents: list = [types.Content(role="user", parts=[types.Part.from_text(text=task)])]
    for _ in range(4):
        if stream:
            parts = [p for chunk in client.models.generate_content_stream(model=GEMINI, contents=contents, config=config)
                     for c in chunk.candidates or [] if c.content for p in c.content.parts or []]
        else:
            resp = client.models.generate_content(model=GEMINI, contents=contents, config=config)
            parts = resp.candidates[0].content.parts or []
        calls = [p.function_call for p in parts if p.function_call]
        if not calls:
            return "".join(p.text or "" for p in parts)
        contents.append(types.Content(role="model", parts=parts))
        contents.append(types.Content(role="user", parts=[
            types.Part.from_function_response(name=c.name, response={"result": lookup_order(**(c.args or {}))}) for c in calls]))
    raise RuntimeError("too many turns")


def ollama_chat(task: str, stream: bool) -> str:
    import ollama

    client = ollama.Client()  # OLLAMA_HOST from the environment
    tools = [{"type": "function", "function": {"name": "lookup_order", "description": "Look up an order by its id.", "parameters": TOOL_SCHEMA}}]
    messages: list = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}]
    for _ in range(4):
        if stream:
            content, calls = "", []
            for chunk in client.chat(model=OLLAMA, messages=messages, tools=tools, stream=True):
                content += chunk.message.content or ""
                calls += chunk.message.tool_calls or []
        else:
            msg = client.chat(model=OLLAMA, messages=messages, tools=tools).message
            content, calls = msg.content or "", msg.tool_calls or []
        if not calls:
            return content
        messages.append({"role": "assistant", "content": content, "tool_calls": [c.model_dump() for c in calls]})
        messages += [{"role": "tool", "tool_name": c.function.name, "content": lookup_order(**c.function.arguments)} for c in calls]
    raise RuntimeError("too many turns")


def bedrock_converse(task: str, stream: bool) -> str:
    import boto3
    from botocore.config import Config

    # AWS_ENDPOINT_URL_BEDROCK_RUNTIME, AWS_REGION and the credentials from the environment.
    client = boto3.client("bedrock-runtime", config=Config(retries={"max_attempts": 1}))
    tool_config = {"tools": [{"toolSpec": {"name": "lookup_order", "description": "Look up an order by its id.", "inputSchema": {"json": TOOL_SCHEMA}}}]}
    messages: list = [{"role": "user", "content": [{"text": task}]}]
    for _ in range(4):
        args = {"modelId": BEDROCK, "system": [{"text": SYSTEM}], "messages": messages, "toolConfig": tool_config}
        if stream:
            content: list = []
            inputs: dict = {}
            for ev in client.converse_stream(**args)["stream"]:
                if "contentBlockStart" in ev:
                    start = ev["contentBlockStart"]
                    content.append({"toolUse": dict(start["start"]["toolUse"])})
                if "contentBlockDelta" in ev:
                    i, delta = ev["contentBlockDelta"]["contentBlockIndex"], ev["contentBlockDelta"]["delta"]
                    while len(content) <= i:
                        content.append({"text": ""})
                    if "text" in delta:
                        content[i]["text"] += delta["text"]
                    if "toolUse" in delta:
                        inputs[i] = inputs.get(i, "") + delta["toolUse"]["input"]
            for i, text in inputs.items():
                content[i]["toolUse"]["input"] = json.loads(text)
        else:
            content = client.converse(**args)["output"]["message"]["content"]
        uses = [b["toolUse"] for b in content if "toolUse" in b]
        if not uses:
            return "".join(b.get("text", "") for b in content)
        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": [
            {"toolResult": {"toolUseId": u["toolUseId"], "content": [{"text": lookup_order(**u["input"])}]}} for u in uses]})
    raise RuntimeError("too many turns")


def vertex_gemini(task: str, stream: bool) -> str:
    from google import genai

    # On Vertex AI: GOOGLE_VERTEX_BASE_URL and Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS)
    # from the environment; project and location passed, as google-genai takes a base URL without them for an
    # API gateway's, whose requests carry no model.
    return google_genai(task, stream, genai.Client(
        vertexai=True, project=os.environ["GOOGLE_CLOUD_PROJECT"], location=os.environ["GOOGLE_CLOUD_LOCATION"]))


def anthropic_vertex(task: str, stream: bool) -> str:
    import anthropic

    # ANTHROPIC_VERTEX_BASE_URL, CLOUD_ML_REGION, ANTHROPIC_VERTEX_PROJECT_ID and Application Default Credentials
    # from the environment.
    return anthropic_messages(task, stream, anthropic.AnthropicVertex(max_retries=0))


def google_adk(task: str, stream: bool) -> str:
    from google.adk.agents import Agent
    from google.adk.agents.run_config import RunConfig, StreamingMode
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    # No model named: ADK's default, a Gemini model, through google-genai (GEMINI_API_KEY /
    # GOOGLE_API_KEY and GOOGLE_GEMINI_BASE_URL from the environment).
    agent = Agent(name="support", instruction=SYSTEM, tools=[lookup_order])
    runner = InMemoryRunner(agent=agent, app_name="support")

    async def run() -> str:
        session = await runner.session_service.create_session(app_name="support", user_id="user")
        config = RunConfig(streaming_mode=StreamingMode.SSE if stream else StreamingMode.NONE)
        text = ""
        async for event in runner.run_async(user_id="user", session_id=session.id, run_config=config,
                                            new_message=types.Content(role="user", parts=[types.Part(text=task)])):
            if event.is_final_response() and event.content and event.content.parts:
                text = "".join(p.text or "" for p in event.content.parts)
        return text

    return asyncio.run(run())


def openai_agents(task: str) -> str:
    from agents import Agent, Runner, function_tool

    agent = Agent(name="support", instructions=SYSTEM, model=MODEL, tools=[function_tool(lookup_order)])
    return str(Runner.run_sync(agent, task).final_output)


def pydantic_ai(task: str) -> str:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"]))
    agent = Agent(model, system_prompt=SYSTEM, tools=[lookup_order], retries=0)
    return str(agent.run_sync(task).output)


def langgraph(task: str) -> str:
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    graph = create_react_agent(ChatOpenAI(model=MODEL, max_retries=0), [tool(lookup_order)], prompt=SYSTEM)
    out = graph.invoke({"messages": [("user", task)]})
    return str(out["messages"][-1].content)


AGENTS = {
    "openai chat": lambda t: openai_chat(t, False),
    "openai chat stream": lambda t: openai_chat(t, True),
    "openai responses": lambda t: openai_responses(t, False),
    "openai responses stream": lambda t: openai_responses(t, True),
    "anthropic messages": lambda t: anthropic_messages(t, False),
    "anthropic messages stream": lambda t: anthropic_messages(t, True),
    "azure openai": lambda t: azure_openai(t, False),
    "azure openai stream": lambda t: azure_openai(t, True),
    "google-genai": lambda t: google_genai(t, False),
    "google-genai stream": lambda t: google_genai(t, True),
    "ollama": lambda t: ollama_chat(t, False),
    "ollama stream": lambda t: ollama_chat(t, True),
    "bedrock": lambda t: bedrock_converse(t, False),
    "bedrock stream": lambda t: bedrock_converse(t, True),
    "vertex gemini": lambda t: vertex_gemini(t, False),
    "vertex gemini stream": lambda t: vertex_gemini(t, True),
    "anthropic vertex": lambda t: anthropic_vertex(t, False),
    "anthropic vertex stream": lambda t: anthropic_vertex(t, True),
    "google-adk": lambda t: google_adk(t, False),
    "google-adk stream": lambda t: google_adk(t, True),
    "openai-agents": openai_agents,
    "pydantic-ai": pydantic_ai,
    "langgraph": langgraph,
}

if __name__ == "__main__":
    case = os.environ["DRYFIRE_CASE"]
    print(AGENTS[case](sys.stdin.read().strip()))
