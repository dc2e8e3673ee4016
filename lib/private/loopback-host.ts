import { isIP } from 'net';

/**
 * True when `host` (a URL's host, brackets allowed around IPv6) names this machine: `localhost`, any
 * address of 127.0.0.0/8, or `::1`. The one place that decides where plain `http://` is accepted
 * without an explicit option (every URL of the configuration, the store address and redirect targets
 * of the CLI): traffic to these never leaves the machine, so no one on the network can read or change it.
 *
 * Other names under `.localhost` (`sso.localhost`) are not loopback: the store (Go's resolver) and
 * the CLI (the C library's) look them up in the hosts file and then DNS like any name, and only some
 * resolvers (systemd-resolved, browsers) answer them with loopback. A host that needs plain http is
 * listed explicitly (`settings.insecureHttpHosts`, `SECRETSTORE_IAC_INSECURE_HTTP_HOSTS`).
 */
export function isLoopbackHost(host: string): boolean {
  const h = String(host).toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.split('.')[0] === '127';
  if (isIP(h) === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1';
  return false;
}
