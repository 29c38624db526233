import { request as httpRequest } from "node:http";

/**
 * node:http's or node:https's `request` for a URL. node:https brings TLS and OpenSSL's set-up (7 MB of RSS
 * in a bare Node 24, ~2 MB of the daemon's idle RSS there), which a daemon that talks to a local Ollama
 * over http never needs, so it is loaded at the first https URL.
 */
export function requestFor(url: URL): typeof httpRequest {
  return url.protocol === "https:" ? process.getBuiltinModule("node:https").request : httpRequest;
}
