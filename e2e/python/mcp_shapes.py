"""Every tools/call shape the official MCP Python SDK client sends, over
streamable HTTP against URL (its /mcp): a plain call, a progress token
(progress_callback), params._meta of the caller's own (meta=), both, an
unknown tool, a sequence, with notifications between the calls and a log
level asked for (logging/setLevel in the handshake era, _meta's logLevel
in 2026-07-28).

    python mcp_shapes.py URL legacy|auto

mcp 1.x speaks the handshake era only (legacy); mcp 2.x's Client probes
server/discover (auto: the 2026-07-28 era here) or, with legacy, makes the
initialize handshake. Run by internal/toolserver's TestCaptureClientShapes
(go test -capture-clients) behind a recording handler; what it sends is
kept in internal/toolserver/testdata/mcp-clients and replayed by
TestWireOfficialClientShapes.
"""

import asyncio
import sys
from typing import Any

import mcp
from mcp import types

ORDER_A = {"order_id": "A-991"}
ODD = {"x": [1, 2.5, None, "é\n<&>"]}
TRACE = "example.com/trace"


async def progress(progress: float, total: float | None, message: str | None) -> None:
    pass


async def roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[])


async def calls(s: Any, *, legacy: bool) -> None:
    await s.list_tools()
    await s.call_tool("lookup_order", ORDER_A)
    await s.call_tool("lookup_order", {"order_id": "B-1"}, progress_callback=progress)
    if legacy:
        await s.send_roots_list_changed()
    await s.call_tool("lookup_order", {"order_id": "E-1"}, meta={TRACE: "t-1"})
    await s.call_tool("issue_refund", ORDER_A, progress_callback=progress, meta={TRACE: "t-2"})
    if legacy:
        await s.set_logging_level("info")
    await s.call_tool("issue_refund", {})
    await s.call_tool("nope", ODD)
    await s.call_tool("ping")


async def main(url: str, mode: str) -> None:
    if not hasattr(mcp, "Client"):  # mcp 1.x
        from mcp.client.streamable_http import streamablehttp_client

        async with streamablehttp_client(url) as (read, write, _):
            async with mcp.ClientSession(read, write, list_roots_callback=roots) as s:
                await s.initialize()
                await calls(s, legacy=True)
        return
    legacy = mode == "legacy"
    kw: dict[str, Any] = {"mode": mode, "list_roots_callback": roots, "cache": None}
    if not legacy:
        kw["log_level"] = "info"
    async with mcp.Client(url, **kw) as c:
        await calls(c.session if legacy else c, legacy=legacy)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
