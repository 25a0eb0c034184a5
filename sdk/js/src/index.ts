// dryfire: run a drill of a world suite around your own agent function,
// from Vitest, Jest or any Node test runner. The world, its operations,
// overrides, evidence, checks, model cassette and report live in the
// engine (the dryfire binary, one per test worker); this package is its
// client.

import { internal, makeBinding, markEnded, type Binding, type WireBinding } from "./binding.js";
import { engine, findBinary, PROTOCOL, SDK_VERSION, type BinaryLocation } from "./engine.js";
import { EngineError } from "./http.js";

export type { Binding, OperationInfo } from "./binding.js";
export { EngineError, findBinary, PROTOCOL, SDK_VERSION, type BinaryLocation };

/** A drill's task: the case's input. */
export interface Task {
  readonly instruction: string;
  readonly input: unknown;
}

/** A toolOverrides rule, as in a world file. */
export interface ToolOverride {
  id?: string;
  operation: { packageId: string; operationId: string } | string;
  when?: { actorId?: string; arguments?: Record<string, unknown> };
  times?: number;
  outcome:
    | { kind: "return"; value: unknown }
    | { kind: "error"; code: string; message?: string; retryable?: boolean }
    | { kind: "original" };
}

/** The per-test setup, with the meaning of a case's setup: key. */
export interface Setup {
  /** A complete inline starting setup; its toolOverrides are the highest scope, test. */
  scenario?: {
    toolOverrides?: ToolOverride[];
    state?: Record<string, unknown>;
    budgets?: unknown[];
    faults?: unknown[];
    events?: unknown[];
  };
  tools?: {
    /** "package/operation" → the name of another behavior function. */
    behaviorOverrides?: Record<string, string>;
  };
}

/** A dryfire JSON report (what `dryfire run --json` writes). */
export interface Report {
  cases: ReportCase[];
  summary: Record<string, unknown>;
}

/** One case of a report. */
export type ReportCase = Record<string, unknown>;

/** One recorded operation. */
export type Evidence = Record<string, unknown> & { seq: number; operation: string };

/** A check of the drill and how it went. */
export interface CheckResult {
  check: string;
  at: string;
  passed: boolean;
  message: string;
}

/** Whether a reproduced drill matched its stored report. */
export interface Reproduction {
  identical: boolean;
  /** Where they differ, first difference first. */
  differences: string[];
}

/** What the agent function gets. */
export interface AgentContext {
  task: Task;
  binding: Binding;
}

export interface RunDrillsOptions<R = unknown> {
  /** Your agent: called once with the drill's task and binding; sync or async. Its return value is the drill's output. */
  agent: (ctx: AgentContext) => R | Promise<R>;
  /** The drill: a case name of a world suite. Not needed with reproduce. */
  drill?: string;
  /** The world suite file, relative to cwd; without it the drill is looked up among the suites under cwd. */
  suite?: string;
  /** The directory suite paths and the search start from (default process.cwd()). */
  cwd?: string;
  /** Per-test rules, kept in the drill's derived build and report. */
  setup?: Setup;
  /** The drill's seed (over the case's and the world's). */
  seed?: number;
  /** The actor of calls that do not name one. */
  actor?: string;
  /** The model cassette's record mode (default: none under CI, else once). */
  record?: "none" | "once" | "new" | "all";
  /** A stored result (or its report) to re-run against exactly its build and seed. */
  reproduce?: DrillResult | Report | ReportCase;
  /**
   * Abandons the drill when aborted (a test timeout, a cancelled run): the
   * drill ends with no verdict and no cassette, its binding answers
   * DRILL_ENDED from then on, and runDrills rejects with the signal's reason.
   */
  signal?: AbortSignal;
}

