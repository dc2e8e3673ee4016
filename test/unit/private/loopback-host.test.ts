import { isLoopbackHost } from '../../../lib/private/loopback-host';

describe('Plain http is only for this machine: loopback hosts', () => {
  it.each(['localhost', 'LOCALHOST', '127.0.0.1', '127.255.0.9', '[::1]', '::1', 'localhost.'])('%s is loopback', (h) => {
    expect(isLoopbackHost(h)).toBe(true);
  });
  it.each(['example.com', 'localhost.example.com', 'api.localhost', 'sso.localhost', 'SSO.LOCALHOST.', '128.0.0.1', '10.0.0.1', '[::2]', '127.0.0.1.nip.io', '', '0.0.0.0'])('%s is not', (h) => {
    expect(isLoopbackHost(h)).toBe(false);
  });
});
