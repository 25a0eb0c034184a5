// @firedrill/sdk is dryfire: the same module, so one drill state.
export * from "dryfire";
