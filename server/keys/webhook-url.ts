/** Webhook URLs must be http(s) and, unless WEBHOOK_ALLOW_PRIVATE is set, not point into a private network. */
import { lookup as dnsLookup, LookupAddress, LookupAllOptions, LookupOneOptions } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** True for loopback, private, link-local, unique-local, unspecified and other non-public addresses. */
export function isPrivateAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  return parsed.kind() === 'ipv4' ? parsed.range() !== 'unicast' : isPrivateIPv6(parsed as ipaddr.IPv6);
}

const NAT64_WELL_KNOWN_PREFIX = ipaddr.parseCIDR('64:ff9b::/96');
/** The only IPv6 block IANA allocates for global unicast; ipaddr.js calls everything it has no name for `unicast`. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/**
 * An IPv6 address is judged by where its packets end up:
 * - ::ffff:a.b.c.d (IPv4-mapped) reaches a.b.c.d through the host's own IPv4 stack, and
 *   ::ffff:0:a.b.c.d (RFC 6145) and 64:ff9b::a.b.c.d (NAT64's well-known prefix, RFC 6052) reach it
 *   through a translator: judged as that IPv4 address. A public one is a real receiver: a DNS64
 *   resolver hands such addresses out for IPv4-only hosts.
 * - Every other named range is refused whole: 64:ff9b:1::/48 (RFC 8215, local-use NAT64: where the
 *   IPv4 address sits is the local network's choice), 6to4 2002::/16 and Teredo 2001::/32 (deprecated
 *   tunnels whose relays deliver to the embedded IPv4 address, private ones included), site-local
 *   fec0::/10 (deprecated private scope), unique-local, link-local, loopback, multicast, discard,
 *   documentation, benchmarking, AMT, AS112 and ORCHID: none is where a receiver is published.
 * - An address ipaddr.js calls `unicast` but outside 2000::/3 is refused: IETF-reserved space, in
 *   particular ::/96 (IPv4-compatible, deprecated by RFC 4291), which stacks that still honour it
 *   route to the embedded IPv4 address, so ::127.0.0.1 would be the loopback.
 */
function isPrivateIPv6(address: ipaddr.IPv6): boolean {
  const range = address.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145' || address.match(NAT64_WELL_KNOWN_PREFIX)) {
    return isPrivateAddress(ipaddr.fromByteArray(address.toByteArray().slice(12)).toString());
  }
  return range !== 'unicast' || !address.match(GLOBAL_UNICAST);
}

/**
 * The host of `url` as it is judged, whatever its spelling. The WHATWG URL parser has already lower-cased
 * it, decoded percent-escapes, mapped full-width and other Unicode forms through IDNA (to punycode), and
 * rewritten IPv4 shorthand (127.1, 0x7f.1, 2130706433) and IPv6 (::ffff:7f00:1) to canonical
 * addresses. Left are the brackets of an IPv6 literal and trailing dots: `localhost.` is the same
 * name as `localhost` (the dot is the DNS root), and resolvers ignore a repeated one too.
 */
export function judgedHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '');
}

/** RFC 6761: `localhost` and every name under it are the loopback, whatever a resolver says. */
function isLoopbackName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/**
 * Why the host of `url` is refused before any lookup: a loopback name, or an address literal in a
 * private range. The same judgement at registration and when a delivery connects.
 */
export function privateHostProblem(url: URL): string | null {
  const host = judgedHost(url);
  if (isLoopbackName(host)) return `${host} is a loopback name, always a private address`;
  if (isIP(host) && isPrivateAddress(host)) return `${host} is a private address`;
  return null;
}

/**
 * Why a URL whose host name resolves to a private address is refused, or null. A name that does not
 * resolve (yet, or from here) is accepted: every delivery checks the address it connects to anyway.
 */
export async function resolvedAddressProblem(raw: string, allowPrivate: boolean): Promise<string | null> {
  if (allowPrivate) return null;
  const host = judgedHost(new URL(raw));
  if (isIP(host)) return null;
  const addresses = await lookup(host, { all: true }).catch(() => []);
  const blocked = addresses.find((a) => isPrivateAddress(a.address));
  return blocked ? `webhook_url resolves to the private address ${blocked.address} (set WEBHOOK_ALLOW_PRIVATE=true for local development)` : null;
}

/** Why the URL is refused, or null when it is acceptable. Host names are checked again when resolved. */
export function webhookUrlProblem(raw: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'webhook_url must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'webhook_url must be an http or https URL';
  if (url.username || url.password) return 'webhook_url must not carry credentials';
  if (allowPrivate) return null;
  if (privateHostProblem(url)) {
    return 'webhook_url points to a private, loopback or link-local address (set WEBHOOK_ALLOW_PRIVATE=true for local development)';
  }
  return null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * dns.lookup that refuses a name if any of its addresses is private (unless allowed): given to the
 * agents that connect (webhook deliveries, connected stores), so DNS rebinding cannot reach a private network.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const blocked = !allowPrivate && addresses.find((a) => isPrivateAddress(a.address));
      if (blocked) {
        const refusal: NodeJS.ErrnoException = new Error(`${hostname} resolves to the private address ${blocked.address}`);
        refusal.code = 'EPRIVATEADDRESS';
        return callback(refusal, []);
      }
      if ((options as LookupAllOptions).all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}
