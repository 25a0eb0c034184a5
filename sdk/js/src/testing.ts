// dryfire/testing: mockTool turns one of the world's operations into a
// function your test runner installs in place of an imported dependency
// (vi.mock, jest.mock, a spy's mockImplementation). Every call goes to the
// drill's world in the engine; none ever reaches the real dependency.

import { internal, type Binding, type OperationInfo } from "./binding.js";
import type { Answer } from "./http.js";
import { closest } from "./suggest.js";
import { postSync } from "./sync.js";

export type { Binding, OperationInfo } from "./binding.js";

/** An operation: `{packageId, operationId}` or `"package/operation"`. */
export type OperationRef = { readonly packageId: string; readonly operationId: string } | string;

/** The error object of a failed operation, as the world answered it. */
export interface ToolErrorEnvelope {
  /** A declared error code (BUSY), or the engine's (INVALID_INPUT, PERMISSION_DENIED, BUDGET_EXCEEDED, DRILL_ENDED, …). */
  readonly code: string;
  readonly message: string;
  readonly retryable: boolean;
}

const BRAND = Symbol.for("dryfire.ToolMockError");

/** What a mockTool callable throws (sync) or rejects with (async) when the operation fails. */
export class ToolMockError extends Error {
  /** The world's error object. */
  readonly envelope: ToolErrorEnvelope;
  /** The HTTP status the world gave the call (422 a declared error, 503 a retryable one, 410 an ended drill, …). */
  readonly status: number;
  /** "package/operation". */
  readonly operation: string;

  constructor(operation: string, envelope: ToolErrorEnvelope, status: number) {
    super(`${operation} failed with ${envelope.code} (status ${status}): ${envelope.message}`);
    this.name = "ToolMockError";
    this.envelope = envelope;
    this.status = status;
    this.operation = operation;
  }

  /** The envelope's code. */
  get code(): string {
    return this.envelope.code;
  }

  // One class for the ESM and CommonJS builds loaded side by side.
  static override [Symbol.hasInstance](x: unknown): boolean {
    return typeof x === "object" && x !== null && (x as Record<symbol, unknown>)[BRAND] === true;
  }
}
Object.defineProperty(ToolMockError.prototype, BRAND, { value: true });

interface Common<A extends unknown[], T> {
  /** The world operation each call runs. It must exist in the drill's world. */
  operation: OperationRef;
  /** Maps the function's own arguments to the operation's input (default: the first argument). */
  input?: (...args: A) => unknown;
  /** Maps the operation's JSON output to the function's own return shape (default: the value as is). */
  output?: (value: any) => T;
  /** The idempotency key of a call: retries of one logical request reuse a key, distinct requests use distinct keys. */
  idempotencyKey?: (...args: A) => string | undefined;
  /** Builds the dependency's own Error for a failed call (default: a ToolMockError). */
  error?: (envelope: ToolErrorEnvelope, status: number) => unknown;
  /** The actor the calls are made as (default: the drill's). */
  actor?: string;
}

/** Options of a synchronous replacement: the callable returns the value. */
export interface SyncMockOptions<A extends unknown[], T> extends Common<A, T> {
  mode: "sync";
}

/** Options of an asynchronous replacement: the callable returns a Promise. */
export interface AsyncMockOptions<A extends unknown[], T> extends Common<A, T> {
  mode: "async";
}

export type MockToolOptions<A extends unknown[], T> = SyncMockOptions<A, T> | AsyncMockOptions<A, T>;

