"""An agent on the Python MCP SDK's client (mcp), for tests/test_ecosystem.py.

Over streamable HTTP (DRYFIRE_MCP_URL), in the era its argument names ("modern": the client's
default, which negotiates 2026-07-28 and answers the server's input_required results; "legacy":
the 2025-11-25 handshake, the server's requests in the call's stream), declaring elicitation and
sampling: it reads a resource, gets a prompt with its arguments filled, calls a tool whose rule
elicits (the user accepts with a window seat, or declines when the case's input is "decline") and
one whose rule samples (the "model" echoes the request), and prints what it got, one line each.
"""

from __future__ import annotations

import asyncio
import os
import sys

import mcp
from mcp import types


async def main() -> None:
    decline = os.environ.get("DRYFIRE_INPUT") == "decline"

    async def elicit(_ctx: object, _params: types.ElicitRequestParams) -> types.ElicitResult:
        if decline:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"confirm": True, "seat": "window"})

    async def sample(_ctx: object, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        text = params.messages[0].content.text  # type: ignore[union-attr]
        return types.CreateMessageResult(role="assistant", model="python-model", content=types.TextContent(type="text", text="python says: " + text))

    mode = "legacy" if sys.argv[1:] == ["legacy"] else "auto"
    lines = []
    async with mcp.Client(os.environ["DRYFIRE_MCP_URL"], mode=mode, elicitation_callback=elicit, sampling_callback=sample) as c:
        lines.append(f"era: {c.session.protocol_version}")
        policy = await c.read_resource("docs://refund-policy")
        lines.append("policy: " + policy.contents[0].text)  # type: ignore[union-attr]
        p = await c.get_prompt("refund_request", {"order_id": "A-991", "reason": "late"})
        lines.append("prompt: " + " | ".join(m.content.text for m in p.messages))  # type: ignore[union-attr]
        for name, args in (("book_flight", {"to": "Paris"}), ("summarise", {})):
            r = await c.call_tool(name, args)
            lines.append(f"{name}: {'error: ' if r.is_error else ''}{r.content[0].text}")  # type: ignore[union-attr]
    print("\n".join(lines))


asyncio.run(main())
