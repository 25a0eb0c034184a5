// @firedrill/sdk is dryfire: the same module, so one drill state.
module.exports = require("dryfire");
