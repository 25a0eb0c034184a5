// Validates MCP messages (a JSON array on standard input, written by
// internal/test/conformance) with the MCP TypeScript SDKs' own zod
// schemas, and prints the disagreements as a JSON array: for 2025-06-18
// and 2025-11-25, @modelcontextprotocol/sdk (1.x, which implements the
// protocol up to 2025-11-25), also flagging keys its schemas do not
// declare; for 2026-07-28, @modelcontextprotocol/core (2.x).
import { readFileSync } from 'node:fs';
import * as legacy from '@modelcontextprotocol/sdk/types.js';
import * as modern from '@modelcontextprotocol/core';

const pkg = (name) => JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url))).version;
const sdks = {
  legacy: { types: legacy, name: `@modelcontextprotocol/sdk ${pkg('@modelcontextprotocol/sdk')}`, strict: true },
  modern: { types: modern, name: `@modelcontextprotocol/core ${pkg('@modelcontextprotocol/core')}`, strict: false },
};

const results = {
  'initialize': 'InitializeResultSchema',
  'server/discover': 'DiscoverResultSchema',
  'ping': 'EmptyResultSchema',
  'logging/setLevel': 'EmptyResultSchema',
  'tools/list': 'ListToolsResultSchema',
  'tools/call': 'CallToolResultSchema',
  'resources/list': 'ListResourcesResultSchema',
  'resources/templates/list': 'ListResourceTemplatesResultSchema',
  'prompts/list': 'ListPromptsResultSchema',
};

// Keys whose values are open by the protocol (metadata, JSON Schemas,
// structured tool output, free log data): nothing inside is checked for
// undeclared keys.
const open = new Set(['_meta', 'inputSchema', 'outputSchema', 'structuredContent', 'data', 'experimental']);

const key = (path, k) => /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`;

// undeclared lists the keys of v that schema s does not declare, walking
// the schema's definition (zod 4) alongside the value.
function undeclared(s, v, path, out) {
  const d = s?._zod?.def;
  if (!d) return;
  switch (d.type) {
    case 'optional': case 'nullable': case 'default': case 'prefault': case 'readonly': case 'catch': case 'nonoptional':
      if (v !== undefined && v !== null) undeclared(d.innerType, v, path, out);
      return;
    case 'lazy': return undeclared(d.getter(), v, path, out);
    case 'pipe': return undeclared(d.in, v, path, out);
    case 'array':
      if (Array.isArray(v)) v.forEach((x, i) => undeclared(d.element, x, `${path}[${i}]`, out));
      return;
    case 'union': {
      let best = null;
      for (const o of d.options) {
        if (!o.safeParse(v).success) continue;
        const found = [];
        undeclared(o, v, path, found);
        if (best === null || found.length < best.length) best = found;
      }
      if (best) out.push(...best);
      return;
    }
    case 'record':
      if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) undeclared(d.valueType, x, key(path, k), out);
      return;
    case 'object':
      if (!v || typeof v !== 'object' || Array.isArray(v)) return;
      for (const [k, x] of Object.entries(v)) {
        if (open.has(k)) continue;
        if (k in d.shape) undeclared(d.shape[k], x, key(path, k), out);
        else out.push({ path: key(path, k), message: `"${k}" is not declared by the schema` });
      }
      return;
  }
}

// check parses value with schema; strict (for the message's own schema,
// not the JSON-RPC envelope) also flags undeclared keys.
function check(schema, schemaName, sdk, value, path, failures, index, strict = true) {
  const rule = `${sdk.name} ${schemaName}`;
  const r = schema.safeParse(value);
  if (!r.success) {
    for (const issue of r.error.issues) {
      let p = path;
      for (const k of issue.path) p = typeof k === 'number' ? `${p}[${k}]` : key(p, k);
      failures.push({ index, path: p, rule, message: issue.message });
    }
    return;
  }
  if (strict && sdk.strict) {
    const found = [];
    undeclared(schema, value, path, found);
    for (const f of found) failures.push({ index, path: f.path, rule, message: f.message });
  }
}

const messages = JSON.parse(readFileSync(0, 'utf8'));
const failures = [];
messages.forEach((m, index) => {
  const sdk = m.era >= '2026-07-28' ? sdks.modern : sdks.legacy;
  const t = sdk.types;
  const msg = m.message;
  if (m.from === 'client') {
    if (m.offSpec) {
      check('id' in msg ? t.JSONRPCRequestSchema : t.JSONRPCNotificationSchema, 'JSONRPC message', sdk, msg, '$', failures, index, false);
    } else if ('id' in msg) {
      check(t.JSONRPCRequestSchema, 'JSONRPCRequestSchema', sdk, msg, '$', failures, index, false);
      check(t.ClientRequestSchema, 'ClientRequestSchema', sdk, { method: msg.method, params: msg.params }, '$', failures, index);
    } else {
      check(t.JSONRPCNotificationSchema, 'JSONRPCNotificationSchema', sdk, msg, '$', failures, index, false);
      check(t.ClientNotificationSchema, 'ClientNotificationSchema', sdk, { method: msg.method, params: msg.params }, '$', failures, index);
    }
    return;
  }
  if (!('id' in msg)) {
    check(t.JSONRPCNotificationSchema, 'JSONRPCNotificationSchema', sdk, msg, '$', failures, index, false);
    check(t.ServerNotificationSchema, 'ServerNotificationSchema', sdk, { method: msg.method, params: msg.params }, '$', failures, index);
    return;
  }
  if ('error' in msg) {
    check(t.JSONRPCErrorResponseSchema, 'JSONRPCErrorResponseSchema', sdk, msg, '$', failures, index);
    return;
  }
  check(t.JSONRPCResultResponseSchema, 'JSONRPCResultResponseSchema', sdk, msg, '$', failures, index, false);
  const name = results[m.method];
  if (!name || !t[name]) {
    failures.push({ index, path: '$.result', rule: sdk.name, message: `no result schema for ${m.method}` });
    return;
  }
  check(t[name], name, sdk, msg.result, '$.result', failures, index);
});
process.stdout.write(JSON.stringify(failures));
