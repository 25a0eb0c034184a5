// JSON over HTTP/1.1 to the engine on loopback, with kept-alive
// connections: a mockTool call is one request on a warm socket.

import * as net from "node:net";
import { makeClient } from "./wire.js";

/** An answer: the HTTP status and the parsed JSON body (undefined for none). */
export interface Answer {
  status: number;
  body: unknown;
}

/** The engine's error object of a control route or an /ops answer. */
export interface ErrorObject {
  code: string;
  message: string;
  retryable?: boolean;
}

/** A control-route error, with the engine's code and message unchanged. */
export class EngineError extends Error {
  readonly code: string;
  readonly status: number;
  readonly details: unknown;
  constructor(status: number, code: string, message: string, details?: unknown) {
    super(message);
    this.name = "EngineError";
    this.code = code;
    this.status = status;
    this.details = details;
  }
}

/** One engine's URL and token, and the sockets to it. */
export class Connection {
  readonly url: URL;
  private readonly token: string;
  private readonly client = makeClient(net);

  constructor(url: string, token: string) {
    this.url = new URL(url);
    this.token = token;
  }

  /** send makes one request; path is absolute on the engine's URL or a full URL. */
  send(method: string, target: string, body?: unknown, control = false): Promise<Answer> {
    return this.sender(method, target, control)(body);
  }

  /**
   * sender returns a function that makes the request send would, with the
   * URL parsed once: a mockTool callable makes many.
   */
  sender(method: string, target: string, control = false): (body?: unknown) => Promise<Answer> {
    const u = new URL(target, this.url);
    const host = u.hostname;
    const port = Number(u.port || 80);
    const path = u.pathname + u.search;
    const headers = control ? `Authorization: Bearer ${this.token}\r\n` : "";
    const client = this.client;
    return (body?: unknown) =>
      new Promise<Answer>((resolve, reject) => {
        client.send(method, host, port, path, headers, body === undefined ? undefined : JSON.stringify(body), (err, a) => {
          if (err !== undefined || a === undefined) {
            reject(unreachable(u, err ?? new Error("no answer")));
            return;
          }
          let parsed: unknown;
          try {
            parsed = parseBody(a.text);
          } catch {
            reject(new Error(`dryfire: the engine answered ${method} ${u.pathname} with status ${a.status} and a body that is not JSON: ${a.text.slice(0, 200)}`));
            return;
          }
          resolve({ status: a.status, body: parsed });
        });
      });
  }

  /** control calls a control route and throws its error as an EngineError. */
  async control(method: string, path: string, body?: unknown): Promise<unknown> {
    const a = await this.send(method, path, body, true);
    if (a.status >= 400) throw engineError(a);
    return a.body;
  }

  close(): void {
    this.client.close();
  }
}

function unreachable(u: URL, err: Error): Error {
  return new Error(`dryfire: cannot reach the engine at ${u.origin} (${err.message}); did it exit? Its standard error says why`);
}

/** engineError turns a 4xx/5xx answer into an EngineError. */
export function engineError(a: Answer): EngineError {
  const body = a.body as { error?: ErrorObject } | undefined;
  const e = body?.error;
  if (e !== undefined && typeof e.code === "string") return new EngineError(a.status, e.code, e.message, body);
  return new EngineError(a.status, "ENGINE_ERROR", `dryfire: the engine answered status ${a.status}`, body);
}

/** parseBody parses a JSON answer body; "" is no body (undefined). */
export function parseBody(text: string): unknown {
  return text === "" ? undefined : JSON.parse(text);
}
