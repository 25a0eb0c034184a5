// Package conformance checks dryfire's wire against the official
// definitions, installed pinned from npm at test time (e2e/conformance):
// every request body the built-in loop sends for each provider and every
// answer and stream chunk the fake servers give is written out as a
// TypeScript object literal of the SDK's own type (openai,
// @anthropic-ai/sdk) and type-checked with tsc --strict, whose excess
// property checks catch unknown keys; every MCP message dryfire serve
// answers, in each protocol era, is parsed with the MCP TypeScript SDKs'
// zod schemas. A disagreement fails with the JSON path and the official
// rule. The tests also write docs/compatibility.md, so the page says what
// was checked, against which versions, and what is not covered.
//
// The package has no code outside its tests: it exists for them.
package conformance
