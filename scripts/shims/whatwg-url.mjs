// Stands in for whatwg-url in the bundle: node-fetch only reaches for it where Node has no URL of its own.
export const URL = globalThis.URL;
export const URLSearchParams = globalThis.URLSearchParams;
