// The SDK's own HTTP/1.1 client (src/wire.ts) against a real node:http
// server: bodies by length and chunked, kept-alive sockets, a server that
// closes them, answers cut short, and answers that are not HTTP.
import * as http from "node:http";
import * as net from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { makeClient, type Client, type RawAnswer } from "../src/wire.js";

const closers: (() => void)[] = [];
afterEach(() => {
  while (closers.length > 0) closers.pop()!();
});

/** listen starts a server on loopback and returns its port and the number of connections it saw. */
async function listen(server: http.Server | net.Server): Promise<{ port: number; connections: () => number }> {
  let n = 0;
  server.on("connection", () => n++);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => server.close());
  const addr = server.address() as net.AddressInfo;
  return { port: addr.port, connections: () => n };
}

function client(): Client {
  const c = makeClient(net);
  closers.push(c.close);
  return c;
}

function post(c: Client, port: number, path: string, body?: string, method = "POST"): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    c.send(method, "127.0.0.1", port, path, "", body, (err, a) => (err !== undefined ? reject(err) : resolve(a!)));
  });
}

/** An echo server: answers the method, path and body as JSON, chunked when the path says so. */
function echo(): http.Server {
  return http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const text = JSON.stringify({ method: req.method, path: req.url, body: Buffer.concat(parts).toString("utf8"), auth: req.headers.authorization ?? null });
      if (req.url?.startsWith("/chunked")) {
        res.writeHead(200, { "content-type": "application/json" });
        const n = Number(new URL(req.url, "http://x").searchParams.get("pad") ?? "0");
        res.write(text.slice(0, 5));
        res.write(text.slice(5) + " ".repeat(n));
        res.end();
      } else if (req.url === "/empty") {
        res.writeHead(204).end();
      } else if (req.url === "/close") {
        res.writeHead(201, { connection: "close", "content-length": Buffer.byteLength(text) }).end(text);
      } else {
        res.writeHead(200, { "content-length": Buffer.byteLength(text) }).end(text);
      }
    });
  });
}

describe("makeClient", () => {
  test("sequential requests share one kept-alive socket, bodies by Content-Length", async () => {
    const s = await listen(echo());
    const c = client();
    for (let i = 0; i < 50; i++) {
      const body = JSON.stringify({ i, text: "é✓" });
      const a = await post(c, s.port, `/ops/p/op${i}`, body);
      expect(a.status).toBe(200);
      expect(JSON.parse(a.text)).toEqual({ method: "POST", path: `/ops/p/op${i}`, body, auth: null });
    }
    expect(s.connections()).toBe(1);
  });

  test("chunked answers are joined, small and large", async () => {
    const s = await listen(echo());
    const c = client();
    for (const pad of [0, 10, 1 << 20]) {
      const a = await post(c, s.port, `/chunked?pad=${pad}`, "{}");
      expect(a.status).toBe(200);
      expect(a.text.length).toBeGreaterThan(pad);
      expect(JSON.parse(a.text)).toMatchObject({ path: `/chunked?pad=${pad}`, body: "{}" });
    }
    expect(s.connections()).toBe(1);
  });

  test("204 has no body; Connection: close is not reused; headers are sent", async () => {
    const s = await listen(echo());
    const c = client();
    expect(await post(c, s.port, "/empty", undefined, "DELETE")).toEqual({ status: 204, text: "" });
    expect((await post(c, s.port, "/close", "{}")).status).toBe(201);
    expect((await post(c, s.port, "/after", "{}")).status).toBe(200);
    expect(s.connections()).toBe(2);
    const a = await new Promise<RawAnswer>((resolve, reject) =>
      c.send("GET", "127.0.0.1", s.port, "/h", "Authorization: Bearer t0k\r\n", undefined, (err, x) => (err ? reject(err) : resolve(x!))),
    );
    expect(JSON.parse(a.text)).toMatchObject({ method: "GET", auth: "Bearer t0k" });
  });

  test("concurrent requests each get their own answer", async () => {
    const s = await listen(echo());
    const c = client();
    const got = await Promise.all(Array.from({ length: 32 }, (_, i) => post(c, s.port, `/n/${i}`, String(i))));
    got.forEach((a, i) => expect(JSON.parse(a.text)).toMatchObject({ path: `/n/${i}`, body: String(i) }));
    // The sockets are kept: a second wave opens none.
    const before = s.connections();
    await Promise.all(Array.from({ length: 32 }, (_, i) => post(c, s.port, `/m/${i}`, "x")));
    expect(s.connections()).toBe(before);
  });

  test("a kept-alive socket the server closed while idle is replaced, and the request sent once", async () => {
    const server = echo();
    let requests = 0;
    server.on("request", () => requests++);
    const s = await listen(server);
    const c = client();
    await post(c, s.port, "/one", "{}");
    server.closeIdleConnections();
    await new Promise((r) => setTimeout(r, 20));
    expect((await post(c, s.port, "/two", "{}")).status).toBe(200);
    expect(requests).toBe(2);
    expect(s.connections()).toBe(2);
  });

  test("an answer cut short, an answer that is not HTTP, and no server are errors", async () => {
    const cut = await listen(
      net.createServer((sock) => sock.once("data", () => sock.end("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"partial\""))),
    );
    const garbage = await listen(net.createServer((sock) => sock.once("data", () => sock.end("SSH-2.0-OpenSSH\r\n\r\n"))));
    const c = client();
    await expect(post(c, cut.port, "/x", "{}")).rejects.toThrow("the connection closed in the middle of the answer");
    await expect(post(c, garbage.port, "/x", "{}")).rejects.toThrow('not an HTTP answer: "SSH-2.0-OpenSSH"');
    const free = await listen(net.createServer());
    closers.pop()!();
    await new Promise((r) => setTimeout(r, 20));
    await expect(post(c, free.port, "/x", "{}")).rejects.toThrow(/ECONNREFUSED/);
  });

  test("a body that runs to the end of the connection", async () => {
    const s = await listen(net.createServer((sock) => sock.once("data", () => sock.end("HTTP/1.1 200 OK\r\n\r\n{\"to\":\"eof\"}"))));
    expect(await post(client(), s.port, "/x", "{}")).toEqual({ status: 200, text: '{"to":"eof"}' });
  });
});
