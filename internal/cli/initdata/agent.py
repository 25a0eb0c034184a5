"""A stand-in agent, written by `dryfire init --agent-command`.

It reads the user's message on standard input, calls the lookup_order tool
over dryfire's plain-HTTP tool route, and prints its answer. Replace it
with your own agent: dryfire gives it the same environment.
"""
import json
import os
import re
import sys
import urllib.request

message = sys.stdin.read()
order = re.search(r"[A-Z]-\d+", message)
if order is None:
    print("Which order do you mean?")
    sys.exit(0)

request = urllib.request.Request(
    os.environ["DRYFIRE_TOOLS_URL"] + "/lookup_order",
    data=json.dumps({"order_id": order.group(0)}).encode(),
    headers={"Content-Type": "application/json"},
)
with urllib.request.urlopen(request) as answer:
    result = json.load(answer)

if result["is_error"]:
    print("I could not find order " + order.group(0) + ".")
else:
    status = json.loads(result["content"])["status"]
    print("Your order " + order.group(0) + " has " + status + ".")
