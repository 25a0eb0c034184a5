"""dryfire on Ray (issue 41): a driver fans a run's cases out as Ray tasks
through `dryfire run --list` and `--cases` batches, merges the batches'
reports and compares the merge with the single-process run's report byte
for byte (durations aside); then 8 Ray actors drive sessions of one
`dryfire serve`, each in a world of its own, at once.

    python driver.py --bin DRYFIRE --work DIR [--cases 1000] [--batch 50]

It starts a local Ray cluster of its own (2 CPUs, no dashboard), prints
its figures (with the load average) as JSON lines, and ends with the
line `N passed, N failed` of its checks; it exits 1 when a check failed.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

import ray

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WORLD_SUITE = os.path.join(ROOT, "examples", "world", "support.dryfire.yaml")
DRILL = "a shipped order is not refunded; a ticket is opened instead"

SUITE = """version: 1
agent: {provider: script}
tools:
  lookup: {description: Look an order up.}
mocks:
  lookup:
    - return: {status: shipped}
cases:
  - from: rows.jsonl
    name: "order {{id}}"
    input: "Where is order {{id}}?"
    script:
      - tool_calls: [{name: lookup, args: {id: "{{id}}"}}]
      - text: "Order {{id}} has shipped."
    expect:
      - called: {tool: lookup, times: 1}
      - output: {contains: shipped}
      - not_called: {tool: lookup, with: {id: 13}}   # fails order 13, on purpose
"""

DURATION = re.compile(rb'"duration_ms": ?-?[0-9][0-9.eE+-]*')

checks = {"passed": 0, "failed": 0}


def check(ok, what):
    checks["passed" if ok else "failed"] += 1
    print(("ok   " if ok else "FAIL ") + what, flush=True)


def figure(**kw):
    kw["load"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(kw), flush=True)


def make_project(work, n):
    """A project of n cases in one suite (one of them fails on purpose)."""
    os.makedirs(os.path.join(work, "suites"), exist_ok=True)
    with open(os.path.join(work, "suites", "orders.dryfire.yaml"), "w") as f:
        f.write(SUITE)
    with open(os.path.join(work, "suites", "rows.jsonl"), "w") as f:
        for i in range(1, n + 1):
            f.write(json.dumps({"id": i}) + "\n")


def dryfire(bin, args, cwd, ok=(0, 1)):
    p = subprocess.run([bin] + args, cwd=cwd, capture_output=True)
    if p.returncode not in ok:
        raise RuntimeError(f"dryfire {' '.join(args)}: exit {p.returncode}: {p.stderr.decode()[-2000:]}")
    return p


@ray.remote(num_cpus=1)
def run_batch(bin, cwd, ids):
    """One batch: `dryfire run suites/ --cases FILE --json -`, its report
    and how long dryfire took."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(ids) + "\n")
    try:
        t0 = time.perf_counter()
        p = dryfire(bin, ["run", "suites/", "--cases", f.name, "--json", "-", "-j", "1"], cwd)
        return p.stdout, time.perf_counter() - t0
    finally:
        os.unlink(f.name)


@ray.remote(num_cpus=0.25)
class Agent:
    """An agent with a session of its own against one serve."""

    def __init__(self, base, k):
        self.base, self.k = base, k

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.load(r)

    def episode(self):
        s = self.call("POST", "/sessions", {"case": DRILL, "seed": 100 + self.k})
        sid = s["session_id"]
        mine = [f"actor {self.k} ticket {j}" for j in range(self.k % 3 + 1)]
        for subject in mine:
            self.call("POST", f"/sessions/{sid}/step", {"action": {"tool": "open_ticket", "arguments": {"subject": subject}}})
            time.sleep(0.01)  # the actors' calls interleave
        state = self.call("GET", f"/sessions/{sid}/state")
        seen = [t["subject"] for t in state["state"]["tickets"]["queue"]]
        end = self.call("POST", f"/sessions/{sid}/step", {"action": {"answer": "done"}})
        return {"session": sid, "seed": state["seed"], "mine": mine, "seen": seen,
                "evidence": end["observation"]["evidence"], "verdict": end["observation"]["verdict"], "reward": end["reward"]}


def normalized(data):
    return DURATION.sub(b'"duration_ms": 0', data)


