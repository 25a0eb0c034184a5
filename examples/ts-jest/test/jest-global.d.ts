// Jest puts `jest` in every test module's scope. Calling it by that bare
// name (not as an import) is what lets Jest hoist jest.mock above the
// imports in the compiled CommonJS.
declare const jest: (typeof import("@jest/globals"))["jest"];
