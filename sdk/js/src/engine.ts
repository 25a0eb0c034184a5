// The engine is the dryfire binary started as `dryfire engine`: one child
// process per test worker, started on first use and shared by every drill
// of that worker. It ends when this process ends (its standard input
// reaches end of file), so nothing here keeps the process alive.

import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { packageRoot, resolveFromHere } from "./locate.js";
import { binaryName, cloneBinary, missingBinary, platformPackage, type Clone } from "./platform.js";
import { Connection } from "./http.js";

/** The protocol version this SDK speaks (docs/engine-protocol.md). */
export const PROTOCOL = 1;
/** The version of this SDK. */
export const SDK_VERSION = "0.1.0-dev";

const READY_TIMEOUT_MS = 10_000;

/** Where the binary was found, and how. */
export interface BinaryLocation {
  path: string;
  source: "DRYFIRE_BIN" | "platform package" | "clone" | "PATH";
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The dryfire clone this SDK sits in (sdk/js of it), or undefined. */
function clone(root: string, env: NodeJS.ProcessEnv): Clone | undefined {
  const top = join(root, "..", "..");
  try {
    if (!readFileSync(join(top, "go.mod"), "utf8").startsWith("module github.com/dryfire-dev/dryfire\n")) return undefined;
  } catch {
    return undefined;
  }
  const go = (env.PATH ?? "").split(delimiter).some((d) => d !== "" && isFile(join(d, process.platform === "win32" ? "go.exe" : "go")));
  return { root: top, binary: cloneBinary(root), go };
}

/**
 * findBinary looks for the dryfire binary: DRYFIRE_BIN, then the platform
 * package (an optional dependency of this package), then the one a clone's
 * `npm install ../path/to/dryfire/sdk/js` built, then PATH.
 */
export function findBinary(env: NodeJS.ProcessEnv = process.env): BinaryLocation {
  const fromEnv = env.DRYFIRE_BIN;
  if (fromEnv !== undefined && fromEnv !== "") {
    if (!isFile(fromEnv)) {
      throw new Error(
        `dryfire: DRYFIRE_BIN is ${JSON.stringify(fromEnv)}, which is not a file; ` +
          "point it at a dryfire binary (go install github.com/dryfire-dev/dryfire/cmd/dryfire@latest) or unset it",
      );
    }
    return { path: fromEnv, source: "DRYFIRE_BIN" };
  }
  const pkg = platformPackage();
  if (pkg !== undefined) {
    try {
      const manifest = resolveFromHere(`${pkg}/package.json`);
      const bin = join(manifest, "..", "bin", binaryName());
      if (isFile(bin)) return { path: bin, source: "platform package" };
    } catch {
      // not installed: look on PATH
    }
  }
  const root = packageRoot();
  const built = cloneBinary(root);
  if (isFile(built)) return { path: built, source: "clone" };
  const name = binaryName();
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const p = join(dir, name);
    if (isFile(p)) return { path: p, source: "PATH" };
  }
  throw new Error(missingBinary(process.platform, process.arch, clone(root, env)));
}

interface ReadyLine {
  engine: string;
  protocol: number;
  version: string;
  url: string;
  token: string;
}

/** A running engine: its child process and a connection to its routes. */
export class Engine {
  readonly url: string;
  readonly token: string;
  readonly version: string;
  readonly binary: BinaryLocation;
  readonly conn: Connection;
  private readonly child: ChildProcess;
  private exitMessage: string | undefined;

  constructor(child: ChildProcess, ready: ReadyLine, binary: BinaryLocation) {
    this.child = child;
    this.url = ready.url;
    this.token = ready.token;
    this.version = ready.version;
    this.binary = binary;
    this.conn = new Connection(ready.url, ready.token);
    child.on("exit", (code, signal) => {
      this.exitMessage = `the dryfire engine (${binary.path}) exited (${signal ?? `code ${code}`})`;
      const holder = globalThis as Holder;
      if (holder[KEY]?.engine === this) delete holder[KEY];
    });
  }

