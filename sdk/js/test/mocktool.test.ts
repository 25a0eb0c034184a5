// The rules of mockTool, one test each, against the real engine.
import { describe, expect, test } from "vitest";
import { evidence, runDrills, type Binding } from "dryfire";
import { mockTool, ToolMockError, type ToolErrorEnvelope } from "dryfire/testing";
import { busyOnce, cwd, GET, SAVE, suite } from "./helpers.js";

/** Runs the sandbox drill (no checks) with agent and returns the result. */
function sandbox<R>(agent: (b: Binding) => R | Promise<R>, setup?: Parameters<typeof runDrills>[0]["setup"]) {
  return runDrills({ drill: "sandbox", suite, cwd, setup, agent: ({ binding }) => agent(binding) });
}

/** The error a call threw or rejected with (fails the test when there is none). */
async function failure(f: () => unknown): Promise<unknown> {
  try {
    await f();
  } catch (err) {
    return err;
  }
  throw new Error("expected the call to fail");
}

describe("mode: sync and async", () => {
  test("async returns a Promise of the operation's value", async () => {
    await sandbox(async (b) => {
      const save = mockTool(b, { mode: "async", operation: SAVE });
      const p = save({ id: "record-1", text: "hi" });
      expect(p).toBeInstanceOf(Promise);
      expect(await p).toEqual({ id: "record-1", version: 1 });
    });
  });

  test("sync returns the value itself, with no turn of the event loop in between", async () => {
    const r = await sandbox((b) => {
      const save = mockTool(b, { mode: "sync", operation: SAVE });
      const get = mockTool(b, { mode: "sync", operation: GET });
      let turned = false;
      setImmediate(() => (turned = true));
      const saved = save({ id: "record-1", text: "hi" });
      const read = get({ id: "record-1" });
      expect(turned).toBe(false);
      expect(saved).toEqual({ id: "record-1", version: 1 });
      expect(read).toEqual({ text: "hi", version: 1 });
      return "saved";
    });
    expect(r.evidence.map((e) => e.operation)).toEqual(["record-store/records.save", "record-store/records.get"]);
    expect(r.state).toMatchObject({ "record-store": { records: { "record-1": { text: "hi", version: 1 } } } });
  });

  test("a mode that is neither is refused at mockTool time", async () => {
    await sandbox((b) => {
      expect(() => mockTool(b, { mode: "blocking" as "sync", operation: SAVE })).toThrow(
        'mode must be "sync" or "async", not "blocking"',
      );
    });
  });
});

describe("input and output mapping", () => {
  test("input maps the native arguments to the operation's input; the JSON value is returned by default", async () => {
    const r = await sandbox(async (b) => {
      const save = mockTool(b, { mode: "async", operation: SAVE, input: (id: string, text: string) => ({ id, text }) });
      expect(await save("record-1", "hello")).toEqual({ id: "record-1", version: 1 });
    });
    expect(r.evidence[0]?.arguments).toEqual({ id: "record-1", text: "hello" });
  });

  test("output(value) preserves another native return shape", async () => {
    await sandbox(async (b) => {
      class Saved {
        constructor(readonly key: string, readonly revision: number) {}
      }
      const save = mockTool(b, {
        mode: "async",
        operation: SAVE,
        input: (id: string, text: string) => ({ id, text }),
        output: (v: { id: string; version: number }) => new Saved(v.id, v.version),
      });
      const got = await save("record-1", "hello");
      expect(got).toBeInstanceOf(Saved);
      expect(got).toEqual(new Saved("record-1", 1));
      const syncSave = mockTool(b, { mode: "sync", operation: SAVE, output: (v: { version: number }) => v.version });
      expect(syncSave({ id: "record-1", text: "again" })).toBe(2);
    });
  });

  test("a mapped value that does not match the input schema is INVALID_INPUT naming its path", async () => {
    const r = await sandbox(async (b) => {
      const save = mockTool(b, { mode: "async", operation: SAVE, input: (id: unknown, tags: unknown[]) => ({ id, text: "t", tags }) });
      const e1 = await failure(() => save(7, []));
      expect(e1).toBeInstanceOf(ToolMockError);
      expect((e1 as ToolMockError).status).toBe(400);
      expect((e1 as ToolMockError).envelope.code).toBe("INVALID_INPUT");
      expect((e1 as ToolMockError).envelope.message).toContain("at /id: got number, want string");
      const e2 = await failure(() => save("record-1", ["ok", 3]));
      expect((e2 as ToolMockError).envelope.message).toContain("at /tags/1: got number, want string");
      const syncSave = mockTool(b, { mode: "sync", operation: SAVE });
      const e3 = await failure(() => syncSave({ id: "record-1" }));
      expect((e3 as ToolMockError).envelope.code).toBe("INVALID_INPUT");
      expect((e3 as ToolMockError).envelope.message).toMatch(/text/);
    });
    expect(r.evidence.map((e) => e.outcome)).toEqual(["invalid", "invalid", "invalid"]);
    expect(r.state).toMatchObject({ "record-store": { records: { "record-0": { text: "hello", version: 1 } } } });
  });
});