export interface DrillResult<R = unknown> {
  /** passed or failed. */
  verdict: "passed" | "failed";
  /** The report's case status: passed, failed or error (the surroundings broke). */
  status: "passed" | "failed" | "error";
  /** The failed checks' messages and the agent's error, ready to print. */
  failures: string[];
  checks: CheckResult[];
  drill: string;
  suite: string;
  task: Task;
  seed: number;
  buildHash: string;
  /** The derived build (world, scenario, every scope's rules). */
  build: unknown;
  /** The world's final state: package → collection → value. */
  state: Record<string, unknown>;
  /** Every operation, in the order the world answered them. */
  evidence: Evidence[];
  /** The events the world emitted. */
  events: unknown[];
  /** The JSON report `dryfire run --json` writes, with this drill as its one case. */
  report: Report;
  /** With reproduce: whether the evidence and verdict equal the stored report's. */
  reproduction?: Reproduction;
  /** What the agent returned (undefined when it threw). */
  output: R | undefined;
  /** What the agent threw, if it did. */
  agentError?: unknown;
}

interface Started {
  id: string;
  suite: string;
  drill: string;
  task: { instruction: string; input: unknown };
  seed: number;
  build_hash: string;
  binding: WireBinding;
}

interface Ended {
  verdict: "passed" | "failed";
  status: "passed" | "failed" | "error";
  failures?: string[] | null;
  checks?: CheckResult[] | null;
  seed: number;
  build_hash: string;
  build: unknown;
  state?: Record<string, unknown> | null;
  evidence?: Evidence[] | null;
  events?: unknown[] | null;
  report: Report;
  reproduction?: { identical: boolean; differences?: string[] | null };
}

const finished: DrillResult[] = [];

/** results lists the results of the drills this worker ran, in the order they ended. */
export function results(): readonly DrillResult[] {
  return finished;
}

function storedReport(r: DrillResult | Report | ReportCase): unknown {
  if (typeof r !== "object" || r === null) throw new TypeError("dryfire: runDrills: reproduce must be a result of runDrills or its report");
  if ("report" in r && typeof r.report === "object" && r.report !== null && "verdict" in r) return r.report;
  return r;
}

function agentOutput(v: unknown): unknown {
  if (v === undefined) return null;
  if (typeof v === "string") return v;
  try {
    const text = JSON.stringify(v);
    return text === undefined ? String(v) : JSON.parse(text);
  } catch {
    return String(v);
  }
}

function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message !== "" ? err.message : err.name;
  return typeof err === "string" ? err : String(err);
}

const ABANDONED = Symbol("abandoned");

