# An agent that uses dryfire's model endpoint and MCP tools, and also
# tries to reach another local port (TEST_OTHER_PORT) and an outside host
# by name (unless TEST_NO_OUTSIDE is set): what internal/runner's
# TestNetworkIsolated and TestNetworkReport run.
import json, os, socket, sys, urllib.request

def post(url, body, accept="application/json"):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json", "Accept": accept, "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.read().decode()

question = sys.stdin.read()
answer = json.loads(post(os.environ["OPENAI_BASE_URL"] + "/chat/completions", {"model": "gpt-test", "messages": [{"role": "user", "content": question}]}))
tool = post(os.environ["DRYFIRE_MCP_URL"], {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "lookup_order", "arguments": {"order_id": "A-991"}}}, "application/json, text/event-stream")
print("model:", answer["choices"][0]["message"]["content"])
print("tool:", "gold" in tool)
targets = [("127.0.0.1", int(os.environ["TEST_OTHER_PORT"]))]
if not os.environ.get("TEST_NO_OUTSIDE"):
    targets.append(("registry.npmjs.org", 443))
for host, port in targets:
    try:
        socket.create_connection((host, port), timeout=10).close()
        print("reached", host)
    except OSError as e:
        print("blocked", host, type(e).__name__)
