// Stands in for `bindings` in the bundle. better-sqlite3 asks it for its addon, which it finds from the
// caller's file on the stack: in the bundle that is a chunk, far from the package. The addon is where
// the package's own build put it: build/Release, or build/Debug for a debug build from source.
const { createRequire } = require("node:module");

module.exports = (name) => {
  const require = createRequire(__filename);
  try {
    return require(`better-sqlite3/build/Release/${name}`);
  } catch (err) {
    if (err?.code !== "MODULE_NOT_FOUND") throw err;
    return require(`better-sqlite3/build/Debug/${name}`);
  }
};
