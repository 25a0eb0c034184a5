"""What ``pip install ./sdk/python`` gives a fresh virtual environment before anything is published:
scripts/ci.d/30-python.sh runs this file with that environment's python, in a folder holding the
README's minimal world (examples/minimal-world), with no DRYFIRE_BIN. The binary is the one the build
backend built from the clone's Go source into the wheel; a drill passes, and ``binding.evidence()``
has the shape the README gives. (Not a pytest file: the fresh environment has nothing but the SDK.)"""

import os
import sys

import dryfire_sdk
from dryfire_sdk import run_drills
from dryfire_sdk._binary import find_binary
from dryfire_sdk.testing import mock_tool

binary = find_binary()
bundled = os.path.join(os.path.dirname(dryfire_sdk.__file__), "_bin", "dryfire.exe" if os.name == "nt" else "dryfire")
if os.path.realpath(binary) != os.path.realpath(bundled):
    sys.exit(f"install check: the SDK found {binary}, not the binary of its own wheel ({bundled})")
if not os.path.realpath(bundled).startswith(os.path.realpath(sys.prefix)):
    sys.exit(f"install check: dryfire is imported from {dryfire_sdk.__file__}, not from this environment ({sys.prefix})")

seen = {}


def agent(d):
    save_note = mock_tool(d.binding, operation="notes/notes.save", input=lambda id, text: {"id": id, "text": text})
    save_note("n1", "hello")
    seen.update(d.binding.evidence())
    return "saved"


result = run_drills(drill="save-a-note", suite="notes.dryfire.yaml", agent=agent)
if result.verdict != "passed":
    sys.exit(result.render())
want = ["evidence", "events", "dropped", "dropped_events", "next", "more"]
if list(seen) != want:
    sys.exit(f"install check: binding.evidence() has the keys {list(seen)}, want {want}")
entry = ["seq", "time", "actor", "operation", "arguments", "idempotency_key", "override", "fault", "outcome",
         "is_error", "result", "state_version"]
if list(seen["evidence"][0]) != entry or seen["evidence"] != result.evidence:
    sys.exit(f"install check: an evidence entry is {seen['evidence'][0]}, want the keys {entry}")
print(f"install check: passed (dryfire-sdk from a fresh copy, binary {binary})")
