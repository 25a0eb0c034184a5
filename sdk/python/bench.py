"""Benchmarks of the Python SDK (numbers for the notes; not a test): engine start, one drill on a
warm engine, one sync and one async mock_tool call (p50/p99), and pytest's collection and run of a
1,000-case suite. Run: python bench.py (with the package and pytest installed)."""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dryfire_sdk
from dryfire_sdk.testing import mock_tool

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1] / "examples" / "pytest"


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def show(name: str, xs: list[float], unit: str = "ms", scale: float = 1e3) -> None:
    print(f"{name}: p50 {pct(xs, .5) * scale:.3f} {unit}, p99 {pct(xs, .99) * scale:.3f} {unit} (n={len(xs)}, mean {statistics.mean(xs) * scale:.3f})")


def main() -> None:
    starts = []
    for _ in range(10):
        t = time.perf_counter()
        e = dryfire_sdk.Engine.start(cwd=PROJECT)
        starts.append(time.perf_counter() - t)
        e.close()
    show("engine start (to the ready line)", starts)

    eng = dryfire_sdk.Engine.start(cwd=PROJECT)
    dryfire_sdk.set_default_engine(eng)

    def agent(d: dryfire_sdk.DrillContext) -> str:
        return "Saved"

    for _ in range(20):
        dryfire_sdk.run_drills(drill="save-record", agent=agent, cwd=PROJECT)
    drills = []
    for _ in range(200):
        t = time.perf_counter()
        dryfire_sdk.run_drills(drill="save-record", agent=agent, cwd=PROJECT)
        drills.append(time.perf_counter() - t)
    show("run_drills, warm engine, agent returns at once", drills)

    sync_calls: list[float] = []
    async_calls: list[float] = []

    def calling(d: dryfire_sdk.DrillContext) -> str:
        save = mock_tool(d.binding, operation="record-store/records.get")
        for _ in range(100):
            save(id="record-0")
        for _ in range(2000):
            t = time.perf_counter()
            save(id="record-0")
            sync_calls.append(time.perf_counter() - t)
        return ""

    async def acalling(d: dryfire_sdk.DrillContext) -> str:
        save = mock_tool(d.binding, mode="async", operation="record-store/records.get")
        for _ in range(100):
            await save(id="record-0")
        for _ in range(2000):
            t = time.perf_counter()
            await save(id="record-0")
            async_calls.append(time.perf_counter() - t)
        return ""

    dryfire_sdk.run_drills(drill="save-record", agent=calling, cwd=PROJECT)
    asyncio.run(dryfire_sdk.run_drills_async(drill="save-record", agent=acalling, cwd=PROJECT))
    show("mock_tool sync call (records.get)", sync_calls, "µs", 1e6)
    show("mock_tool async call (records.get)", async_calls, "µs", 1e6)
    eng.close()

    sys.path.insert(0, str(HERE))
    from tests.test_suites import _big_suite  # the suite of the 1,000-item test

    with tempfile.TemporaryDirectory() as d:
        Path(d, "big.dryfire.yaml").write_text(_big_suite(1000))
        env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
        base = [sys.executable, "-m", "pytest", "-q", "-p", "dryfire_sdk.pytest_plugin", "-p", "no:cacheprovider"]
        for what, extra in (("collect", ["--collect-only"]), ("collect+run", [])):
            times = []
            for _ in range(3):
                t = time.perf_counter()
                r = subprocess.run(base + extra, cwd=d, env=env, capture_output=True, text=True)
                times.append(time.perf_counter() - t)
            assert r.returncode == 0, r.stdout[-2000:]
            print(f"pytest {what} of 1,000 cases (whole pytest process): best {min(times):.2f} s, median {statistics.median(times):.2f} s; {r.stdout.strip().splitlines()[-1]}")
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import pytest"], capture_output=True)
        print(f"python -c 'import pytest' alone: {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