describe("ToolMockError envelope and status, and a custom error", () => {
  test("a failed operation rejects (async) or throws (sync) ToolMockError with envelope and status", async () => {
    await sandbox(
      async (b) => {
        const save = mockTool(b, { mode: "async", operation: SAVE });
        const busy = await failure(() => save({ id: "record-1", text: "hi" }));
        expect(busy).toBeInstanceOf(ToolMockError);
        expect(busy).toBeInstanceOf(Error);
        expect((busy as ToolMockError).envelope).toEqual({ code: "BUSY", message: "Try again", retryable: true });
        expect((busy as ToolMockError).status).toBe(503);
        expect((busy as ToolMockError).message).toBe("record-store/records.save failed with BUSY (status 503): Try again");

        const syncSave = mockTool(b, { mode: "sync", operation: SAVE });
        let thrown: unknown;
        try {
          syncSave({ id: "record-2", text: "x".repeat(101) });
        } catch (err) {
          thrown = err;
        }
        expect(thrown).toBeInstanceOf(ToolMockError);
        expect((thrown as ToolMockError).envelope).toEqual({ code: "TOO_LONG", message: "at most 100 characters", retryable: false });
        expect((thrown as ToolMockError).status).toBe(422);

        const audit = mockTool(b, { mode: "async", operation: SAVE, actor: "auditor" });
        const denied = await failure(() => audit({ id: "record-3", text: "x" }));
        expect((denied as ToolMockError).envelope.code).toBe("PERMISSION_DENIED");
        expect((denied as ToolMockError).status).toBe(403);
      },
      { scenario: { toolOverrides: [busyOnce] } },
    );
  });

  test("error(envelope) builds the dependency's own Error class instead", async () => {
    class RecordsError extends Error {
      constructor(readonly code: string, readonly httpStatus: number, message: string) {
        super(message);
      }
    }
    const error = (e: ToolErrorEnvelope, status: number) => new RecordsError(e.code, status, e.message);
    await sandbox(
      async (b) => {
        const save = mockTool(b, { mode: "async", operation: SAVE, error });
        const got = await failure(() => save({ id: "record-1", text: "hi" }));
        expect(got).toBeInstanceOf(RecordsError);
        expect(got).not.toBeInstanceOf(ToolMockError);
        expect(got).toMatchObject({ code: "BUSY", httpStatus: 503, message: "Try again" });
        const get = mockTool(b, { mode: "sync", operation: GET, error });
        expect(() => get({ id: "nobody" })).toThrow(RecordsError);
      },
      { scenario: { toolOverrides: [busyOnce] } },
    );
  });
});

describe("idempotency keys: retries reuse a key; a repeated successful key returns its receipt before a new override", () => {
  test("a retry with the same key succeeds once the busy rule is spent, and repeating it returns the receipt", async () => {
    const r = await sandbox(
      async (b) => {
        const save = mockTool(b, {
          mode: "async",
          operation: SAVE,
          input: (id: string, text: string) => ({ id, text }),
          idempotencyKey: (id: string) => `save-${id}`,
        });
        await expect(save("record-1", "hi")).rejects.toMatchObject({ envelope: { code: "BUSY" } });
        expect(await save("record-1", "hi")).toEqual({ id: "record-1", version: 1 });
        expect(await save("record-1", "hi")).toEqual({ id: "record-1", version: 1 });
      },
      { scenario: { toolOverrides: [busyOnce] } },
    );
    expect(r.evidence.map((e) => [e.idempotency_key, e.outcome])).toEqual([
      ["save-record-1", "error"],
      ["save-record-1", "behavior"],
      ["save-record-1", "receipt"],
    ]);
    expect(r.state).toMatchObject({ "record-store": { records: { "record-1": { text: "hi", version: 1 } } } });
  });

  test("the receipt wins over an override that matches the repeated call; a new key gets the override", async () => {
    const secondFails = { ...busyOnce, id: "second-fails", when: { arguments: { id: "record-1", text: "second" } }, times: undefined };
    const r = await sandbox(
      async (b) => {
        const save = mockTool(b, {
          mode: "sync",
          operation: SAVE,
          input: (id: string, text: string, _key: string) => ({ id, text }),
          idempotencyKey: (_id: string, _text: string, key: string) => key,
        });
        expect(save("record-1", "first", "k1")).toEqual({ id: "record-1", version: 1 });
        expect(save("record-1", "second", "k1")).toEqual({ id: "record-1", version: 1 });
        expect(() => save("record-1", "second", "k2")).toThrow(/BUSY/);
      },
      { scenario: { toolOverrides: [secondFails] } },
    );
    expect(r.evidence.map((e) => [e.idempotency_key, e.outcome, (e.override as { id?: string } | null)?.id ?? null])).toEqual([
      ["k1", "behavior", null],
      ["k1", "receipt", null],
      ["k2", "error", "second-fails"],
    ]);
  });
});

