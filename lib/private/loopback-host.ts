import { isIP } from 'net';

/**
 * True when `host` (a URL's host, brackets allowed around IPv6) names this machine: `localhost`
 * (and `*.localhost`, which resolvers map to loopback), any address of 127.0.0.0/8, or `::1`.
 * Plain `http://` is accepted without an explicit option only for these: traffic to them never
 * leaves the machine, so no one on the network can read or change it.
 */
export function isLoopbackHost(host: string): boolean {
  const h = String(host).toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.split('.')[0] === '127';
  if (isIP(h) === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1';
  return false;
}
