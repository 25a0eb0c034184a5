// A drill's binding: the URLs and environment that reach its world, and
// the operations that mockTool may name. It is a plain object; the
// connection to its engine is kept aside.

import type { Connection } from "./http.js";

/** One operation of the drill's world, in the world's order. */
export interface OperationInfo {
  /** The package id, e.g. "record-store". */
  readonly package: string;
  /** The operation id, e.g. "records.save". */
  readonly operation: string;
  /** The tool name agents see over MCP and /tools. */
  readonly tool: string;
  readonly inputSchema: unknown;
  readonly outputSchema: unknown;
  /** The declared error codes. */
  readonly errors: readonly string[];
  readonly idempotent: boolean;
}

/**
 * The binding of one running drill. Protocol clients in the agent (MCP,
 * OpenAI and Anthropic SDKs, plain HTTP) reach the same world through its
 * URLs and env, so they share state and evidence with mockTool.
 */
export interface Binding {
  /** The drill's id (32 hex characters): knowing its URLs is the capability. */
  readonly id: string;
  /** The drill's name. */
  readonly drill: string;
  /** The drill's prefix: http://127.0.0.1:PORT/drills/ID */
  readonly url: string;
  /** The world's operations as MCP tools (streamable HTTP). */
  readonly mcpUrl: string;
  /** The same as plain HTTP tools (GET, POST /tools/NAME). */
  readonly toolsUrl: string;
  /** POST {opsUrl}/PACKAGE/OPERATION: what mockTool calls. */
  readonly opsUrl: string;
  /** The world's control routes (state, evidence, reset, clock). */
  readonly worldUrl: string;
  /** The model endpoint with the drill's cassette, for OpenAI-compatible clients. */
  readonly openaiBaseUrl: string;
  /** The same for Anthropic clients. */
  readonly anthropicBaseUrl: string;
  /**
   * What an agent program needs to reach this drill: OPENAI_BASE_URL,
   * ANTHROPIC_BASE_URL, OPENAI_API_KEY and ANTHROPIC_API_KEY (never a real
   * key), DRYFIRE_MCP_URL, DRYFIRE_TOOLS_URL, DRYFIRE_OPS_URL,
   * DRYFIRE_WORLD_URL, DRYFIRE_CASE, DRYFIRE_INPUT.
   */
  readonly env: Readonly<Record<string, string>>;
  /** The world's operations, in the world's order. */
  readonly operations: readonly OperationInfo[];
  /**
   * The bindings the drill's agent may use (its suite's target.bindings:
   * "direct" is mockTool; "mcp"; "http"): the engine refuses a call
   * through any other, and mockTool throws at once without "direct".
   */
  readonly bindings: readonly string[];
  /** True once the drill has ended: calls through it then fail with DRILL_ENDED. */
  readonly ended: boolean;
}

/** The engine's binding object (docs/engine-protocol.md). */
export interface WireBinding {
  id: string;
  url: string;
  mcp_url: string;
  tools_url: string;
  ops_url: string;
  world_url: string;
  env: Record<string, string>;
  operations: {
    package: string;
    operation: string;
    tool?: string;
    input_schema?: unknown;
    output_schema?: unknown;
    errors?: string[] | null;
    idempotent?: boolean;
  }[];
  bindings?: string[];
}

interface Internal {
  conn: Connection;
  ended: boolean;
}

const internals = new WeakMap<Binding, Internal>();

/** makeBinding turns the engine's binding into the SDK's. */
export function makeBinding(w: WireBinding, drill: string, conn: Connection): Binding {
  const state: Internal = { conn, ended: false };
  const b: Binding = {
    id: w.id,
    drill,
    url: w.url,
    mcpUrl: w.mcp_url,
    toolsUrl: w.tools_url,
    opsUrl: w.ops_url,
    worldUrl: w.world_url,
    openaiBaseUrl: w.env.OPENAI_BASE_URL ?? `${w.url}/v1`,
    anthropicBaseUrl: w.env.ANTHROPIC_BASE_URL ?? w.url,
    env: Object.freeze({ ...w.env }),
    operations: Object.freeze(
      (w.operations ?? []).map((o) =>
        Object.freeze({
          package: o.package,
          operation: o.operation,
          tool: o.tool ?? "",
          inputSchema: o.input_schema ?? {},
          outputSchema: o.output_schema ?? {},
          errors: Object.freeze([...(o.errors ?? [])]),
          idempotent: o.idempotent ?? false,
        }),
      ),
    ),
    bindings: Object.freeze([...(w.bindings ?? ["direct", "mcp", "http"])]),
    get ended() {
      return state.ended;
    },
  };
  internals.set(b, state);
  return Object.freeze(b);
}

/** internal returns a binding's connection, or throws for an object that is not one. */
export function internal(b: Binding): Internal {
  const s = typeof b === "object" && b !== null ? internals.get(b) : undefined;
  if (s === undefined) {
    throw new TypeError("dryfire: not a binding: pass the binding runDrills gave your agent ({task, binding})");
  }
  return s;
}

/** markEnded records that the drill of b has ended. */
export function markEnded(b: Binding): void {
  internal(b).ended = true;
}
