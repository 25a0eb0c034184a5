"""The support desk's two tools, as the raw-SDK agents define them: their JSON Schemas and one
function that calls the tools service over HTTP (DRYFIRE_TOOLS_URL: POST /NAME with the
arguments, answered {"content": ..., "is_error": ...})."""

from __future__ import annotations

import json
import os
import urllib.request

TOOLS = [
    ("lookup_order", "Look up an order by its id.",
     {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}),
    ("issue_refund", "Refund a delivered order. Send the same request_id when retrying one request.",
     {"type": "object", "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}, "request_id": {"type": "string"}},
      "required": ["order_id", "amount", "request_id"]}),
]

SYSTEM = ("You are the support desk's agent. Look an order up before acting. Refund only delivered orders, in full, "
          "with a request_id; when the refund service is busy, retry with the same request_id.")


def call_tool(name: str, args: dict) -> tuple[str, bool]:
    """The tool's answer as the model is shown it, and whether it is an error."""
    req = urllib.request.Request(f"{os.environ['DRYFIRE_TOOLS_URL']}/{name}", data=json.dumps(args).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=30) as resp:
        answer = json.load(resp)
    content = answer["content"]
    return (content if isinstance(content, str) else json.dumps(content)), bool(answer.get("is_error"))
