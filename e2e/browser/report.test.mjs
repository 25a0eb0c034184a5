// The HTML report (dryfire run --html) in a real headless browser: it
// opens, a failed case expands on click, the filters work; and a
// 10,000-case report is written in at most 1 s and opens in at most 2 s.
// DRYFIRE_BIN is the binary under test; CHROMIUM the browser (Debian's).
// SCREENSHOT=PATH also writes a screenshot of the report there.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, copyFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const bin = process.env.DRYFIRE_BIN || "dryfire";
const repo = resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "dryfire-html-"));
let browser;

// run runs dryfire in the repository and returns its exit code and the
// wall time it took.
function run(...args) {
  const t0 = performance.now();
  const r = spawnSync(bin, args, { cwd: repo, encoding: "utf8", env: { ...process.env, CI: "true" } });
  if (r.error) throw r.error;
  return { code: r.status, ms: performance.now() - t0, out: r.stdout + r.stderr };
}

before(async () => {
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
});
after(async () => { await browser?.close(); });

async function open(file) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const failures = [];
  page.on("pageerror", (e) => failures.push(String(e)));
  page.on("request", (r) => { if (!r.url().startsWith("file:") && !r.url().startsWith("data:")) failures.push("network request: " + r.url()); });
  const t0 = performance.now();
  await page.goto(pathToFileURL(file).href);
  await page.waitForSelector("body[data-ready=true]");
  return { page, ms: performance.now() - t0, failures };
}

const visible = (page) => page.$$eval("#cases > .case", (cs) => cs.map((c) => c.querySelector(".name").textContent));

test("the failing example: summary, a failed case expands on click, filters", async () => {
  const file = join(dir, "failing.html");
  const r = run("run", "examples/failing", "--html", file);
  assert.equal(r.code, 1, r.out);
  const { page, failures } = await open(file);
  assert.match(await page.textContent("header .counts"), /1 passed.*1 failed/);
  assert.deepEqual(await visible(page), ["typo in the order id", "the order is found"]);

  const failed = page.locator('#cases > .case[data-status="failed"] > .head');
  await failed.click();
  const body = page.locator('#cases > .case[data-status="failed"] > .body');
  await body.waitFor();
  const text = await body.textContent();
  assert.match(text, /expected lookup_order with \{"order_id":"A-991"\} to be called exactly 1 time/);
  assert.match(text, /near miss: rule examples\/failing\/refund\.dryfire\.yaml:21 differs at \$\.order_id/);
  assert.match(text, /Your order is standard tier\./);
  assert.equal(await page.locator('#cases > .case[data-status="failed"] .check').count(), 2);
  if (process.env.SCREENSHOT) await page.screenshot({ path: process.env.SCREENSHOT, fullPage: true });
  await failed.click();
  assert.equal(await body.count(), 0, "a second click closes the case");

  await page.fill("#text", "found");
  await page.waitForFunction(() => document.querySelectorAll("#cases > .case").length === 1);
  assert.deepEqual(await visible(page), ["the order is found"]);
  await page.fill("#text", "");
  await page.click('#status button[data-status="failed"]');
  await page.waitForFunction(() => document.querySelectorAll("#cases > .case").length === 1);
  assert.deepEqual(await visible(page), ["typo in the order id"]);
  assert.match(await page.textContent("#shown"), /^1 of 2 cases$/);
  assert.deepEqual(failures, []);
  await page.close();
});

test("a merge of shards: the same page", async () => {
  const parts = [1, 2].map((i) => join(dir, `shard-${i}.json`));
  parts.forEach((f, i) => assert.equal(run("run", "examples/failing", "--shard", `${i + 1}/2`, "--json", f).code <= 1, true));
  const file = join(dir, "merged.html");
  const r = run("merge", ...parts, "--html", file);
  assert.equal(r.code, 1, r.out);
  const { page, failures } = await open(file);
  assert.deepEqual(await visible(page), ["typo in the order id", "the order is found"]);
  assert.match(await page.textContent("header .counts"), /1 passed.*1 failed/);
  assert.deepEqual(failures, []);
  await page.close();
});

test("a conversation: who said what, each reply's tool calls before it", async () => {
  const suite = join(dir, "talk.dryfire.yaml");
  writeFileSync(suite, `version: 1
agent: {provider: script}
mocks:
  issue_refund: [{return: {refund_id: R-7}}]
cases:
  - name: a refund in three turns
    input: I want a refund.
    user: [My order is A-1., Thanks!]
    script:
      - text: What is your order number?
      - tool_calls: [{name: issue_refund, args: {order_id: A-1}}]
      - text: Refund R-7 is done.
      - text: Bye.
    expect:
      - output: {contains: welcome}
`);
  const file = join(dir, "talk.html");
  const r = run("run", suite, "--html", file);
  assert.equal(r.code, 1, r.out);
  const { page, failures } = await open(file);
  await page.click("#cases > .case > .head");
  await page.locator("#cases > .case > .body").waitFor();
  const who = await page.$$eval("#cases > .case > .body .turn > .who", (ws) => ws.map((w) => w.textContent));
  assert.deepEqual(who, ["user, turn 1", "agent, reply to turn 1 (model turn 1)", "user, turn 2", "agent, model turn 2: 1 tool call(s)",
    "agent, reply to turn 2 (model turn 3)", "user, turn 3", "agent, reply to turn 3 (model turn 4)"]);
  assert.match(await page.textContent("#cases > .case > .body"), /Refund R-7 is done\./);
  assert.deepEqual(failures, []);
  await page.close();
});

