// What `npm install ../path/to/dryfire/sdk/js` gives another project, before
// anything is published: scripts/ci.d/20-js.sh runs this file with node:test
// in a scratch project that installed sdk/js of a fresh copy of the
// repository, beside the README's minimal world (examples/minimal-world),
// with no DRYFIRE_BIN. Both forms of the SDK find the binary its prepare
// script built from the clone; a drill passes, and evidence() has the shape
// the README gives.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";
import { evidence, findBinary, runDrills } from "dryfire";
import { mockTool } from "dryfire/testing";

test("the SDK installed from a clone's folder runs a drill on the binary built from that clone", async () => {
  const esm = findBinary();
  assert.equal(esm.source, "clone");
  assert.match(esm.path, /sdk[/\\]js[/\\]npm[/\\]cli-[a-z0-9]+-[a-z0-9]+[/\\]bin[/\\]dryfire(\.exe)?$/);
  assert.deepEqual(createRequire(import.meta.url)("dryfire").findBinary(), esm);

  let seen;
  const result = await runDrills({
    drill: "save-a-note",
    agent: async ({ binding }) => {
      const saveNote = mockTool(binding, { mode: "async", operation: "notes/notes.save", input: (id, text) => ({ id, text }) });
      await saveNote("n1", "hello");
      seen = await evidence(binding);
      return "saved";
    },
  });
  assert.equal(result.verdict, "passed", result.failures.join("\n"));
  assert.deepEqual(Object.keys(seen), ["evidence", "events"]);
  assert.deepEqual(Object.keys(seen.evidence[0]), [
    "seq", "time", "actor", "operation", "arguments", "idempotency_key", "override", "fault", "outcome", "is_error", "result", "state_version",
  ]);
  assert.deepEqual(seen.evidence[0].result, { saved: "n1" });
  assert.deepEqual(result.evidence, seen.evidence);
});
