// Shared by the engine tests: the fixture project and its operations.
import { fileURLToPath } from "node:url";

/** The directory of the fixture suites (records.dryfire.yaml and other/). */
export const cwd = fileURLToPath(new URL("./fixtures", import.meta.url));
export const suite = "records.dryfire.yaml";

export const SAVE = { packageId: "record-store", operationId: "records.save" } as const;
export const GET = { packageId: "record-store", operationId: "records.get" } as const;
export const SEND = { packageId: "mail", operationId: "mail.send" } as const;

/** A rule of the product note: the first save of record-1 is BUSY. */
export const busyOnce = {
  id: "busy-once",
  operation: SAVE,
  when: { arguments: { id: "record-1" } },
  times: 1,
  outcome: { kind: "error" as const, code: "BUSY", message: "Try again", retryable: true },
};