def fan_out(args, work, label):
    lst = json.loads(dryfire(args.bin, ["run", "suites/", "--list", "--json", "-"], work).stdout)
    with open(os.path.join(work, "list.json"), "w") as f:
        json.dump(lst, f)
    ids = [c["id"] for c in lst["cases"]]
    check(len(ids) == args.cases, f"--list gives {len(ids)} ids, want {args.cases}")
    batches = [ids[i:i + args.batch] for i in range(0, len(ids), args.batch)]
    t0 = time.perf_counter()
    done = ray.get([run_batch.remote(args.bin, work, b) for b in batches])
    t_tasks = time.perf_counter() - t0
    reports = [d[0] for d in done]
    in_dryfire = sum(d[1] for d in done)
    names = []
    for i, rep in enumerate(reports):
        name = f"batch-{i:03d}.json"
        with open(os.path.join(work, name), "wb") as f:
            f.write(rep)
        names.append(name)
    merge = dryfire(args.bin, ["merge", *names, "--list", "list.json", "--json", "merged.json"], work)
    t_ray = time.perf_counter() - t0
    t0 = time.perf_counter()
    dryfire(args.bin, ["run", "suites/", "-j", "2", "--json", "single.json"], work)
    t_single = time.perf_counter() - t0
    with open(os.path.join(work, "merged.json"), "rb") as f:
        merged = f.read()
    with open(os.path.join(work, "single.json"), "rb") as f:
        single = f.read()
    check(normalized(merged) == normalized(single), f"the merge of {len(batches)} Ray batches is the single-process run's report byte for byte (durations aside), {len(merged)} bytes")
    check(merge.stdout.decode().rstrip().endswith("999 passed, 1 failed") if args.cases == 1000 else True, "the merged run's last line")
    # Ray's own cost: a task that runs nothing, round trip.
    t0 = time.perf_counter()
    ray.get([noop.remote() for _ in range(len(batches))])
    t_noop = time.perf_counter() - t0
    # Ray's overhead: the tasks' wall time less the dryfire runs in them
    # (two at a time on 2 CPUs).
    figure(what="fan-out " + label, cases=args.cases, batches=len(batches), batch=args.batch,
           ray_s=round(t_ray, 3), tasks_s=round(t_tasks, 3), dryfire_in_tasks_s=round(in_dryfire, 3),
           ray_overhead_s=round(t_tasks - in_dryfire / 2, 3), single_j2_s=round(t_single, 3),
           ray_vs_single=round(t_ray / t_single, 2), ray_noop_tasks_s=round(t_noop, 3))


@ray.remote(num_cpus=1)
def noop():
    return None


def actors(args, work):
    serve = subprocess.Popen([args.bin, "serve", WORLD_SUITE, "--http", "127.0.0.1:0"],
                             cwd=work, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        base = None
        deadline = time.time() + 30
        while base is None and time.time() < deadline:
            line = serve.stderr.readline().decode()
            m = re.search(r"on (http://\S+): MCP", line)
            if m:
                base = m.group(1)
        check(base is not None, "serve announces its address")
        if base is None:
            return
        t0 = time.perf_counter()
        agents = [Agent.remote(base, k) for k in range(8)]
        results = ray.get([a.episode.remote() for a in agents])
        t = time.perf_counter() - t0
        check(len({r["session"] for r in results}) == 8, "8 actors, 8 sessions")
        for k, r in enumerate(results):
            check(r["seen"] == r["mine"] and r["evidence"] == len(r["mine"]) and r["seed"] == 100 + k,
                  f"actor {k}: sees only its own {len(r['mine'])} tickets and evidence, its own seed ({r['seen']}, evidence {r['evidence']})")
            check(r["verdict"] == "failed" and 0 < r["reward"] < 1, f"actor {k}: its own verdict {r['verdict']}, reward {r['reward']:.3f}")
        figure(what="actors", actors=8, seconds=round(t, 3))
    finally:
        serve.terminate()
        serve.wait(10)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=50)
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    work = os.path.abspath(args.work)
    make_project(work, args.cases)
    t0 = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    figure(what="ray.init", seconds=round(time.perf_counter() - t0, 3))
    try:
        fan_out(args, work, "cold")  # Ray starts its workers
        fan_out(args, work, "warm")  # its workers started
        actors(args, work)
    finally:
        ray.shutdown()
    print(f"{checks['passed']} passed, {checks['failed']} failed", flush=True)
    sys.exit(1 if checks["failed"] else 0)


if __name__ == "__main__":
    main()
