// A small support agent on the Vercel AI SDK: the kind of program a team
// already has, tested by dryfire as it is. It takes its tools from an MCP
// server and its model from the OpenAI (or Anthropic) API, reads the task
// on stdin and prints its answer. Nothing in it knows about dryfire: run
// by `dryfire run` (agent.command in support.dryfire.yaml), the variables
// it reads point at dryfire's mocks and recording endpoint instead.
//
//	node --import tsx agent.ts [--provider openai|anthropic] [--stream] [--system TEXT] < task.txt
import { createAnthropic } from '@ai-sdk/anthropic';
import { createMCPClient } from '@ai-sdk/mcp';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, type LanguageModel } from 'ai';

const args = process.argv.slice(2);
const provider = args.includes('--provider') ? args[args.indexOf('--provider') + 1] : 'openai';
const stream = args.includes('--stream');
// The system prompt: its own policy, unless the deployment gives another
// (../world runs it against the support-desk world with that desk's policy).
const SYSTEM = args.includes('--system')
  ? args[args.indexOf('--system') + 1]
  : 'You are a support agent. Look orders up before acting, and refund only gold orders.';

function model(): LanguageModel {
  if (provider === 'anthropic') {
    // Messages API; the key from ANTHROPIC_API_KEY, the base URL from
    // ANTHROPIC_BASE_URL.
    return createAnthropic({ baseURL: process.env.ANTHROPIC_BASE_URL })('claude-sonnet-4-5');
  }
  // Responses API (the AI SDK's default for OpenAI); the key from
  // OPENAI_API_KEY, the base URL (with /v1) from OPENAI_BASE_URL.
  return createOpenAI({ baseURL: process.env.OPENAI_BASE_URL })('gpt-4.1-mini');
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}

const task = await readStdin();
const mcp = await createMCPClient({
  transport: { type: 'http', url: process.env.DRYFIRE_MCP_URL ?? 'http://127.0.0.1:7777/mcp' },
});
try {
  const options = {
    model: model(),
    system: SYSTEM,
    prompt: task,
    tools: await mcp.tools(),
    stopWhen: stepCountIs(6),
    // Send the whole conversation each turn; keep nothing at OpenAI
    // between calls (with the default, store: true, the AI SDK sends
    // references to items the API stored instead).
    providerOptions: { openai: { store: false } },
  };
  if (stream) {
    const result = streamText({
      ...options,
      onError: ({ error }) => {
        console.error(error);
        process.exitCode = 1;
      },
    });
    console.log(await result.text);
  } else {
    const result = await generateText(options);
    console.log(result.text);
  }
} finally {
  await mcp.close();
}
