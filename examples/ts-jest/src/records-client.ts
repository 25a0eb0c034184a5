// The production client of the record store: one HTTP call to the real
// service. The agent imports it; the tests replace it, so it never runs
// there.
import { RecordsError } from "./records-errors";

export interface SavedRecord {
  id: string;
  version: number;
}

export async function saveRecord(id: string, text: string): Promise<SavedRecord> {
  const base = process.env.RECORDS_URL;
  if (base === undefined) throw new Error("records-client: RECORDS_URL is not set");
  const res = await fetch(`${base}/records/${encodeURIComponent(id)}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text }),
  });
  if (!res.ok) {
    const e = (await res.json()) as { code: string; retryable: boolean; message: string };
    throw new RecordsError(e.code, e.retryable, e.message);
  }
  return (await res.json()) as SavedRecord;
}