describe("unknown operation", () => {
  test("throws at mockTool time with a did-you-mean, and no call is made", async () => {
    const r = await sandbox((b) => {
      expect(() => mockTool(b, { mode: "async", operation: { packageId: "record-store", operationId: "records.sav" } })).toThrow(
        "dryfire: mockTool: the world of drill sandbox has no operation record-store/records.sav; did you mean record-store/records.save? (operations: record-store/records.save, record-store/records.get, mail/mail.send)",
      );
      expect(() => mockTool(b, { mode: "sync", operation: "save_record" })).toThrow(
        "save_record is the tool name of record-store/records.save: name the operation",
      );
      expect(() => mockTool(b, { mode: "sync", operation: "billing/charge" })).toThrow(/has no operation billing\/charge \(operations:/);
    });
    expect(r.evidence).toEqual([]);
  });
});

describe("a retained callable after its binding expires", () => {
  test("rejects (async) and throws (sync) DRILL_ENDED, as the Go binding does", async () => {
    let keptAsync: ((id: string) => Promise<unknown>) | undefined;
    let keptSync: ((id: string) => unknown) | undefined;
    let kept: Binding | undefined;
    await sandbox((b) => {
      kept = b;
      keptAsync = mockTool(b, { mode: "async", operation: GET, input: (id: string) => ({ id }) });
      keptSync = mockTool(b, { mode: "sync", operation: GET, input: (id: string) => ({ id }) });
    });
    expect(kept?.ended).toBe(true);
    const late = await failure(() => keptAsync?.("record-0"));
    expect(late).toBeInstanceOf(ToolMockError);
    expect((late as ToolMockError).status).toBe(410);
    expect((late as ToolMockError).envelope.code).toBe("DRILL_ENDED");
    expect((late as ToolMockError).envelope.message).toMatch(/drill sandbox \([0-9a-f]+\) has ended: a retained mockTool callable/);
    expect(() => keptSync?.("record-0")).toThrow(/DRILL_ENDED/);
    await expect(evidence(kept as Binding)).rejects.toMatchObject({ code: "DRILL_ENDED", status: 410 });
  });
});

describe("the target's bindings", () => {
  test("kind: external with bindings: [direct] (the product note's) is an SDK drill: mockTool works, MCP is refused before the world sees it", async () => {
    const r = await runDrills({
      drill: "direct-only",
      suite: "target-direct.dryfire.yaml",
      cwd,
      agent: async ({ binding }) => {
        expect(binding.bindings).toEqual(["direct"]);
        const res = await fetch(binding.mcpUrl, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{}" });
        expect(res.status).toBe(403);
        expect(((await res.json()) as { error: ToolErrorEnvelope }).error.code).toBe("BINDING_NOT_DECLARED");
        return mockTool(binding, { mode: "sync", operation: SAVE })({ id: "record-1", text: "hello" });
      },
    });
    expect(r.evidence.map((e) => e.operation)).toEqual(["record-store/records.save"]);
  });

  test("without direct, mockTool throws at mockTool time and no call is made", async () => {
    const r = await runDrills({
      drill: "mcp-only",
      suite: "target-mcp.dryfire.yaml",
      cwd,
      agent: ({ binding }) => {
        expect(() => mockTool(binding, { mode: "async", operation: SAVE })).toThrow(
          "dryfire: mockTool: drill mcp-only's target lists bindings [mcp], not direct: mockTool is the direct binding (add direct to target.bindings in the suite, or reach the world the way the target says)",
        );
      },
    });
    expect(r.evidence).toEqual([]);
  });

  test("a suite without target has every binding", async () => {
    await sandbox((b) => expect(b.bindings).toEqual(["direct", "mcp", "http"]));
  });
});
