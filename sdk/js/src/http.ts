// JSON over HTTP/1.1 to the engine on loopback, with kept-alive
// connections: a mockTool call is one request on a warm socket.

import { Agent, request } from "node:http";

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
  private readonly agent = new Agent({ keepAlive: true, keepAliveMsecs: 10_000 });

  constructor(url: string, token: string) {
    this.url = new URL(url);
    this.token = token;
  }

  /** send makes one request; path is absolute on the engine's URL or a full URL. */
  send(method: string, target: string, body?: unknown, control = false): Promise<Answer> {
    const u = new URL(target, this.url);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), "utf8");
    const headers: Record<string, string> = { accept: "application/json" };
    if (payload !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(payload.length);
    }
    if (control) headers.authorization = `Bearer ${this.token}`;
    return new Promise<Answer>((resolve, reject) => {
      const req = request(
        { agent: this.agent, hostname: u.hostname, port: u.port, path: u.pathname + u.search, method, headers },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", (err) => reject(unreachable(u, err)));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: unknown = undefined;
            if (text !== "") {
              try {
                parsed = JSON.parse(text);
              } catch {
                reject(new Error(`dryfire: the engine answered ${method} ${u.pathname} with status ${res.statusCode} and a body that is not JSON: ${text.slice(0, 200)}`));
                return;
              }
            }
            resolve({ status: res.statusCode ?? 0, body: parsed });
          });
        },
      );
      req.on("error", (err) => reject(unreachable(u, err)));
      req.end(payload);
    });
  }

  /** control calls a control route and throws its error as an EngineError. */
  async control(method: string, path: string, body?: unknown): Promise<unknown> {
    const a = await this.send(method, path, body, true);
    if (a.status >= 400) throw engineError(a);
    return a.body;
  }

  close(): void {
    this.agent.destroy();
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
