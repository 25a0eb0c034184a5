// A support agent on the Vercel AI SDK (ai 6, OpenAI Responses API): the
// model decides; its tools call the shop's clients in orders-client.ts.
// Nothing here knows about dryfire.
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, tool } from "ai";
import { z } from "zod";
import { issueRefund, lookupOrder, openTicket } from "./orders-client.js";

export const SYSTEM =
  "You are the shop's support agent. Look an order up before acting. Refund only delivered orders, " +
  "for at most their total; for anything else open a ticket for a human.";

export interface ModelSettings {
  /** The OpenAI API's base URL, with /v1 (default: OPENAI_BASE_URL). */
  baseURL?: string;
  /** The key (default: OPENAI_API_KEY). */
  apiKey?: string;
}

const tools = {
  lookup_order: tool({
    description: "Look up an order by its id.",
    inputSchema: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) => lookupOrder(order_id),
  }),
  issue_refund: tool({
    description: "Refund a delivered order.",
    inputSchema: z.object({ order_id: z.string(), amount: z.number() }),
    // One logical refund per order: its request id is the retry key.
    execute: async ({ order_id, amount }) => issueRefund(order_id, amount, `refund-${order_id}`),
  }),
  open_ticket: tool({
    description: "Open a support ticket for a human.",
    inputSchema: z.object({ subject: z.string() }),
    execute: async ({ subject }) => openTicket(subject),
  }),
};

export async function runSupportAgent(task: string, settings: ModelSettings = {}): Promise<string> {
  const openai = createOpenAI({ baseURL: settings.baseURL ?? process.env.OPENAI_BASE_URL, apiKey: settings.apiKey });
  const result = await generateText({
    model: openai("gpt-4.1-mini"),
    system: SYSTEM,
    prompt: task,
    tools,
    stopWhen: stepCountIs(6),
    // Send the whole conversation each turn (no items stored at OpenAI).
    providerOptions: { openai: { store: false } },
  });
  return result.text;
}