/** abandonable settles with the agent's result, or rejects with ABANDONED when signal aborts first. */
function abandonable<R>(result: R | Promise<R>, signal: AbortSignal | undefined): Promise<R> {
  const p = Promise.resolve(result);
  if (signal === undefined) return p;
  return new Promise<R>((resolve, reject) => {
    const onAbort = () => reject(ABANDONED);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * runDrills runs one drill: it starts the named drill of a world suite in
 * the engine (with its scenario, its rules and this test's setup), calls
 * agent({task, binding}), ends the drill and evaluates its checks. A
 * throwing agent fails the drill ("the agent failed: …"); problems with
 * the suite, the setup or the engine are thrown.
 */
export async function runDrills<R>(options: RunDrillsOptions<R>): Promise<DrillResult<R>> {
  if (typeof options !== "object" || options === null || typeof options.agent !== "function") {
    throw new TypeError("dryfire: runDrills: options.agent must be your agent function ({task, binding}) => output");
  }
  const body: Record<string, unknown> = { cwd: options.cwd ?? process.cwd() };
  if (options.reproduce !== undefined) {
    body.reproduce = storedReport(options.reproduce);
    // A report of several drills needs the name of the one to re-run.
    if (options.drill !== undefined) body.drill = options.drill;
  } else {
    if (typeof options.drill !== "string" || options.drill === "") {
      throw new TypeError("dryfire: runDrills: options.drill must name a drill (a case of a world suite), or pass reproduce");
    }
    body.drill = options.drill;
    if (options.suite !== undefined) body.suite = options.suite;
    if (options.setup !== undefined) body.setup = options.setup;
    if (options.seed !== undefined) body.seed = options.seed;
  }
  if (options.actor !== undefined) body.actor = options.actor;
  if (options.record !== undefined) body.record = options.record;

  options.signal?.throwIfAborted();
  const e = await engine();
  const started = (await e.conn.control("POST", "/engine/drills", body)) as Started;
  const binding = makeBinding(started.binding, started.drill, e.conn);
  const task: Task = Object.freeze({ instruction: started.task.instruction, input: started.task.input });

  let output: R | undefined;
  let agentError: unknown;
  let threw = false;
  try {
    output = await abandonable(options.agent({ task, binding }), options.signal);
  } catch (err) {
    if (err === ABANDONED) {
      markEnded(binding);
      await e.conn.control("DELETE", `/engine/drills/${started.id}`);
      throw options.signal?.reason ?? new Error("dryfire: runDrills: the drill was abandoned");
    }
    threw = true;
    agentError = err;
  }
  let ended: Ended;
  try {
    ended = (await e.conn.control("POST", `/engine/drills/${started.id}/end`, {
      output: threw ? null : agentOutput(output),
      error: threw ? errorMessage(agentError) : null,
    })) as Ended;
  } finally {
    markEnded(binding);
  }
  const result: DrillResult<R> = {
    verdict: ended.verdict,
    status: ended.status,
    failures: ended.failures ?? [],
    checks: ended.checks ?? [],
    drill: started.drill,
    suite: started.suite,
    task,
    seed: ended.seed,
    buildHash: ended.build_hash,
    build: ended.build,
    state: ended.state ?? {},
    evidence: ended.evidence ?? [],
    events: ended.events ?? [],
    report: ended.report,
    output,
  };
  if (threw) result.agentError = agentError;
  if (ended.reproduction !== undefined) {
    result.reproduction = { identical: ended.reproduction.identical, differences: ended.reproduction.differences ?? [] };
  }
  finished.push(result as DrillResult);
  return result;
}

async function world(b: Binding, method: string, path: string, body?: unknown): Promise<unknown> {
  const { conn } = internal(b);
  const a = await conn.send(method, `${b.worldUrl}${path}`, body);
  if (a.status >= 400) {
    const err = (a.body as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new EngineError(a.status, err?.code ?? "ENGINE_ERROR", err?.message ?? `dryfire: the world answered status ${a.status}`, a.body);
  }
  return a.body;
}

/**
 * reset puts the drill's world back to its start: state, rule counts,
 * budgets, fault counters, clock, receipts and events (the evidence is
 * kept). With a package, only that package (and its rule counts). It
 * never touches your test runner's mocks: restore those yourself
 * (vi.resetAllMocks, jest.restoreAllMocks).
 */
export async function reset(binding: Binding, pkg?: string): Promise<void> {
  await world(binding, "POST", pkg === undefined ? "/reset" : `/reset/${encodeURIComponent(pkg)}`);
}

/** evidence returns the drill's evidence and events so far (after seq `since`, when given). */
export async function evidence(binding: Binding, since?: number): Promise<{ evidence: Evidence[]; events: unknown[] }> {
  const got = (await world(binding, "GET", since === undefined ? "/evidence" : `/evidence?since=${since}`)) as {
    evidence?: Evidence[] | null;
    events?: unknown[] | null;
  };
  return { evidence: got.evidence ?? [], events: got.events ?? [] };
}

/** state returns the drill's world state now: package → collection → value. */
export async function state(binding: Binding): Promise<Record<string, unknown>> {
  return (await world(binding, "GET", "/state")) as Record<string, unknown>;
}

/** advanceClock moves the drill's virtual clock (a Go duration such as "10m", or seconds); due events fire. */
export async function advanceClock(binding: Binding, by: string | number): Promise<string> {
  const got = (await world(binding, "POST", "/clock/advance", { by })) as { now: string };
  return got.now;
}
