// @firedrill/sdk/testing is dryfire/testing: the same module, so one drill state.
export * from "dryfire/testing";
