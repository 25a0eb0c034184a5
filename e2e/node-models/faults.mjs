// An agent on the official OpenAI and Anthropic Node SDKs, with their
// default retries, run as an agent.command program by internal/runner's
// TestModelFaultsNodeClients: four turns of one conversation (JSON,
// stream, stream, JSON) on the API its input names. dryfire answers some
// of its requests with declared faults (model_faults); the SDKs retry
// error statuses and dropped connections themselves. A stream cut after
// its first events is not retried by an SDK (the answer had begun), so
// the agent tries such a turn once more itself, as an agent must. It
// prints each turn's text and what went wrong on the way.
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';

const api = process.env.DRYFIRE_INPUT;
const log = [];
const texts = [];

async function again(turn, fn) {
  try {
    return await fn();
  } catch (e) {
    log.push(`turn ${turn}: ${e.constructor.name} (${e.message}); tried again`);
    return await fn();
  }
}

async function openai() {
  const client = new OpenAI(); // OPENAI_BASE_URL and OPENAI_API_KEY from dryfire
  const messages = [{ role: 'user', content: api }];
  for (let turn = 1; turn <= 4; turn++) {
    const stream = turn === 2 || turn === 3;
    const text = await again(turn, async () => {
      if (!stream) {
        const c = await client.chat.completions.create({ model: 'gpt-test', messages });
        return c.choices[0].message.content;
      }
      const s = await client.chat.completions.create({ model: 'gpt-test', messages, stream: true });
      let t = '';
      for await (const chunk of s) t += chunk.choices[0]?.delta?.content ?? '';
      return t;
    });
    texts.push(text);
    messages.push({ role: 'assistant', content: text }, { role: 'user', content: 'go on' });
  }
}

async function anthropic() {
  const client = new Anthropic(); // ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY from dryfire
  const messages = [{ role: 'user', content: api }];
  for (let turn = 1; turn <= 4; turn++) {
    const stream = turn === 2 || turn === 3;
    const text = await again(turn, async () => {
      if (!stream) {
        const m = await client.messages.create({ model: 'claude-test', max_tokens: 100, messages });
        return m.content.map((b) => b.text).join('');
      }
      const m = await client.messages.stream({ model: 'claude-test', max_tokens: 100, messages }).finalMessage();
      return m.content.map((b) => b.text).join('');
    });
    texts.push(text);
    messages.push({ role: 'assistant', content: text }, { role: 'user', content: 'go on' });
  }
}

await (api === 'anthropic' ? anthropic() : openai());
console.log(JSON.stringify({ texts, log }));
