/** Webhook URLs must be http(s) and, unless WEBHOOK_ALLOW_PRIVATE is set, not point into a private network. */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** True for loopback, private, link-local, unique-local, unspecified and other non-public addresses. */
export function isPrivateAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed.range() !== 'unicast';
}

/**
 * Why a URL whose host name resolves to a private address is refused, or null. A name that does not
 * resolve (yet, or from here) is accepted: every delivery checks the address it connects to anyway.
 */
export async function resolvedAddressProblem(raw: string, allowPrivate: boolean): Promise<string | null> {
  if (allowPrivate) return null;
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
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
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost') || isPrivateAddress(host)) {
    return 'webhook_url points to a private, loopback or link-local address (set WEBHOOK_ALLOW_PRIVATE=true for local development)';
  }
  return null;
}
