// @firedrill/sdk/testing is dryfire/testing: the same module, so one drill state.
module.exports = require("dryfire/testing");
