// Stands in for `bindings` in the bundle. better-sqlite3 asks it for its addon, which it finds from the
// caller's file on the stack: in the bundle that is a chunk, far from the package. The addon is where
// the package's own build put it.
const { createRequire } = require("node:module");

module.exports = (name) => createRequire(__filename)(`better-sqlite3/build/Release/${name}`);
