"""openenv-core's own client drives an episode of a dryfire session: its
GenericEnvClient, over the WebSocket it opens (/ws), resets, steps (tool
calls, then the answer), reads the state, and gets the verdict's score as
its reward. Prints `N passed, N failed`; exits 1 when a check failed.

    python openenv_check.py --bin DRYFIRE
"""

import argparse
import os
import re
import subprocess
import sys
import time

from openenv.core.generic_client import GenericEnvClient

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SUITE = os.path.join(ROOT, "examples", "world", "support.dryfire.yaml")
DRILL = "a shipped order is not refunded; a ticket is opened instead"

checks = {"passed": 0, "failed": 0}


def check(ok, what):
    checks["passed" if ok else "failed"] += 1
    print(("ok   " if ok else "FAIL ") + what, flush=True)


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
    finally:
        serve.terminate()
        serve.wait(10)
    print(f"{checks['passed']} passed, {checks['failed']} failed", flush=True)
    sys.exit(1 if checks["failed"] else 0)


if __name__ == "__main__":
    main()
