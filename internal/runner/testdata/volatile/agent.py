# An agent that puts the time and a random id into its prompt and its
# request metadata, as many real agents do: its requests differ on every
# run. FAKE_NOW (Unix seconds) and FAKE_UUID fix them when set, so that a
# test can show a mismatch message that does not change.
import datetime
import json
import os
import sys
import time
import urllib.request
import uuid

task = sys.stdin.read()
now = float(os.environ.get("FAKE_NOW") or time.time())
rid = os.environ.get("FAKE_UUID") or str(uuid.uuid4())
stamp = datetime.datetime.fromtimestamp(now, datetime.timezone.utc).isoformat()
body = {
    "model": "gpt-4o-mini",
    "messages": [
        {"role": "system", "content": os.environ.get("PERSONA", "You are a helper.")
            + f" The time is {stamp} (now {now:.3f}); session {rid}."},
        {"role": "user", "content": task},
    ],
    "metadata": {"request_id": rid, "sent_at_ms": str(int(now * 1000))},
}
req = urllib.request.Request(
    os.environ["OPENAI_BASE_URL"] + "/chat/completions",
    data=json.dumps(body).encode(),
    headers={"Content-Type": "application/json", "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]},
)
with urllib.request.urlopen(req) as resp:
    answer = json.load(resp)
print(answer["choices"][0]["message"]["content"])
