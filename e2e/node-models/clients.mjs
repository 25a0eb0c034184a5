// Runs small tool-calling agents on the official OpenAI (and its
// AzureOpenAI), Anthropic, Gemini (@google/genai), Ollama and Bedrock
// (@aws-sdk/client-bedrock-runtime) Node SDKs, streaming and not, and prints what they got as JSON: run once
// against dryfire's fake APIs directly, once through dryfire's model
// endpoint while it records, once through it replaying with the fakes
// stopped, the three outputs must be the same (internal/modelserver's
// TestNodeClients does that).
//
// DRYFIRE_TEST_URLS is a JSON object: scenario name → base URL, in the
// shape each SDK wants (OpenAI's ends in /v1, Anthropic's, Gemini's,
// Azure OpenAI's, Ollama's and Bedrock's are the root).
import OpenAI, { AzureOpenAI } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { Ollama } from 'ollama';
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';

const urls = JSON.parse(process.env.DRYFIRE_TEST_URLS);

// The tools every agent has, and what they answer.
const results = {
  lookup_order: (args) => JSON.stringify({ order_id: args.order_id, tier: 'gold', total: 120.5 }),
  issue_refund: (args) => `refund R-1 issued for ${args.order_id}`,
};
const schemas = {
  lookup_order: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
  issue_refund: { type: 'object', properties: { order_id: { type: 'string' }, amount: { type: 'number' } } },
};
const system = 'You are a support agent.';
const question = 'Please refund order A-991.';
const maxTurns = 6;

function openai(name) {
  if (name.startsWith('azure-')) return azure(name);
  return new OpenAI({ baseURL: urls[name], apiKey: 'dryfire-no-key', maxRetries: 0 });
}
// Azure OpenAI: the endpoint is the resource's root; the model is the
// deployment (chat at /openai/deployments/MODEL/…, Responses at
// /openai/responses), the key in api-key, the version in ?api-version=.
function azure(name) {
  const apiVersion = name.includes('responses') ? '2025-04-01-preview' : '2024-10-21';
  return new AzureOpenAI({ endpoint: urls[name], apiKey: 'dryfire-no-key', apiVersion, maxRetries: 0 });
}
function anthropic(name) {
  return new Anthropic({ baseURL: urls[name], apiKey: 'dryfire-no-key', maxRetries: 0 });
}

// record is what a scenario reports: per turn, the text, the tool calls and
// the usage, plus the ids the API gave (they must come back the same).
function turnRecord(id, text, calls, usage, extra = {}) {
  return { id, text, calls: calls.map((c) => ({ id: c.id, name: c.name, args: c.args })), usage, ...extra };
}

const chatTools = Object.keys(schemas).map((n) => ({ type: 'function', function: { name: n, parameters: schemas[n] } }));

async function chatJSON(name = 'chat-json') {
  const client = openai(name);
  const messages = [{ role: 'system', content: system }, { role: 'user', content: question }];
  const turns = [];
  for (let i = 0; i < maxTurns; i++) {
    const c = await client.chat.completions.create({ model: 'gpt-test', messages, tools: chatTools });
    const msg = c.choices[0].message;
    const calls = (msg.tool_calls ?? []).map((t) => ({ id: t.id, name: t.function.name, args: t.function.arguments }));
    turns.push(turnRecord(c.id, msg.content, calls, c.usage, { finish: c.choices[0].finish_reason }));
    if (calls.length === 0) break;
    messages.push(msg);
    for (const call of calls) {
      messages.push({ role: 'tool', tool_call_id: call.id, content: results[call.name](JSON.parse(call.args)) });
    }
  }
  return turns;
}

async function chatStream(name = 'chat-stream') {
  const client = openai(name);
  const messages = [{ role: 'system', content: system }, { role: 'user', content: question }];
  const turns = [];
  for (let i = 0; i < maxTurns; i++) {
    const stream = await client.chat.completions.create({
      model: 'gpt-test', messages, tools: chatTools, stream: true, stream_options: { include_usage: true },
    });
    let id, text = null, finish, usage, chunks = 0;
    const calls = [];
    for await (const chunk of stream) {
      chunks++;
      id = chunk.id;
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      if (typeof choice.delta.content === 'string' && choice.delta.content !== '') text = (text ?? '') + choice.delta.content;
      for (const tc of choice.delta.tool_calls ?? []) {
        if (!calls[tc.index]) calls[tc.index] = { id: tc.id, name: tc.function.name, args: '' };
        calls[tc.index].args += tc.function.arguments ?? '';
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
    turns.push(turnRecord(id, text, calls, usage, { finish, chunks }));
    if (calls.length === 0) break;
    messages.push({
      role: 'assistant', content: text,
      tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args } })),
    });
    for (const call of calls) {
      messages.push({ role: 'tool', tool_call_id: call.id, content: results[call.name](JSON.parse(call.args)) });
    }
  }
  return turns;
}