  /** Why the engine is gone, or undefined while it runs. */
  get exited(): string | undefined {
    return this.exitMessage;
  }

  /** Ends the engine (it also ends on its own when this process exits). */
  close(): void {
    this.child.stdin?.end();
    this.conn.close();
  }
}

async function start(): Promise<Engine> {
  const binary = findBinary();
  const child = spawn(binary.path, ["engine"], {
    cwd: process.cwd(),
    env: process.env,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const ready = await new Promise<ReadyLine>((resolve, reject) => {
    let buf = "";
    let done = false;
    const finish = (err: Error | undefined, line?: ReadyLine) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.off("exit", onExit);
      child.off("error", onError);
      if (err !== undefined) {
        child.kill();
        reject(err);
      } else resolve(line as ReadyLine);
    };
    const onData = (chunk: Buffer) => {
      buf += chunk.toString("utf8");
      const nl = buf.indexOf("\n");
      if (nl < 0) {
        if (buf.length > 64 * 1024) finish(new Error(`dryfire: the engine ${binary.path} printed no ready line`));
        return;
      }
      const text = buf.slice(0, nl);
      let line: ReadyLine;
      try {
        line = JSON.parse(text) as ReadyLine;
      } catch {
        finish(new Error(`dryfire: ${binary.path} (from ${binary.source}) is not a dryfire engine: its first line was ${JSON.stringify(text.slice(0, 200))}`));
        return;
      }
      if (line.engine !== "dryfire" || typeof line.url !== "string" || typeof line.token !== "string") {
        finish(new Error(`dryfire: ${binary.path} printed an unexpected ready line: ${text.slice(0, 200)}`));
      } else if (line.protocol !== PROTOCOL) {
        finish(
          new Error(
            `dryfire: the engine ${binary.path} (dryfire ${line.version}) speaks engine protocol ${line.protocol}; ` +
              `this SDK (npm dryfire ${SDK_VERSION}) speaks protocol ${PROTOCOL}: install matching versions`,
          ),
        );
      } else finish(undefined, line);
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      finish(new Error(`dryfire: the engine ${binary.path} exited (${signal ?? `code ${code}`}) before it was ready; its standard error is above`));
    const onError = (err: Error) => finish(new Error(`dryfire: cannot start the engine ${binary.path} (from ${binary.source}): ${err.message}`));
    const timer = setTimeout(
      () => finish(new Error(`dryfire: the engine ${binary.path} was not ready within ${READY_TIMEOUT_MS / 1000} s`)),
      READY_TIMEOUT_MS,
    );
    child.stdout?.on("data", onData);
    child.on("exit", onExit);
    child.on("error", onError);
  });
  // Nothing of the engine keeps this process alive: when it exits, the
  // engine's standard input closes and the engine ends.
  child.stdout?.resume();
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  (child.stdout as unknown as { unref?: () => void } | null)?.unref?.();
  return new Engine(child, ready, binary);
}

interface Cached {
  engine?: Engine;
  starting: Promise<Engine>;
}

// One engine per process (per worker thread under a threads pool), kept on
// globalThis so that a test runner that re-evaluates modules for each test
// file, or the ESM and CommonJS builds loaded side by side, share it.
const KEY = Symbol.for("dryfire.engine.v1");
type Holder = { [KEY]?: Cached };

/** engine returns this worker's engine, starting it on first use. */
export function engine(): Promise<Engine> {
  const cached = (globalThis as Holder)[KEY];
  if (cached !== undefined && (cached.engine === undefined || cached.engine.exited === undefined)) {
    return cached.starting;
  }
  const entry: Cached = {
    starting: start().then(
      (e) => {
        entry.engine = e;
        return e;
      },
      (err: unknown) => {
        if ((globalThis as Holder)[KEY] === entry) delete (globalThis as Holder)[KEY];
        throw err;
      },
    ),
  };
  (globalThis as Holder)[KEY] = entry;
  return entry.starting;
}
