/** What the record service answers on a failed call. */
export class RecordsError extends Error {
  constructor(
    readonly code: string,
    readonly retryable: boolean,
    message: string,
  ) {
    super(message);
    this.name = "RecordsError";
  }
}