const responsesTools = Object.keys(schemas).map((n) => ({ type: 'function', name: n, parameters: schemas[n], strict: false }));

function responsesTurn(r, extra = {}) {
  const calls = r.output.filter((o) => o.type === 'function_call').map((o) => ({ id: o.call_id, name: o.name, args: o.arguments }));
  return turnRecord(r.id, r.output_text || null, calls, r.usage, { status: r.status, ...extra });
}

async function responses(name, mode) {
  const client = openai(name);
  const input = [{ role: 'user', content: question }];
  const turns = [];
  for (let i = 0; i < maxTurns; i++) {
    const params = { model: 'gpt-test', instructions: system, input, tools: responsesTools, store: false };
    let r;
    if (mode === 'helper') {
      // The SDK's helper assembles the final response from the events.
      const stream = client.responses.stream(params);
      let text = '';
      stream.on('response.output_text.delta', (e) => { text += e.delta; });
      r = await stream.finalResponse();
      turns.push(responsesTurn(r, { streamedText: text }));
    } else if (mode === 'raw') {
      const events = await client.responses.create({ ...params, stream: true });
      const types = [];
      let deltas = '';
      for await (const ev of events) {
        types.push(ev.type);
        if (ev.type === 'response.output_text.delta') deltas += ev.delta;
        if (ev.type === 'response.completed') r = ev.response;
      }
      // The SDK's own accumulation of the same kind of stream.
      turns.push(responsesTurn(r, { deltas, events: types.length, first: types[0], last: types.at(-1) }));
    } else {
      r = await client.responses.create(params);
      turns.push(responsesTurn(r));
    }
    const calls = r.output.filter((o) => o.type === 'function_call');
    if (calls.length === 0) break;
    input.push(...r.output);
    for (const c of calls) {
      input.push({ type: 'function_call_output', call_id: c.call_id, output: results[c.name](JSON.parse(c.arguments)) });
    }
  }
  return turns;
}

const anthropicTools = Object.keys(schemas).map((n) => ({ name: n, input_schema: schemas[n] }));

function anthropicTurn(m, extra = {}) {
  const text = m.content.filter((b) => b.type === 'text').map((b) => b.text).join('') || null;
  const calls = m.content.filter((b) => b.type === 'tool_use').map((b) => ({ id: b.id, name: b.name, args: JSON.stringify(b.input) }));
  return turnRecord(m.id, text, calls, m.usage, { stop: m.stop_reason, ...extra });
}

async function anthropicLoop(name, mode) {
  const client = anthropic(name);
  const messages = [{ role: 'user', content: question }];
  const turns = [];
  for (let i = 0; i < maxTurns; i++) {
    const params = { model: 'claude-test', max_tokens: 1024, system, messages, tools: anthropicTools };
    let m;
    if (mode === 'json') {
      m = await client.messages.create(params);
      turns.push(anthropicTurn(m));
    } else if (mode === 'raw') {
      // stream: true, iterating the raw events.
      const events = await client.messages.create({ ...params, stream: true });
      const types = [];
      const blocks = [];
      let start, delta;
      for await (const ev of events) {
        types.push(ev.type);
        if (ev.type === 'message_start') start = ev.message;
        if (ev.type === 'content_block_start') blocks[ev.index] = { ...ev.content_block, partial: '' };
        if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') blocks[ev.index].text += ev.delta.text;
        if (ev.type === 'content_block_delta' && ev.delta.type === 'input_json_delta') blocks[ev.index].partial += ev.delta.partial_json;
        if (ev.type === 'message_delta') delta = ev;
      }
      const content = blocks.map(({ partial, ...b }) => (b.type === 'tool_use' ? { ...b, input: JSON.parse(partial || '{}') } : b));
      m = { ...start, content, stop_reason: delta.delta.stop_reason, usage: { ...start.usage, output_tokens: delta.usage.output_tokens } };
      turns.push(anthropicTurn(m, { events: types.length, first: types[0], last: types.at(-1) }));
    } else {
      // The SDK's MessageStream helper assembles the message.
      const stream = client.messages.stream(params);
      let text = '';
      stream.on('text', (t) => { text += t; });
      m = await stream.finalMessage();
      turns.push(anthropicTurn(m, { streamedText: text }));
    }
    const uses = m.content.filter((b) => b.type === 'tool_use');
    if (uses.length === 0) break;
    messages.push({ role: 'assistant', content: m.content.map(({ partial, ...b }) => b) });
    messages.push({
      role: 'user',
      content: uses.map((u) => ({ type: 'tool_result', tool_use_id: u.id, content: results[u.name](u.input) })),
    });
  }
  return turns;
}