function operationName(b: Binding, ref: OperationRef): OperationInfo {
  let pkg: string;
  let op: string;
  if (typeof ref === "string") {
    const slash = ref.indexOf("/");
    pkg = slash < 0 ? "" : ref.slice(0, slash);
    op = slash < 0 ? ref : ref.slice(slash + 1);
  } else if (typeof ref === "object" && ref !== null && typeof ref.packageId === "string" && typeof ref.operationId === "string") {
    pkg = ref.packageId;
    op = ref.operationId;
  } else {
    throw new TypeError('dryfire: mockTool: operation must be {packageId, operationId} or "package/operation"');
  }
  const found = b.operations.find((o) => o.package === pkg && o.operation === op);
  if (found !== undefined) return found;
  const name = pkg === "" ? op : `${pkg}/${op}`;
  const names = b.operations.map((o) => `${o.package}/${o.operation}`);
  const byTool = b.operations.find((o) => o.tool !== "" && o.tool === name);
  let hint: string;
  if (byTool !== undefined) {
    hint = `; ${name} is the tool name of ${byTool.package}/${byTool.operation}: name the operation`;
  } else {
    const near = closest(name, names) ?? closest(name, b.operations.map((o) => o.operation));
    const nearOp = near === undefined ? undefined : b.operations.find((o) => `${o.package}/${o.operation}` === near || o.operation === near);
    hint = nearOp !== undefined ? `; did you mean ${nearOp.package}/${nearOp.operation}?` : "";
  }
  throw new Error(
    `dryfire: mockTool: the world of drill ${b.drill} has no operation ${name}${hint} (operations: ${names.join(", ") || "none"})`,
  );
}

/**
 * mockTool returns a function that runs one of the drill's world
 * operations: install it where the agent's dependency was (a module mock,
 * or a spy's mockImplementation). `mode: "sync"` returns the value,
 * `mode: "async"` a Promise; a failed operation throws (or rejects with) a
 * ToolMockError, or what `error(envelope)` builds. An unknown operation
 * throws now. After the drill ends, the function fails with DRILL_ENDED.
 */
export function mockTool<A extends unknown[] = any[], T = any>(binding: Binding, options: SyncMockOptions<A, T>): (...args: A) => T;
export function mockTool<A extends unknown[] = any[], T = any>(binding: Binding, options: AsyncMockOptions<A, T>): (...args: A) => Promise<T>;
export function mockTool<A extends unknown[] = any[], T = any>(binding: Binding, options: MockToolOptions<A, T>): (...args: A) => T | Promise<T>;
export function mockTool<A extends unknown[], T>(binding: Binding, options: MockToolOptions<A, T>): (...args: A) => T | Promise<T> {
  const { conn } = internal(binding);
  if (typeof options !== "object" || options === null) throw new TypeError("dryfire: mockTool: options are required ({mode, operation, …})");
  const mode: unknown = options.mode;
  if (mode !== "sync" && mode !== "async") {
    throw new TypeError(`dryfire: mockTool: mode must be "sync" or "async", not ${JSON.stringify(mode)}`);
  }
  const info = operationName(binding, options.operation);
  const name = `${info.package}/${info.operation}`;
  if (!binding.bindings.includes("direct")) {
    throw new Error(
      `dryfire: mockTool: drill ${binding.drill}'s target lists bindings [${binding.bindings.join(", ")}], not direct: mockTool is the direct binding (add direct to target.bindings in the suite, or reach the world the way the target says)`,
    );
  }
  const url = `${binding.opsUrl}/${encodeURIComponent(info.package)}/${encodeURIComponent(info.operation)}`;
  const { input, output, idempotencyKey, error, actor } = options;

  const envelope = (args: A): Record<string, unknown> => {
    const body: Record<string, unknown> = { arguments: input !== undefined ? input(...args) : (args[0] ?? {}) };
    if (actor !== undefined) body.actorId = actor;
    const key = idempotencyKey?.(...args);
    if (key !== undefined) body.idempotencyKey = key;
    return body;
  };
  const settle = (a: Answer): T => {
    const body = a.body as { status?: string; output?: unknown; error?: Partial<ToolErrorEnvelope> | null } | undefined;
    if (a.status >= 200 && a.status < 300 && body?.status === "ok") {
      return output !== undefined ? output(body.output) : (body.output as T);
    }
    const e = body?.error ?? undefined;
    const env: ToolErrorEnvelope = Object.freeze({
      code: typeof e?.code === "string" ? e.code : "ENGINE_ERROR",
      message: typeof e?.message === "string" ? e.message : `the engine answered status ${a.status}`,
      retryable: e?.retryable === true,
    });
    throw error !== undefined ? error(env, a.status) : new ToolMockError(name, env, a.status);
  };

  if (mode === "sync") {
    return (...args: A): T => settle(postSync(url, envelope(args)));
  }
  const post = conn.sender("POST", url);
  return async (...args: A): Promise<T> => settle(await post(envelope(args)));
}
