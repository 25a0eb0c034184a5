"""openenv-core's own client drives an episode of a dryfire session: its
GenericEnvClient, over the WebSocket it opens (/ws), resets, steps (tool
calls, then the answer), reads the state, and gets the verdict's score as
its reward. Prints `N passed, N failed`; exits 1 when a check failed.

    python openenv_check.py --bin DRYFIRE
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

from openenv.core.env_server.types import ResetRequest, ResetResponse, State, StepRequest, StepResponse
from openenv.core.generic_client import GenericEnvClient

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SUITE = os.path.join(ROOT, "examples", "world", "support.dryfire.yaml")
DRILL = "a shipped order is not refunded; a ticket is opened instead"

checks = {"passed": 0, "failed": 0}


def check(ok, what):
    checks["passed" if ok else "failed"] += 1
    print(("ok   " if ok else "FAIL ") + what, flush=True)


def call(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def http_episode(base):
    """The HTTP routes of a session, in OpenEnv's shapes: requests made
    with openenv-core's own ResetRequest and StepRequest, answers read
    with its ResetResponse, StepResponse and State (strict models: a key
    they do not know is an error)."""
    sid = call("POST", base + "/sessions", {"case": DRILL})["session_id"]
    url = f"{base}/sessions/{sid}"
    r = ResetResponse(**call("POST", url + "/reset", ResetRequest(seed=9, episode_id="ep-1").model_dump(exclude_none=True)))
    check(r.observation["episode_id"] == "ep-1" and r.observation["seed"] == 9 and r.reward is None and not r.done,
          "HTTP: POST /sessions/ID/reset takes openenv-core's ResetRequest and answers its ResetResponse")
    for args in ({"order_id": "A-992"}, {"order_id": "A-992"}):
        r = StepResponse(**call("POST", url + "/step", StepRequest(action={"tool": "lookup_order", "arguments": args}, timeout_s=5, request_id="q").model_dump(exclude_none=True)))
    check(not r.done and r.reward is None and "shipped" in r.observation["content"],
          "HTTP: POST /sessions/ID/step takes its StepRequest and answers its StepResponse")
    call("POST", url + "/step", {"action": {"tool": "open_ticket", "arguments": {"subject": "late order A-992"}}})
    st = State(**call("GET", url + "/state"))
    check(st.episode_id == "ep-1" and st.step_count == 3, f"HTTP: GET /sessions/ID/state is its State (episode_id, step_count {st.step_count})")
    r = StepResponse(**call("POST", url + "/step", {"action": {"answer": "I opened ticket 1 for you."}}))
    check(r.done and r.reward == 1.0, f"HTTP: the answer ends the episode, reward {r.reward}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    args = ap.parse_args()
    serve = subprocess.Popen([os.path.abspath(args.bin), "serve", SUITE, "--http", "127.0.0.1:0", "--case", DRILL],
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        base, deadline = None, time.time() + 30
        while base is None and time.time() < deadline:
            m = re.search(r"on (http://\S+): MCP", serve.stderr.readline().decode())
            base = m and m.group(1)
        check(base is not None, "serve announces its address")
        with GenericEnvClient(base_url=base).sync() as env:
            r = env.reset(seed=5)
            check(r.observation["drill"] == DRILL and r.observation["seed"] == 5 and not r.done and r.reward is None,
                  f"reset: a new episode of the drill, seed 5 ({r.observation['episode_id']})")
            check(any(t["name"] == "open_ticket" for t in r.observation["tools"]), "reset: the tools are in the observation")
            for _ in range(2):
                r = env.step({"tool": "lookup_order", "arguments": {"order_id": "A-992"}})
            check("shipped" in r.observation["content"] and not r.observation["is_error"] and not r.done,
                  f"step: a tool call's result is the observation ({r.observation['content']})")
            env.step({"tool": "open_ticket", "arguments": {"subject": "late order A-992"}})
            st = env.state()
            check(st["step_count"] == 3 and st["state"]["tickets"]["queue"][0]["subject"] == "late order A-992",
                  f"state: step_count {st['step_count']}, the world's state")
            r = env.step({"answer": "I opened ticket 1 for you."})
            check(r.done and r.reward == 1.0 and r.observation["verdict"] == "passed",
                  f"step with the answer: done, verdict {r.observation['verdict']}, reward {r.reward}")
            r = env.reset()
            st = env.state()
            check(st["step_count"] == 0 and st["state"]["tickets"]["queue"] == [], "reset again: the world back to its start")
            try:
                env.step({"fly": True})
                check(False, "an action that is none is refused")
            except RuntimeError as e:
                check("VALIDATION_ERROR" in str(e), f"an action that is none is refused: {e}")
        http_episode(base)
    finally:
        serve.terminate()
        serve.wait(10)
    print(f"{checks['passed']} passed, {checks['failed']} failed", flush=True)
    sys.exit(1 if checks["failed"] else 0)


if __name__ == "__main__":
    main()
