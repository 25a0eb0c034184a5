// The agent's web UI: one page with a form. POST /ask runs the agent on
// the request and shows its answer and the records it saved, read back
// from the store (or the error). `node src/server.mjs` serves it with the
// process's environment; the test starts it with a drill's binding env.
import { createServer } from "node:http";
import { getRecord, runAgent } from "./agent.mjs";

const maxBody = 16 * 1024;

/** @param {string} s */
const esc = (s) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** @param {string} inner */
const page = (inner) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Records agent</title></head>
<body>
<h1>Records agent</h1>
<form method="post" action="/ask">
<label for="request">Ask the agent</label>
<textarea id="request" name="request" rows="3" cols="60" required></textarea>
<button type="submit">Ask</button>
</form>
${inner}
</body></html>
`;

/** @param {import("node:http").IncomingMessage} req */
async function readForm(req) {
  let body = "";
  for await (const chunk of req) {
    body += chunk;
    if (body.length > maxBody) throw new Error(`the request is over ${maxBody} bytes`);
  }
  return new URLSearchParams(body);
}

/**
 * Starts the UI on 127.0.0.1 (port 0: any free one).
 * @param {Record<string, string | undefined>} env the agent's environment
 * @param {number} [port]
 * @returns {Promise<{url: string, close: () => Promise<void>}>}
 */
export function startServer(env, port = 0) {
  const server = createServer(async (req, res) => {
    /** @param {number} status @param {string} html */
    const send = (status, html) => {
      res.writeHead(status, { "content-type": "text/html; charset=utf-8" });
      res.end(html);
    };
    try {
      if (req.method === "GET" && req.url === "/") return send(200, page(""));
      if (req.method !== "POST" || req.url !== "/ask") return send(404, page("<p>Not found.</p>"));
      const request = (await readForm(req)).get("request") ?? "";
      const { answer, saved } = await runAgent(request, env);
      const records = await Promise.all(saved.map((id) => getRecord(env, id)));
      const items = records.map((r) => `<li>${esc(`${r.id}: ${r.text} (version ${r.version})`)}</li>`).join("");
      send(200, page(`<section id="result"><p id="answer">${esc(answer)}</p><ul id="records">${items}</ul></section>`));
    } catch (e) {
      send(502, page(`<section id="result"><p id="error" role="alert">${esc(String(e instanceof Error ? e.message : e))}</p></section>`));
    }
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const addr = /** @type {import("node:net").AddressInfo} */ (server.address());
      resolve({
        url: `http://127.0.0.1:${addr.port}`,
        close: () => new Promise((done) => { server.closeAllConnections(); server.close(() => done()); }),
      });
    });
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { url } = await startServer(process.env, Number(process.env.PORT ?? 3000));
  console.log(`the records agent at ${url}`);
}
