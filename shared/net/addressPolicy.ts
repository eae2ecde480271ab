import { BlockList, isIP } from 'node:net';

/**
 * Which addresses the service may call on a customer's behalf (outbound webhooks today): not
 * loopback, private, link-local (cloud metadata at 169.254.169.254 included), CGNAT, multicast,
 * reserved or unspecified, in IPv4 or IPv6, and IPv4 written inside IPv6 (::ffff:10.0.0.1,
 * NAT64 64:ff9b::/96) judged as the IPv4 it carries. A user-given URL must never make the server
 * reach its own network (SSRF). Checked on the address a name resolves to, at connection time
 * (shared/net/guardedRequest.ts), not only on the URL.
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // CGNAT (RFC 6598)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard-only
  ['2001:db8::', 32], // documentation
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, …)
  ['fc00::', 7], // unique local (private)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
  ['fd00:ec2::254', 128], // AWS metadata over IPv6 (inside fc00::/7 already; named for the reader)
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** The IPv4 address an IPv6 one carries (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96), if any. */
function embeddedIpv4(ip: string): string | null {
  const lower = ip.toLowerCase();
  const dotted = /^(?:::ffff:|::|64:ff9b::)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const hi = Number.parseInt(hex[1], 16);
    const lo = Number.parseInt(hex[2], 16);
    return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
  }
  return null;
}

/** Why an IP address may not be called, or null when it is a public unicast address. Anything that is no IP is refused. */
export function refusedAddressReason(ip: string): string | null {
  const family = isIP(ip);
  if (family === 0) return `${ip} is not an IP address`;
  if (family === 6) {
    const v4 = embeddedIpv4(ip);
    if (v4) return refusedAddressReason(v4) && `${ip} carries the non-public IPv4 address ${v4}`;
    return blocked.check(ip, 'ipv6') ? `${ip} is not a public address (loopback, private, link-local, multicast or reserved)` : null;
  }
  return blocked.check(ip, 'ipv4') ? `${ip} is not a public address (loopback, private, link-local, CGNAT, multicast or reserved)` : null;
}

/** `host:port` of a URL as the allow list names it (default ports filled in, IPv6 without brackets). */
export function hostPort(url: URL): string {
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return `${url.hostname.replace(/^\[|\]$/g, '').toLowerCase()}:${port}`;
}
