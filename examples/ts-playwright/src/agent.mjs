// The agent behind the web UI: a plain tool loop over the OpenAI Chat
// Completions API (fetch, no SDK), saving records through the record
// store's REST API. It reads its endpoints from env, as in production:
// OPENAI_BASE_URL, OPENAI_API_KEY and RECORDS_URL.

const tools = [
  {
    type: "function",
    function: {
      name: "save_record",
      description: "Save a record.",
      parameters: {
        type: "object",
        properties: { id: { type: "string" }, text: { type: "string" } },
        required: ["id", "text"],
      },
    },
  },
];

/** The record store's error: its status and code, from the service's own error body. */
export class RecordsError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   */
  constructor(status, code, message) {
    super(`the record store answered ${status} ${code}: ${message}`);
    this.name = "RecordsError";
    this.status = status;
    this.code = code;
  }
}

/**
 * POSTs one record to the store; throws RecordsError on an error answer.
 * @param {Record<string, string | undefined>} env
 * @param {{id: string, text: string}} record
 * @returns {Promise<{id: string, version: number}>}
 */
export async function saveRecord(env, record) {
  const res = await fetch(`${env.RECORDS_URL}/records`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": `save-${record.id}` },
    body: JSON.stringify(record),
  });
  const body = await res.json();
  if (!res.ok) throw new RecordsError(res.status, String(body.error), String(body.message));
  return body;
}

/**
 * Reads one record back from the store.
 * @param {Record<string, string | undefined>} env
 * @param {string} id
 * @returns {Promise<{id: string, text: string, version: number}>}
 */
export async function getRecord(env, id) {
  const res = await fetch(`${env.RECORDS_URL}/records/${encodeURIComponent(id)}`);
  const body = await res.json();
  if (!res.ok) throw new RecordsError(res.status, String(body.error), String(body.message));
  return body;
}

/**
 * @param {Record<string, string | undefined>} env
 * @param {unknown[]} messages
 */
async function complete(env, messages) {
  const res = await fetch(`${env.OPENAI_BASE_URL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${env.OPENAI_API_KEY}` },
    body: JSON.stringify({ model: "gpt-4o-mini", messages, tools }),
  });
  if (!res.ok) throw new Error(`the model answered ${res.status}: ${(await res.text()).slice(0, 500)}`);
  const body = await res.json();
  return body.choices[0].message;
}

/**
 * Runs the agent on one request; answers its reply and the ids it saved.
 * @param {string} request
 * @param {Record<string, string | undefined>} env
 * @returns {Promise<{answer: string, saved: string[]}>}
 */
export async function runAgent(request, env) {
  /** @type {unknown[]} */
  const messages = [
    { role: "system", content: "You save records for the user with save_record." },
    { role: "user", content: request },
  ];
  /** @type {string[]} */
  const saved = [];
  for (let turn = 0; turn < 8; turn++) {
    const message = await complete(env, messages);
    messages.push(message);
    if (!message.tool_calls?.length) return { answer: message.content ?? "", saved };
    for (const call of message.tool_calls) {
      if (call.function.name !== "save_record") throw new Error(`unknown tool ${call.function.name}`);
      const out = await saveRecord(env, JSON.parse(call.function.arguments));
      saved.push(out.id);
      messages.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(out) });
    }
  }
  throw new Error("the agent gave no answer in 8 turns");
}
