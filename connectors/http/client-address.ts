import ipaddr from "ipaddr.js";

/** Whether `address` is one of `proxies` (IPs or CIDRs); IPv4-mapped IPv6 peers count as their IPv4. */
export function isTrustedProxy(address: string, proxies: readonly string[]): boolean {
  if (proxies.length === 0 || !ipaddr.isValid(address)) return false;
  let ip = ipaddr.parse(address);
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  return proxies.some((entry) => {
    try {
      const [range, bits] = entry.includes("/") ? ipaddr.parseCIDR(entry) : [ipaddr.parse(entry), entry.includes(":") ? 128 : 32];
      return ip.kind() === range.kind() && ip.match(range, bits);
    } catch {
      return false;
    }
  });
}

/**
 * The client a request comes from: the peer, unless the peer is a trusted proxy; then X-Forwarded-For is
 * read from its end (each proxy appends the address it saw), skipping trusted proxies, and the first
 * address that is not one is the client. What the client itself wrote at the front is never believed.
 */
export function clientAddress(peer: string, forwarded: string | undefined, proxies: readonly string[]): string {
  if (!forwarded || !isTrustedProxy(peer, proxies)) return peer;
  const hops = forwarded
    .split(",")
    .map((h) => h.trim())
    .filter(Boolean);
  let client = peer;
  for (let i = hops.length - 1; i >= 0 && isTrustedProxy(client, proxies); i--) {
    const hop = hops[i] as string;
    if (!ipaddr.isValid(hop)) break;
    client = hop;
  }
  return client;
}
