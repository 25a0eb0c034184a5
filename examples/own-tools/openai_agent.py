"""A ten-line agent on the official openai SDK whose tools are its own Python functions."""
import json, sys
from openai import OpenAI
def lookup_order(order_id): return {"order_id": order_id, "status": "delivered", "total": 120}
def issue_refund(order_id, amount): return {"refund_id": "R-1", "order_id": order_id, "amount": amount}
TOOLS = {f.__name__: f for f in (lookup_order, issue_refund)}
SCHEMAS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in TOOLS]
client, messages = OpenAI(), [{"role": "user", "content": sys.stdin.read()}]
while (m := client.chat.completions.create(model="gpt-4.1-mini", messages=messages, tools=SCHEMAS).choices[0].message).tool_calls:
    messages += [m] + [{"role": "tool", "tool_call_id": c.id, "content": json.dumps(TOOLS[c.function.name](**json.loads(c.function.arguments)))} for c in m.tool_calls]
print(m.content)