// Gemini: function declarations in config.tools, the model's content
// appended as it came (its function calls), then one user content with a
// functionResponse per call.
const geminiTools = [{ functionDeclarations: Object.keys(schemas).map((n) => ({ name: n, parametersJsonSchema: schemas[n] })) }];

async function geminiLoop(name, mode) {
  const ai = new GoogleGenAI({ apiKey: 'dryfire-no-key', httpOptions: { baseUrl: urls[name] } });
  const contents = [{ role: 'user', parts: [{ text: question }] }];
  const turns = [];
  for (let i = 0; i < maxTurns; i++) {
    const params = { model: 'gemini-test', contents, config: { systemInstruction: system, tools: geminiTools } };
    let text = null, calls = [], usage, id, finish, parts = [], chunks = 0;
    const take = (r) => {
      chunks++;
      id = r.responseId;
      if (r.usageMetadata) usage = r.usageMetadata;
      const cand = r.candidates?.[0];
      if (cand?.finishReason) finish = cand.finishReason;
      for (const p of cand?.content?.parts ?? []) {
        parts.push(p);
        if (typeof p.text === 'string' && p.text !== '') text = (text ?? '') + p.text;
        if (p.functionCall) calls.push({ id: p.functionCall.id ?? null, name: p.functionCall.name, args: JSON.stringify(p.functionCall.args) });
      }
    };
    if (mode === 'json') {
      const r = await ai.models.generateContent(params);
      take(r);
      // The SDK's own getters agree with the parts.
      if ((r.functionCalls ?? []).length !== calls.length) throw new Error('functionCalls disagrees with the parts');
    } else {
      for await (const r of await ai.models.generateContentStream(params)) take(r);
    }
    turns.push(turnRecord(id, text, calls, usage, { finish, ...(mode === 'json' ? {} : { chunks }) }));
    if (calls.length === 0) break;
    contents.push({ role: 'model', parts });
    contents.push({
      role: 'user',
      parts: calls.map((c) => ({ functionResponse: { name: c.name, response: { result: results[c.name](JSON.parse(c.args)) } } })),
    });
  }
  return turns;
}

// Ollama's own API: the host given (the JS client reads no variable), the
// calls without ids, each result named by tool_name.
async function ollamaLoop(name, stream) {
  const client = new Ollama({ host: urls[name] });
  const tools = Object.keys(schemas).map((n) => ({ type: 'function', function: { name: n, parameters: schemas[n] } }));
  const messages = [{ role: 'system', content: system }, { role: 'user', content: question }];
  const turns = [];
  for (let i = 0; i < maxTurns; i++) {
    let text = '', calls = [], last, lines = 0;
    const take = (r) => {
      lines++;
      last = r;
      text += r.message.content ?? '';
      for (const c of r.message.tool_calls ?? []) calls.push(c);
    };
    if (stream) {
      for await (const r of await client.chat({ model: 'qwen-test', messages, tools, stream: true })) take(r);
    } else {
      take(await client.chat({ model: 'qwen-test', messages, tools }));
    }
    const usage = { in: last.prompt_eval_count, out: last.eval_count };
    turns.push(turnRecord(null, text, calls.map((c) => ({ id: null, name: c.function.name, args: JSON.stringify(c.function.arguments) })), usage,
      { done: last.done_reason, ...(stream ? { lines } : {}) }));
    if (calls.length === 0) break;
    messages.push({ role: 'assistant', content: text, tool_calls: calls });
    for (const c of calls) messages.push({ role: 'tool', tool_name: c.function.name, content: results[c.function.name](c.function.arguments) });
  }
  return turns;
}

