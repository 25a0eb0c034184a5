// The existing agent: it reads an instruction, saves the record it names
// through records-client, and retries a save the service calls retryable.
// (A real agent asks a model what to do; the framework example does.)
import { saveRecord } from "./records-client";
import { RecordsError } from "./records-errors";

const ATTEMPTS = 3;

export async function runAgent(instruction: string): Promise<string> {
  const m = /(record-\d+) with the text (.+?)\.?$/i.exec(instruction);
  if (m === null) return "I do not know what to save.";
  const [, id, text] = m as unknown as [string, string, string];
  for (let attempt = 1; ; attempt++) {
    try {
      const saved = await saveRecord(id, text);
      return `Saved ${saved.id} (version ${saved.version}).`;
    } catch (err) {
      if (!(err instanceof RecordsError) || !err.retryable || attempt === ATTEMPTS) throw err;
    }
  }
}
