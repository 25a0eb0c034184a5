"use strict";
// Draws the dryfire report embedded in this page (#report): the summary,
// the filters and the cases, a page of them at a time; a case's details
// are drawn when it is opened.
(function () {
  const R = JSON.parse(document.getElementById("report").textContent);
  const cases = R.cases || [];
  const PAGE = 200;
  const esc = (s) => String(s == null ? "" : s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
  // A judge check's verdict: the judge's reasoning, its score, the
  // cassette its call is recorded in.
  const judged = (j) => `<div class="judge"><b>judge ${esc(j.provider)} ${esc(j.model)}: ${j.pass ? "pass" : "fail"}${j.score == null ? "" : `, score ${esc(j.score)}`}</b><blockquote>${esc(j.reasoning)}</blockquote><small>recorded in <code>${esc(j.cassette)}</code></small></div>`;
  const json = (v) => { try { return JSON.stringify(v, null, 2); } catch (e) { return String(v); } };
  const el = (tag, cls, html) => { const e = document.createElement(tag); if (cls) e.className = cls; if (html != null) e.innerHTML = html; return e; };
  const hay = cases.map((c) => (c.suite + "\n" + c.name + "\n" + (c.input || "") + "\n" + c.reason + "\n" + c.output).toLowerCase());
  // Tokens, and who spent them when a judge or a simulated user did too.
  const tokens = (u, by) => {
    if (!u || !(u.input_tokens || u.output_tokens)) return "";
    let s = `${u.input_tokens} input, ${u.output_tokens} output tokens`;
    if (by) {
      const parts = [["agent", by.agent], ["judge", by.judge], ["user", by.user]].filter(([, v]) => v && (v.input_tokens || v.output_tokens));
      s += ` (${parts.map(([k, v]) => `${k} ${v.input_tokens}/${v.output_tokens}`).join(", ")})`;
    }
    return s;
  };
  const suites = [...new Set(cases.map((c) => c.suite))];
  const state = { status: "all", suite: "", text: "", shown: 0, matches: [] };

  // Summary and filters.
  const s = R.summary || {};
  const top = document.getElementById("top");
  const counts = ["passed", "failed", "error", "skipped"].map((k) => `<span class="${k}">${s[k] || 0} ${k}</span>`).join("");
  const flaky = s.flaky ? `<span class="tag">${s.flaky} flaky</span>` : "";
  const usage = tokens(s.usage, s.usage_by_role) ? `<span class="meta">${tokens(s.usage, s.usage_by_role)}</span>` : "";
  top.innerHTML = `<h1>dryfire report</h1><div class="counts">${counts}${flaky} ${usage}</div>
<div class="filters" role="search">
  <span id="status">${["all", "passed", "failed", "error", "skipped", "flaky"].map((k) => `<button type="button" data-status="${k}" aria-pressed="${k === "all"}">${k}</button>`).join(" ")}</span>
  <select id="suite" aria-label="suite"><option value="">every suite (${suites.length})</option>${suites.map((x) => `<option>${esc(x)}</option>`).join("")}</select>
  <input id="text" type="search" placeholder="filter by name, input, reason or output" aria-label="text filter">
  <span id="shown"></span>
</div>`;
  // Coverage (run --coverage): every suite's parts with their calls, the
  // table drawn when first opened.
  if (R.coverage) {
    const cv = R.coverage;
    const item = (it) => `<tr class="${it.calls ? "used" : "never"}"><td><code>${esc(it.at)}</code></td><td>${esc(it.kind)}</td><td>${esc(it.name)}${it.entry == null ? "" : ` entry ${it.entry + 1}`}${it.case ? ` <small>case ${esc(it.case)}</small>` : ""}</td><td>${it.calls ? esc(it.calls) : "never"}</td></tr>`;
    const d = el("details", "coverage", `<summary>coverage: ${esc(cv.exercised)} of ${esc(cv.total)} exercised (${esc(cv.percent)}%)</summary>`);
    d.addEventListener("toggle", () => {
      if (!d.open || d.dataset.drawn) return;
      d.dataset.drawn = "1";
      d.insertAdjacentHTML("beforeend", (cv.suites || []).map((su) => `<h3>${esc(su.suite)}: ${esc(su.exercised)} of ${esc(su.total)} (${esc(su.percent)}%)</h3><table><tr><th>at</th><th>kind</th><th>part</th><th>calls</th></tr>${(su.items || []).map(item).join("")}</table>`).join(""));
    });
    top.appendChild(d);
  }
  top.querySelectorAll("#status button").forEach((b) => b.addEventListener("click", () => {
    state.status = b.dataset.status;
    top.querySelectorAll("#status button").forEach((o) => o.setAttribute("aria-pressed", String(o === b)));
    apply();
  }));
  document.getElementById("suite").addEventListener("change", (e) => { state.suite = e.target.value; apply(); });
  let timer = 0;
  document.getElementById("text").addEventListener("input", (e) => {
    clearTimeout(timer);
    timer = setTimeout(() => { state.text = e.target.value.toLowerCase(); apply(); }, 80);
  });

  const main = document.getElementById("cases");
  const more = el("div", "more");
  const matches = (c, i) =>
    (state.status === "all" || (state.status === "flaky" ? c.trials && c.trials.flaky : c.status === state.status)) &&
    (!state.suite || c.suite === state.suite) &&
    (!state.text || hay[i].includes(state.text));

  function apply() {
    state.matches = [];
    for (let i = 0; i < cases.length; i++) if (matches(cases[i], i)) state.matches.push(i);
    main.textContent = "";
    state.shown = 0;
    page();
  }

  function page() {
    const end = Math.min(state.matches.length, state.shown + PAGE);
    const frag = document.createDocumentFragment();
    for (let k = state.shown; k < end; k++) frag.appendChild(row(state.matches[k]));
    state.shown = end;
    main.appendChild(frag);
    document.getElementById("shown").textContent = `${state.matches.length} of ${cases.length} cases`;
    more.remove();
    if (state.shown < state.matches.length) {
      more.innerHTML = `<button type="button">show ${Math.min(PAGE, state.matches.length - state.shown)} more of ${state.matches.length - state.shown}</button>`;
      more.firstChild.addEventListener("click", page);
      main.appendChild(more);
    }
  }

  function row(i) {
    const c = cases[i];
    const d = el("section", "case");
    d.dataset.index = i;
    d.dataset.status = c.status;
    const t = c.trials ? ` <span class="tag">${c.trials.passed}/${c.trials.n} trials${c.trials.flaky ? ", flaky" : ""}</span>` : "";
    const head = el("div", "head", `<span class="badge ${esc(c.status)}">${esc(c.status)}</span><span class="suite">${esc(c.suite)}</span><span class="name">${esc(c.name)}</span>${t}<span class="reason">${esc(c.reason)}</span>`);
    head.setAttribute("role", "button");
    head.setAttribute("aria-expanded", "false");
    head.tabIndex = 0;
    const toggle = () => {
      let body = d.querySelector(":scope > .body");
      if (body) { body.remove(); head.setAttribute("aria-expanded", "false"); return; }
      body = el("div", "body");
      details(body, c);
      d.appendChild(body);
      head.setAttribute("aria-expanded", "true");
    };
    head.addEventListener("click", toggle);
    head.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(); } });
    d.appendChild(head);
    return d;
  }

  function details(body, c) {
    const parts = [];
    const meta = [];
    if (c.reason) meta.push(`<div><b>${c.status === "error" ? "error" : "reason"}:</b> ${esc(c.reason)}</div>`);
    meta.push(`<div class="meta">${c.turns} turn(s) · ${c.duration_ms} ms${tokens(c.usage, c.usage_by_role) ? ` · ${tokens(c.usage, c.usage_by_role)}` : ""}${c.cassette ? ` · cassette <code>${esc(c.cassette)}</code>` : ""}${c.seed != null ? ` · seed ${esc(c.seed)}` : ""}${c.build_hash ? ` · build <code>${esc(c.build_hash.slice(0, 19))}</code>` : ""}</div>`);
    parts.push(meta.join(""));
    if (c.trials) parts.push(trials(c.trials));
    if (c.checks && c.checks.length) {
      parts.push(`<h3>checks</h3><table><tr><th></th><th>check</th><th>at</th><th>expected vs got</th></tr>${c.checks.map((k) =>
        `<tr class="check"><td class="${k.passed ? "ok" : "no"}">${k.passed ? "✓" : "✗"}</td><td><code>${esc(k.check)}</code></td><td><code>${esc(k.at)}</code></td><td>${esc(k.message)}${k.judge ? judged(k.judge) : ""}</td></tr>`).join("")}</table>`);
    }
    parts.push(`<h3>transcript</h3>${transcript(c)}`);
    if (c.replay) parts.push(`<h3>cassette differences</h3><pre>${esc(c.replay)}</pre>`);
    if (c.model_faults && c.model_faults.length) {
      parts.push(`<h3>model faults</h3><table><tr><th>request</th><th>api</th><th>fault</th><th>sent again</th></tr>${c.model_faults.map((f) =>
        `<tr><td>${esc(f.request)}</td><td>${esc(f.api)}</td><td><code>${esc(f.fault)}</code></td><td class="${f.retried ? "ok" : "no"}">${f.retried ? "yes" : "no"}</td></tr>`).join("")}</table>`);
    }
    if (c.script && c.script.length) {
      parts.push(`<h3>script</h3><table><tr><th>request</th><th>turn</th><th>api</th><th>last message</th></tr>${c.script.map((x) =>
        `<tr><td>${esc(x.request)}</td><td class="${x.refused ? "no" : "ok"}">${x.turn ? esc(x.turn) : "none"}${x.refused ? " (refused)" : ""}</td><td>${esc(x.api)}${x.streamed ? " (streamed)" : ""}</td><td><code>${esc(x.last_message)}</code></td></tr>`).join("")}</table>`);
    }
    if (c.mcp && c.mcp.length) {
      parts.push(`<h3>MCP requests</h3><table class="mcp"><tr><th>method</th><th>uri or name</th><th>arguments</th><th>answered</th></tr>${c.mcp.map((u) =>
        `<tr><td><code>${esc(u.method)}</code></td><td><code>${esc([u.uri, u.name].filter(Boolean).join(" "))}</code></td><td>${u.arguments ? `<pre>${esc(json(u.arguments))}</pre>` : ""}</td><td class="${u.error ? "no" : "ok"}">${u.error ? esc(u.error) : "yes"}</td></tr>`).join("")}</table>`);
    }
    if (c.network) {
      const a = c.network.attempts || [];
      parts.push(`<h3>network (${esc(c.network.mode)})</h3>${a.length ? `<table><tr><th>kind</th><th>address</th><th>port</th><th>name</th><th>tries</th></tr>${a.map((x) =>
        `<tr><td>${esc(x.kind)}</td><td><code>${esc(x.address)}</code></td><td>${esc(x.port)}</td><td>${esc(x.name)}</td><td>${esc(x.count)}</td></tr>`).join("")}</table>` : '<div class="meta">nothing was tried past dryfire</div>'}`);
    }
    if (c.evidence && c.evidence.length) {
      parts.push(`<h3>world evidence</h3><table><tr><th>#</th><th>time</th><th>actor</th><th>operation</th><th>arguments</th><th>outcome</th><th>result</th></tr>${c.evidence.map((e) =>
        `<tr><td>${esc(e.seq)}</td><td>${esc(e.time)}</td><td>${esc(e.actor)}</td><td><code>${esc(e.operation)}</code>${e.fault ? ` <span class="miss">fault ${esc(e.fault)}</span>` : ""}${e.override ? ` <span class="tag">override ${esc(e.override.id)}</span>` : ""}</td><td><pre>${esc(json(e.arguments))}</pre></td><td class="${e.is_error ? "no" : "ok"}">${esc(e.outcome)}</td><td><pre>${esc(json(e.result))}</pre></td></tr>`).join("")}</table>`);
    }
    if (c.events && c.events.length) parts.push(`<h3>events</h3><pre>${esc(json(c.events))}</pre>`);
    if (c.state) {
      if (c.initial_state) {
        const ch = [];
        diff(c.initial_state, c.state, "", ch);
        const sign = { "+": "added", "-": "removed", "~": "changed" };
        parts.push(`<h3>state changes</h3>${ch.length ? `<table class="diff"><tr><th></th><th>path</th><th>initial</th><th>final</th></tr>${ch.slice(0, MAXDIFF).map((d) =>
          `<tr class="${sign[d.op]}"><td>${sign[d.op]}</td><td><code>${esc(d.path)}</code></td><td>${d.op === "+" ? "" : `<pre>${esc(json(d.before))}</pre>`}</td><td>${d.op === "-" ? "" : `<pre>${esc(json(d.after))}</pre>`}</td></tr>`).join("")}</table>${ch.length > MAXDIFF ? `<div class="meta">… and ${ch.length - MAXDIFF} more change(s)</div>` : ""}` : '<div class="meta">the final state is the initial state</div>'}`);
        parts.push(`<details><summary>initial state</summary><pre>${esc(json(c.initial_state))}</pre></details>`);
      }
      parts.push(`<h3>final state</h3><pre>${esc(json(c.state))}</pre>`);
    }
    if (c.workspace) {
      const w = c.workspace;
      parts.push(`<h3>workspace</h3><div class="meta">${(w.changes || []).length + (w.more_changes || 0)} change(s) against <code>${esc(w.template)}</code>${w.kept ? `, kept at <code>${esc(w.kept)}</code>` : ""}</div>${(w.changes || []).map((ch) =>
        `<div><code>${esc(ch.change)} ${esc(ch.path)}</code>${ch.diff ? `<pre>${esc(ch.diff)}</pre>` : ""}</div>`).join("")}`);
    }
    if (c.stderr) parts.push(`<h3>stderr of the agent</h3><pre>${esc(c.stderr)}</pre>`);
    if (c.notes && c.notes.length) parts.push(`<h3>notes</h3>${c.notes.map((n) => `<div>${esc(n)}</div>`).join("")}`);
    body.innerHTML = parts.join("");
    body.querySelectorAll(".trial > .head").forEach((h) => h.addEventListener("click", () => {
      const t = h.parentNode;
      let b = t.querySelector(":scope > .body");
      if (b) { b.remove(); return; }
      b = el("div", "body");
      details(b, c.trials.runs[Number(t.dataset.trial)]);
      t.appendChild(b);
    }));
  }

  function trials(t) {
    const ks = t.pass_at_k.map((_, k) => `<th>k=${k + 1}</th>`).join("");
    return `<h3>trials</h3><div>${t.passed} of ${t.n} passed (threshold ${t.threshold})${t.flaky ? ' <span class="tag">flaky</span>' : ""}; the details below are trial ${t.shown}'s.</div>
<table><tr><th></th>${ks}</tr><tr><th>pass@k</th>${t.pass_at_k.map((v) => `<td>${v}</td>`).join("")}</tr><tr><th>pass^k</th>${t.pass_hat_k.map((v) => `<td>${v}</td>`).join("")}</tr></table>
${t.runs.map((r, k) => `<div class="case trial" data-trial="${k}"><div class="head"><span class="badge ${esc(r.status)}">${esc(r.status)}</span><span class="name">trial ${k + 1}</span><span class="reason">${esc(r.reason)}</span></div></div>`).join("")}`;
  }

  function transcript(c) {
    const turns = new Map();
    for (const tc of c.tool_calls || []) {
      if (!turns.has(tc.turn)) turns.set(tc.turn, []);
      turns.get(tc.turn).push(tc);
    }
    const sorted = [...turns.entries()].sort((a, b) => a[0] - b[0]);
    const toolTurn = ([turn, calls]) => `<div class="turn"><div class="who">${c.conversation ? "agent, model turn" : "assistant, turn"} ${esc(turn)}: ${calls.length} tool call(s)</div>${calls.map(call).join("")}</div>`;
    if (c.conversation) {
      // Who said what: each user message, the tool calls made for the
      // reply (model turns up to the reply's), the reply.
      let out = "", i = 0;
      for (const m of c.conversation) {
        if (m.role === "user") {
          out += `<div class="turn user"><div class="who">user, turn ${esc(m.turn)}</div><pre>${esc(m.text)}</pre></div>`;
          continue;
        }
        while (i < sorted.length && sorted[i][0] <= m.model_turn) out += toolTurn(sorted[i++]);
        out += `<div class="turn"><div class="who">agent, reply to turn ${esc(m.turn)}${m.model_turn ? ` (model turn ${esc(m.model_turn)})` : ""}</div>${m.text ? `<pre>${esc(m.text)}</pre>` : '<div class="meta">(no text)</div>'}</div>`;
      }
      while (i < sorted.length) out += toolTurn(sorted[i++]);
      return out;
    }
    let out = `<div class="turn user"><div class="who">user, input</div>${c.input ? `<pre>${esc(c.input)}</pre>` : '<div class="meta">(none)</div>'}</div>`;
    for (const [turn, calls] of sorted) {
      out += `<div class="turn"><div class="who">assistant, turn ${esc(turn)}: ${calls.length} tool call(s)</div>${calls.map(call).join("")}</div>`;
    }
    out += `<div class="turn"><div class="who">assistant, final answer${c.turns ? ` (turn ${c.turns})` : ""}</div>${c.output ? `<pre>${esc(c.output)}</pre>` : '<div class="meta">(none)</div>'}</div>`;
    return out;
  }

  // diff lists what changed from a to b, path by path: "+" added, "-"
  // removed, "~" changed (objects key by key, lists item by item).
  const MAXDIFF = 500;
  function diff(a, b, path, out) {
    if (out.length > MAXDIFF) return;
    const obj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
    const at = (k) => /^[A-Za-z_][A-Za-z0-9_-]*$/.test(k) ? (path ? `${path}.${k}` : k) : `${path}[${JSON.stringify(k)}]`;
    if (obj(a) && obj(b)) {
      for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
        if (!(k in a)) out.push({ op: "+", path: at(k), after: b[k] });
        else if (!(k in b)) out.push({ op: "-", path: at(k), before: a[k] });
        else diff(a[k], b[k], at(k), out);
      }
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < Math.max(a.length, b.length); i++) {
        const p = `${path}[${i}]`;
        if (i >= a.length) out.push({ op: "+", path: p, after: b[i] });
        else if (i >= b.length) out.push({ op: "-", path: p, before: a[i] });
        else diff(a[i], b[i], p, out);
      }
      return;
    }
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ op: "~", path: path || "(the whole state)", before: a, after: b });
  }

  function call(tc) {
    const bad = tc.outcome === "unmatched" || tc.is_error;
    let answered = tc.where === "own" ? "run by the agent itself" : tc.rule ? `answered by the rule at <code>${esc(tc.rule)}</code> (${esc(tc.outcome)})` : `<span class="miss">${esc(tc.outcome)}</span>`;
    let miss = "";
    const n = tc.near_miss;
    if (n) {
      miss = `<div class="miss">near miss: ${n.rule ? `rule <code>${esc(n.rule)}</code>` : esc(n.tool)}${n.path ? ` differs at <code>${esc(n.path)}</code>: expected ${esc(n.expected)}, got ${esc(n.got)}` : ""}${n.reason ? ` (${esc(n.reason)})` : ""}${n.note ? ` ${esc(n.note)}` : ""}</div>`;
    }
    let asked = "";
    const q = tc.asked;
    if (q) {
      asked = `<div class="who">asked the MCP client: <code>${esc(q.method)}</code></div><pre>${esc(json(q.request))}</pre>` +
        (q.error ? `<div class="miss">no answer: ${esc(q.error)}</div>` : `<div class="who">the client answered</div><pre>${esc(json(q.answer))}</pre>`);
    }
    return `<div class="call${bad ? " bad" : ""}"><code>${esc(tc.tool)}</code> <span class="meta">${esc(tc.id)}</span> — ${answered}<pre>${esc(json(tc.args))}</pre>${miss}${asked}<div class="who">result${tc.is_error ? " (error)" : ""}</div><pre>${esc(tc.result)}</pre></div>`;
  }

  apply();
  document.body.dataset.ready = "true";
})();
