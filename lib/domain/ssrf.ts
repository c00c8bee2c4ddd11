/**
 * Checker URLs are called by Sluice from inside the user's account, so they
 * must not reach private networks (SSRF). The rule (SPEC §4): https, and no
 * address that is private, loopback, link-local or otherwise not public. The
 * local runtime also allows http on loopback, so a laptop producer can be its
 * own checker; private and link-local addresses stay refused there too.
 */
import { BlockList, isIP } from 'node:net';
import { InvalidArgumentError } from './errors.js';

export interface CheckerPolicy {
  /** Local runtime: http and loopback addresses are allowed. */
  allowLoopback: boolean;
}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

const forbidden = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 96], // unspecified, and IPv4-compatible (deprecated, embeds IPv4)
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT, embeds IPv4)
  ['64:ff9b::', 96], // NAT64 (embeds IPv4)
  ['64:ff9b:1::', 48], // NAT64 local use (RFC 8215: a site's own translators)
  ['2001::', 32], // Teredo (embeds IPv4)
  ['2002::', 16], // 6to4 (embeds IPv4)
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, RFC 3879; still routed inside some networks)
  ['ff00::', 8], // multicast
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv6');
}

/** Why an address may not be called, or undefined when it may. */
export function addressProblem(address: string, policy: CheckerPolicy): string | undefined {
  let ip = address.replace(/^\[|\]$/g, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped?.[1]) ip = mapped[1];
  const family = isIP(ip);
  if (family === 0) return `'${address}' is not an IP address`;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (loopback.check(ip, type)) return policy.allowLoopback ? undefined : `${ip} is a loopback address`;
  if (forbidden.check(ip, type)) return `${ip} is a private, link-local or reserved address`;
  return undefined;
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** Checks the shape of a checker URL (scheme, credentials, literal addresses); DNS comes after. */
export function checkerUrlProblem(text: string, policy: CheckerPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a URL';
  }
  if (url.username || url.password) return 'must not carry credentials';
  const host = url.hostname;
  const isLoopbackName = LOOPBACK_NAMES.has(host) || host.endsWith('.localhost');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowLoopback && isLoopbackName)) {
    return policy.allowLoopback ? 'must be https (http only on loopback in the local runtime)' : 'must be https';
  }
  if (isLoopbackName && !policy.allowLoopback) return 'must not point to loopback';
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0) return addressProblem(host, policy);
  return undefined;
}

export class UnsafeCheckerUrlError extends InvalidArgumentError {}

export function assertCheckerUrl(text: string, policy: CheckerPolicy): void {
  const problem = checkerUrlProblem(text, policy);
  if (problem) {
    throw new UnsafeCheckerUrlError(`checkerUrl ${problem}.`, { issues: [{ path: 'checkerUrl', message: problem }] });
  }
}
