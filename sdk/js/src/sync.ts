// A synchronous HTTP request for mockTool({mode: "sync"}): a worker thread
// makes the request while this thread waits on a shared flag
// (Atomics.wait) and then reads the answer with receiveMessageOnPort. No
// event loop turn happens in between, so the mocked function really
// returns its value to a synchronous caller.

import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from "node:worker_threads";
import { parseBody, type Answer } from "./http.js";
import { makeClient } from "./wire.js";

const SYNC_TIMEOUT_MS = 60_000;

const WORKER_SOURCE = `
const { workerData } = require("node:worker_threads");
const { port, flag } = workerData;
const makeClient = ${makeClient.toString()};
const client = makeClient(require("node:net"));
function done(answer) {
  port.postMessage(answer);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}
port.on("message", (m) => {
  try {
    const u = new URL(m.url);
    client.send("POST", u.hostname, Number(u.port || 80), u.pathname + u.search, "", m.body, (err, a) => {
      if (err !== undefined || a === undefined) done({ error: err ? err.message : "no answer" });
      else done({ status: a.status, text: a.text });
    });
  } catch (e) {
    done({ error: String(e && e.message || e) });
  }
});
`;

interface Channel {
  worker: Worker;
  port: MessagePort;
  flag: Int32Array;
}

const KEY = Symbol.for("dryfire.sync.v1");
type Holder = { [KEY]?: Channel };

function channel(): Channel {
  const holder = globalThis as Holder;
  const have = holder[KEY];
  if (have !== undefined) return have;
  const { port1, port2 } = new MessageChannel();
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { port: port2, flag }, transferList: [port2] });
  worker.unref();
  port1.unref();
  const ch: Channel = { worker, port: port1, flag };
  worker.on("exit", () => {
    if (holder[KEY] === ch) delete holder[KEY];
  });
  holder[KEY] = ch;
  return ch;
}

/** postSync POSTs body as JSON to url and blocks this thread until the answer. */
export function postSync(url: string, body: unknown): Answer {
  const ch = channel();
  Atomics.store(ch.flag, 0, 0);
  ch.port.postMessage({ url, body: JSON.stringify(body) });
  if (Atomics.wait(ch.flag, 0, 0, SYNC_TIMEOUT_MS) === "timed-out") {
    throw new Error(`dryfire: a sync mockTool call to ${url} had no answer within ${SYNC_TIMEOUT_MS / 1000} s`);
  }
  const got = receiveMessageOnPort(ch.port);
  const m = got?.message as { status?: number; text?: string; error?: string } | undefined;
  if (m === undefined) throw new Error(`dryfire: a sync mockTool call to ${url} lost its answer`);
  if (m.error !== undefined) {
    throw new Error(`dryfire: cannot reach the engine at ${new URL(url).origin} (${m.error}); did it exit? Its standard error says why`);
  }
  let parsed: unknown;
  try {
    parsed = parseBody(m.text ?? "");
  } catch {
    throw new Error(`dryfire: the engine answered ${url} with status ${m.status} and a body that is not JSON: ${(m.text ?? "").slice(0, 200)}`);
  }
  return { status: m.status ?? 0, body: parsed };
}
