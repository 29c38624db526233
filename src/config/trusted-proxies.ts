import { isIP } from "node:net";
import { z } from "./zod.js";

/** An address, or an address with a prefix length that fits its family. */
const validEntry = (s: string): boolean => {
  const [address = "", bits, ...rest] = s.split("/");
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
};

/**
 * `connectors.http.trusted_proxies`: the addresses (IPs or CIDRs) of reverse proxies whose X-Forwarded-For
 * hermes believes. From any other peer the header is the client's own word and is ignored, so rotating it
 * cannot dodge the limit on failed logins. Empty (the default): no proxy is trusted.
 */
export const trustedProxies = () =>
  z.array(z.string().refine(validEntry, "expected an IP address or a CIDR such as 127.0.0.1 or 10.0.0.0/8")).default([]);