// Bedrock's Converse: the endpoint given (an http:// one, which the AWS
// SDK speaks HTTP/2 to, without TLS), dummy credentials it signs with, a
// user message of toolResult blocks after each assistant turn.
async function bedrockLoop(name, stream) {
  const client = new BedrockRuntimeClient({ region: 'us-east-1', endpoint: urls[name], maxAttempts: 1,
    credentials: { accessKeyId: 'dryfire-no-key', secretAccessKey: 'dryfire-no-key' } });
  const toolConfig = { tools: Object.keys(schemas).map((n) => ({ toolSpec: { name: n, inputSchema: { json: schemas[n] } } })) };
  const messages = [{ role: 'user', content: [{ text: question }] }];
  const turns = [];
  for (let i = 0; i < maxTurns; i++) {
    const input = { modelId: 'anthropic.claude-test-v1:0', system: [{ text: system }], messages, toolConfig };
    let content = [], stop, usage, events = 0;
    if (stream) {
      const r = await client.send(new ConverseStreamCommand(input));
      const inputs = {};
      for await (const ev of r.stream) {
        events++;
        if (ev.contentBlockStart?.start?.toolUse) content[ev.contentBlockStart.contentBlockIndex] = { toolUse: { ...ev.contentBlockStart.start.toolUse } };
        if (ev.contentBlockDelta) {
          const k = ev.contentBlockDelta.contentBlockIndex, d = ev.contentBlockDelta.delta;
          if (d.text !== undefined) content[k] = { text: (content[k]?.text ?? '') + d.text };
          if (d.toolUse) inputs[k] = (inputs[k] ?? '') + d.toolUse.input;
        }
        if (ev.messageStop) stop = ev.messageStop.stopReason;
        if (ev.metadata) usage = ev.metadata.usage;
      }
      for (const [k, v] of Object.entries(inputs)) content[k].toolUse.input = JSON.parse(v);
    } else {
      const r = await client.send(new ConverseCommand(input));
      content = r.output.message.content;
      stop = r.stopReason;
      usage = r.usage;
    }
    const text = content.filter((b) => b.text !== undefined).map((b) => b.text).join('') || null;
    const uses = content.filter((b) => b.toolUse).map((b) => b.toolUse);
    turns.push(turnRecord(null, text, uses.map((u) => ({ id: u.toolUseId, name: u.name, args: JSON.stringify(u.input) })), usage,
      { stop, ...(stream ? { events } : {}) }));
    if (uses.length === 0) break;
    messages.push({ role: 'assistant', content });
    messages.push({ role: 'user', content: uses.map((u) => ({ toolResult: { toolUseId: u.toolUseId, content: [{ text: results[u.name](u.input) }] } })) });
  }
  return turns;
}

// A request the recording does not hold: the SDK (with its default
// retries) must give up at once with the endpoint's error.
async function mismatch(name, kind) {
  const params = { model: 'gpt-test', messages: [{ role: 'user', content: 'Something else entirely.' }] };
  try {
    if (kind === 'anthropic') {
      await new Anthropic({ baseURL: urls[name], apiKey: 'dryfire-no-key' }).messages.create({ ...params, model: 'claude-test', max_tokens: 10 });
    } else {
      await new OpenAI({ baseURL: urls[name], apiKey: 'dryfire-no-key' }).chat.completions.create(params);
    }
  } catch (e) {
    return { class: e.constructor.name, status: e.status, type: e.type ?? e.error?.error?.type, code: e.code ?? null, param: e.param ?? null, message: e.message };
  }
  throw new Error('the request was answered');
}

const scenarios = {
  'mismatch-openai': () => mismatch('mismatch-openai', 'openai'),
  'mismatch-anthropic': () => mismatch('mismatch-anthropic', 'anthropic'),
  'chat-json': chatJSON,
  'chat-stream': chatStream,
  'responses-json': () => responses('responses-json', 'json'),
  'responses-stream': () => responses('responses-stream', 'raw'),
  'responses-helper': () => responses('responses-helper', 'helper'),
  'anthropic-json': () => anthropicLoop('anthropic-json', 'json'),
  'anthropic-stream': () => anthropicLoop('anthropic-stream', 'raw'),
  'anthropic-helper': () => anthropicLoop('anthropic-helper', 'helper'),
  'azure-chat-json': () => chatJSON('azure-chat-json'),
  'azure-chat-stream': () => chatStream('azure-chat-stream'),
  'azure-responses-stream': () => responses('azure-responses-stream', 'raw'),
  'gemini-json': () => geminiLoop('gemini-json', 'json'),
  'gemini-stream': () => geminiLoop('gemini-stream', 'stream'),
  'ollama-json': () => ollamaLoop('ollama-json', false),
  'ollama-stream': () => ollamaLoop('ollama-stream', true),
  'bedrock-json': () => bedrockLoop('bedrock-json', false),
  'bedrock-stream': () => bedrockLoop('bedrock-stream', true),
};

const out = {};
let failed = false;
for (const [name, run] of Object.entries(scenarios)) {
  if (!(name in urls)) continue;
  try {
    out[name] = await run();
  } catch (e) {
    failed = true;
    out[name] = { error: `${e.constructor.name}: status ${e.status ?? '-'}: ${e.message}` };
  }
}
process.stdout.write(JSON.stringify(out, null, 1) + '\n');
process.exitCode = failed ? 1 : 0;
