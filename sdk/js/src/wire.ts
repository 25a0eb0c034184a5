// A minimal HTTP/1.1 client for the engine on loopback: kept-alive sockets,
// one request in flight per socket, bodies by Content-Length or chunked.
// node:http costs about 150 µs a request on top of the engine's own work;
// this costs a few µs, and a mockTool call is one request.
//
// makeClient must stay self-contained (no imports, no outer names): the
// sync worker runs its source text (makeClient.toString()).

import type * as net from "node:net";

/** The answer of one request: the status and the body as text. */
export interface RawAnswer {
  status: number;
  text: string;
}

export type RawCallback = (err: Error | undefined, answer?: RawAnswer) => void;

/** Send sends one request (payload: JSON text) and calls back once with the answer or an error. */
export type Send = (method: string, host: string, port: number, path: string, headers: string, payload: string | undefined, cb: RawCallback) => void;

export interface Client {
  send: Send;
  /** close destroys every socket. */
  close: () => void;
}

/** makeClient returns a client using the given node:net module. */
export function makeClient(netModule: typeof net): Client {
  const CRLF2 = Buffer.from("\r\n\r\n");
  const MAX_HEAD = 64 * 1024;
  const idle = new Map<string, net.Socket[]>();
  const all = new Set<net.Socket>();

  type Job = { key: string; reused: boolean; wire: string; cb: RawCallback; retry: () => void };
  type State = { job: Job | undefined; buf: Buffer; got: boolean };
  const states = new WeakMap<net.Socket, State>();

  function finish(sock: net.Socket, st: State, err: Error | undefined, answer: RawAnswer | undefined, keep: boolean): void {
    const job = st.job;
    st.job = undefined;
    st.buf = Buffer.alloc(0);
    st.got = false;
    if (keep && !sock.destroyed) {
      sock.unref();
      let list = idle.get(job!.key);
      if (list === undefined) {
        list = [];
        idle.set(job!.key, list);
      }
      list.push(sock);
    } else {
      all.delete(sock);
      sock.destroy();
    }
    if (job !== undefined) job.cb(err, answer);
  }

  // parse tries to complete the answer from st.buf; it returns true when
  // the job ended (answer or error).
  function parse(sock: net.Socket, st: State, ended: boolean): boolean {
    const buf = st.buf;
    const headEnd = buf.indexOf(CRLF2);
    if (headEnd < 0) {
      if (buf.length > MAX_HEAD) {
        finish(sock, st, new Error("the answer's header is over 64 KiB"), undefined, false);
        return true;
      }
      return false;
    }
    const head = buf.subarray(0, headEnd).toString("latin1");
    const lines = head.split("\r\n");
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "");
    if (m === null) {
      finish(sock, st, new Error(`not an HTTP answer: ${JSON.stringify((lines[0] ?? "").slice(0, 80))}`), undefined, false);
      return true;
    }
    const status = Number(m[1]);
    let length = -1;
    let chunked = false;
    let close = false;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(":");
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === "content-length") length = Number(value);
      else if (name === "transfer-encoding") chunked = value.toLowerCase().includes("chunked");
      else if (name === "connection") close = value.toLowerCase().includes("close");
    }
    if (status === 100) {
      st.buf = buf.subarray(headEnd + 4);
      return parse(sock, st, ended);
    }
    const body = buf.subarray(headEnd + 4);
    if (status === 204 || status === 304) {
      finish(sock, st, undefined, { status, text: "" }, !close);
      return true;
    }
    if (chunked) {
      const parts: Buffer[] = [];
      let at = 0;
      for (;;) {
        const eol = body.indexOf("\r\n", at);
        if (eol < 0) return endedEarly(sock, st, ended);
        const size = parseInt(body.subarray(at, eol).toString("latin1"), 16);
        if (!Number.isFinite(size) || size < 0) {
          finish(sock, st, new Error("a bad chunk size in the answer"), undefined, false);
          return true;
        }
        if (size === 0) {
          // Trailers (none expected) end with an empty line.
          const end = body.indexOf(CRLF2, eol);
          const bare = body.length >= eol + 4 && body.subarray(eol, eol + 4).equals(CRLF2);
          if (!bare && end < 0) return endedEarly(sock, st, ended);
          finish(sock, st, undefined, { status, text: Buffer.concat(parts).toString("utf8") }, !close);
          return true;
        }
        if (body.length < eol + 2 + size + 2) return endedEarly(sock, st, ended);
        parts.push(body.subarray(eol + 2, eol + 2 + size));
        at = eol + 2 + size + 2;
      }
    }
    if (length >= 0) {
      if (body.length < length) return endedEarly(sock, st, ended);
      finish(sock, st, undefined, { status, text: body.subarray(0, length).toString("utf8") }, !close);
      return true;
    }
    // Neither: the body runs to the end of the connection.
    if (!ended) return false;
    finish(sock, st, undefined, { status, text: body.toString("utf8") }, false);
    return true;
  }

  function endedEarly(sock: net.Socket, st: State, ended: boolean): boolean {
    if (!ended) return false;
    finish(sock, st, new Error("the connection closed in the middle of the answer"), undefined, false);
    return true;
  }

  function open(host: string, port: number): net.Socket {
    const sock = netModule.createConnection({ host, port });
    sock.setNoDelay(true);
    const st: State = { job: undefined, buf: Buffer.alloc(0), got: false };
    states.set(sock, st);
    all.add(sock);
    sock.on("data", (chunk: Buffer) => {
      if (st.job === undefined) {
        // Bytes nobody asked for: the socket is out of step.
        all.delete(sock);
        sock.destroy();
        return;
      }
      st.got = true;
      st.buf = st.buf.length === 0 ? chunk : Buffer.concat([st.buf, chunk]);
      parse(sock, st, false);
    });
    const gone = (err?: Error) => {
      all.delete(sock);
      for (const list of idle.values()) {
        const i = list.indexOf(sock);
        if (i >= 0) list.splice(i, 1);
      }
      const job = st.job;
      if (job === undefined) return;
      if (st.got) {
        if (!parse(sock, st, true)) finish(sock, st, err ?? new Error("the connection closed"), undefined, false);
        return;
      }
      st.job = undefined;
      // A kept-alive socket the server closed before reading the
      // request: send it again on a new one, once.
      if (job.reused) job.retry();
      else job.cb(err ?? new Error("the connection closed before an answer"));
    };
    sock.on("error", (err) => gone(err));
    sock.on("close", () => gone());
    sock.on("end", () => gone());
    return sock;
  }

  const send: Send = (method, host, port, path, headers, payload, cb) => {
    const key = `${host}:${port}`;
    let head = `${method} ${path} HTTP/1.1\r\nHost: ${key}\r\nAccept: application/json\r\n${headers}`;
    if (payload !== undefined) head += `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload, "utf8")}\r\n`;
    const wire = payload === undefined ? head + "\r\n" : head + "\r\n" + payload;
    const go = (allowReuse: boolean): void => {
      let sock: net.Socket | undefined;
      const list = allowReuse ? idle.get(key) : undefined;
      while (list !== undefined && list.length > 0) {
        const s = list.pop()!;
        if (!s.destroyed) {
          sock = s;
          break;
        }
      }
      const reused = sock !== undefined;
      if (sock === undefined) sock = open(host.startsWith("[") ? host.slice(1, -1) : host, port);
      const st = states.get(sock)!;
      sock.ref();
      st.job = { key, reused, wire, cb, retry: () => go(false) };
      st.buf = Buffer.alloc(0);
      st.got = false;
      sock.write(wire, "utf8");
    };
    go(true);
  };

  const close = (): void => {
    for (const s of all) s.destroy();
    all.clear();
    idle.clear();
  };
  return { send, close };
}
