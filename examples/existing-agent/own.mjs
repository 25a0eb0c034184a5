// A ten-line agent on the Vercel AI SDK whose two tools are its own functions: dryfire serves
// neither, reads each call off the model wire and checks it (scripted.dryfire.yaml).
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, tool } from "ai";
import { z } from "zod";
let task = "";
for await (const chunk of process.stdin) task += chunk;
const tools = {
  lookup_order: tool({ inputSchema: z.object({ order_id: z.string() }), execute: async ({ order_id }) => ({ order_id, total: 120 }) }),
  check_stock: tool({ inputSchema: z.object({ sku: z.string() }), execute: async ({ sku }) => ({ sku, in_stock: 3 }) }),
};
const model = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL })("gpt-4.1-mini");
const { text } = await generateText({ model, prompt: task, tools, stopWhen: stepCountIs(5), providerOptions: { openai: { store: false } } });
console.log(text);