test("a drill: the case's input, the world's state changes against the initial state", async () => {
  const file = join(dir, "world.html");
  const r = run("run", "examples/world", "--html", file);
  assert.equal(r.code, 0, r.out);
  const { page, failures } = await open(file);
  const refund = page.locator("#cases > .case", { hasText: "refund a delivered order" }).first();
  await refund.locator("> .head").click();
  const body = refund.locator("> .body");
  await body.waitFor();
  assert.equal(await body.locator(".turn.user pre").first().textContent(), "Please refund order A-991.");
  const rows = await body.locator("table.diff tr").evaluateAll((trs) => trs.slice(1).map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.deepEqual(rows, [["added", "refunds.refunds", "", JSON.stringify({ "R-1": { amount: 120, at: "2026-01-01T09:00:02Z", order_id: "A-991" } }, null, 2)]]);
  assert.match(await body.textContent(), /final state/);
  // A drill that changed nothing says so.
  const none = page.locator("#cases > .case", { hasText: "the agent may not escalate tickets" });
  await none.locator("> .head").click();
  await none.locator("> .body").waitFor();
  assert.match(await none.locator("> .body").textContent(), /the final state is the initial state/);
  assert.deepEqual(failures, []);
  await page.close();
});

test("model faults and an isolated network, from offline suites", async (t) => {
  // A recorded case replayed with a declared fault: its first model
  // request is answered 529, the client sends it again.
  const faults = join(dir, "faults");
  mkdirSync(join(faults, "cassettes", "anthropic"), { recursive: true });
  copyFileSync(join(repo, "examples/providers/cassettes/anthropic/opening-hours-need-no-tool.json"), join(faults, "cassettes/anthropic/opening-hours-need-no-tool.json"));
  writeFileSync(join(faults, "anthropic.dryfire.yaml"), readFileSync(join(repo, "examples/providers/anthropic.dryfire.yaml"), "utf8")
    .replace("    input: When are you open?\n", "    input: When are you open?\n    model_faults:\n      - {request: 1, status: 529}\n"));
  // A program that tries a port past dryfire, in a network of its own.
  writeFileSync(join(faults, "net.dryfire.yaml"), `version: 1
agent:
  command: [python3, -c, "import socket\\ntry:\\n    socket.create_connection(('127.0.0.1', 9), timeout=2)\\nexcept OSError:\\n    pass\\nprint('tried')"]
  network: isolated
cases:
  - name: reaches past dryfire
    input: go
    expect:
      - output: {contains: tried}
`);
  const file = join(dir, "faults.html");
  const r = run("run", join(faults, "anthropic.dryfire.yaml"), join(faults, "net.dryfire.yaml"), "--filter", "opening|reaches", "--html", file);
  // Where no network namespace can be made, the isolated case errs
  // saying why (exit 3), and only the faults are seen.
  const isolated = !/agent\.network is isolated, but/.test(r.out);
  assert.ok(r.code === 1 || (!isolated && r.code === 3), r.out);
  const { page, failures } = await open(file);
  const opening = page.locator("#cases > .case", { hasText: "opening hours need no tool" });
  await opening.locator("> .head").click();
  const body = opening.locator("> .body");
  await body.waitFor();
  const table = (loc) => loc.evaluateAll((tables) => tables.map((tb) => [...tb.querySelectorAll("tr")].map((tr) => [...tr.children].map((td) => td.textContent))));
  const h3 = await body.locator("h3").allTextContents();
  assert.ok(h3.includes("model faults"), h3.join(", "));
  const ft = await table(body.locator("h3:text-is('model faults') + table"));
  assert.deepEqual(ft, [[["request", "api", "fault", "sent again"], ["1", "anthropic", "answered 529", "yes"]]]);
  if (!isolated) {
    t.diagnostic("no network namespace here: the network section is not tested: " + r.out);
  } else {
    const net = page.locator("#cases > .case", { hasText: "reaches past dryfire" });
    await net.locator("> .head").click();
    const nb = net.locator("> .body");
    await nb.waitFor();
    assert.deepEqual(await nb.locator("h3", { hasText: "network" }).allTextContents(), ["network (isolated)"]);
    const nt = await table(nb.locator("h3:text-is('network (isolated)') + table"));
    assert.deepEqual(nt, [[["kind", "address", "port", "name", "tries"], ["tcp", "127.0.0.1", "9", "", "1"]]]);
  }
  assert.deepEqual(failures, []);
  await page.close();
});

test("MCP: the agent's resource reads, and what a tool call asked its client", async () => {
  // An agent that speaks MCP 2026-07-28 with fetch: it reads a resource, and
  // calls a tool whose rule elicits without declaring the capability.
  const agent = join(dir, "mcp-agent.mjs");
  writeFileSync(agent, `const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" } };
async function rpc(method, name, params) {
  const r = await fetch(process.env.DRYFIRE_MCP_URL, { method: "POST", body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: meta } }),
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "mcp-method": method, "mcp-name": name } });
  return r.json();
}
await rpc("resources/read", "docs://policy", { uri: "docs://policy" });
const r = await rpc("tools/call", "book", { name: "book", arguments: { to: "Paris" } });
console.log(r.result.content[0].text);
`);
  const suite = join(dir, "mcp.dryfire.yaml");
  writeFileSync(suite, `version: 1
agent: {command: [node, ${JSON.stringify(agent)}]}
resources: [{uri: "docs://policy", text: Refunds within 30 days.}]
mocks:
  book: [{elicit: {message: Book it?}, return: booked}]
cases:
  - name: reads and books
    input: hi
    expect:
      - read: docs://policy
      - elicited: book
`);
  const file = join(dir, "mcp.html");
  const r = run("run", suite, "--html", file);
  assert.equal(r.code, 1, r.out);
  const { page, failures } = await open(file);
  await page.click("#cases > .case > .head");
  const body = page.locator("#cases > .case > .body");
  await body.waitFor();
  const rows = await body.locator("table.mcp tr").evaluateAll((trs) => trs.slice(1).map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.deepEqual(rows, [["resources/read", "docs://policy", "", "yes"]]);
  const text = await body.textContent();
  assert.match(text, /asked the MCP client: elicitation\/create/);
  assert.match(text, /"message": "Book it\?"/);
  assert.match(text, /no answer: the client does not declare the elicitation capability/);
  assert.deepEqual(failures, []);
  await page.close();
});

test("10,000 cases: written in at most 1 s, open in at most 2 s, still filterable", async () => {
  let yaml = "version: 1\nagent: {provider: script}\nmocks:\n  lookup: [{when: {n: 0}, return: {ok: true}}, {return: {ok: false}}]\ncases:\n";
  for (let i = 0; i < 10000; i++) {
    const fail = i % 50 === 7;
    yaml += `  - name: case ${i}\n    input: go\n    script:\n      - tool_calls: [{name: lookup, args: {n: ${fail ? 1 : 0}}}]\n      - text: done ${i}\n    expect: [{called: lookup}, {output: {contains: ${fail ? "never" : "done"}}}]\n`;
  }
  const suite = join(dir, "big.dryfire.yaml");
  writeFileSync(suite, yaml);
  const file = join(dir, "big.html");
  // What --html adds to the run, rendering and writing the page: the
  // fastest of three runs with it less the fastest of three without,
  // interleaved, so that a busy machine counts against neither.
  const without = { ms: Infinity }, withHTML = { ms: Infinity };
  for (let k = 0; k < 3; k++) {
    without.ms = Math.min(without.ms, run("run", suite).ms);
    const r = run("run", suite, "--html", file);
    assert.equal(r.code, 1, r.out);
    withHTML.ms = Math.min(withHTML.ms, r.ms);
  }
  const writeMS = Math.max(0, withHTML.ms - without.ms);
  const size = statSync(file).size;
  const { page, ms, failures } = await open(file);
  console.log(`10,000 cases: run ${without.ms.toFixed(0)} ms, with --html ${withHTML.ms.toFixed(0)} ms (the page, ${(size / 1e6).toFixed(1)} MB: ~${writeMS.toFixed(0)} ms); opened in ${ms.toFixed(0)} ms`);
  assert.ok(writeMS <= 1000, `the HTML took ${writeMS} ms to write`);
  assert.ok(ms <= 2000, `the report took ${ms} ms to open`);
  assert.match(await page.textContent("#shown"), /^10000 of 10000 cases$/);

  const t0 = performance.now();
  await page.fill("#text", "case 9957");
  await page.waitForFunction(() => document.querySelectorAll("#cases > .case").length === 1);
  const filterMS = performance.now() - t0;
  assert.deepEqual(await visible(page), ["case 9957"]);
  await page.click("#cases > .case > .head");
  await page.locator("#cases > .case > .body").waitFor();
  assert.match(await page.textContent("#cases > .case > .body"), /expected output to contain "never"; output was "done 9957"/);
  await page.fill("#text", "");
  await page.click('#status button[data-status="failed"]');
  await page.waitForFunction(() => /^200 of 10000 cases$/.test(document.querySelector("#shown").textContent));
  console.log(`filtered 10,000 cases by text in ${filterMS.toFixed(0)} ms`);
  assert.deepEqual(failures, []);
  await page.close();
});
