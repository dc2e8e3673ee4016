import { resolveStoreAddress } from '../../../lib';

describe('§2.5 and §7: the store address comes from SECRETSTORE_ADDR or VAULT_ADDR, and its absence fails fast', () => {
  it('accepts the spec\'s SECRETSTORE_ADDR', () => {
    expect(resolveStoreAddress({ SECRETSTORE_ADDR: 'https://secrets.example:8200/' })).toBe('https://secrets.example:8200');
  });

  it('accepts the store\'s own VAULT_ADDR and BAO_ADDR', () => {
    expect(resolveStoreAddress({ VAULT_ADDR: 'http://127.0.0.1:8200' })).toBe('http://127.0.0.1:8200');
    expect(resolveStoreAddress({ BAO_ADDR: 'http://127.0.0.1:8200' })).toBe('http://127.0.0.1:8200');
  });

  it('accepts both when they agree', () => {
    expect(resolveStoreAddress({ SECRETSTORE_ADDR: 'https://s.example', VAULT_ADDR: 'https://s.example/' })).toBe('https://s.example');
  });

  it.each([{}, { SECRETSTORE_ADDR: '' }, { SECRETSTORE_ADDR: '   ', VAULT_ADDR: '' }])(
    'unset or empty (%j) stops with the spec\'s cause and fix',
    (env) => {
      expect(() => resolveStoreAddress(env)).toThrow(
        /SECRETSTORE_ADDR \(or VAULT_ADDR \/ BAO_ADDR\) is unset or empty, so a login would target an empty host\. Fix: define SECRETSTORE_ADDR/,
      );
    },
  );

  it('refuses variables that disagree, naming them', () => {
    expect(() => resolveStoreAddress({ SECRETSTORE_ADDR: 'https://a.example', VAULT_ADDR: 'https://b.example' })).toThrow(
      'The store address variables disagree: SECRETSTORE_ADDR=https://a.example, VAULT_ADDR=https://b.example. Unset all but one.',
    );
  });

  it('refuses an address that is not an http(s) URL', () => {
    expect(() => resolveStoreAddress({ VAULT_ADDR: 'secrets.example' })).toThrow(/VAULT_ADDR="secrets.example" is not an http\(s\) URL/);
  });

  it('refuses plain http to a host other than this machine, naming the variable and the option', () => {
    expect(() => resolveStoreAddress({ VAULT_ADDR: 'http://secrets.example:8200' })).toThrow(
      'VAULT_ADDR="http://secrets.example:8200" is plain http to a host other than this machine: the token, Role IDs and Secret IDs would cross ' +
        'the network readable and changeable by anyone on the path. Use https://, or, for a network you trust, list the host in ' +
        'SECRETSTORE_IAC_INSECURE_HTTP_HOSTS (comma-separated host[:port])',
    );
    expect(resolveStoreAddress({ VAULT_ADDR: 'http://secrets.example:8200', SECRETSTORE_IAC_INSECURE_HTTP_HOSTS: 'other.example, SECRETS.example' })).toBe(
      'http://secrets.example:8200',
    );
    expect(resolveStoreAddress({ VAULT_ADDR: 'http://secrets.example:8200', SECRETSTORE_IAC_INSECURE_HTTP_HOSTS: 'secrets.example:8200' })).toBe(
      'http://secrets.example:8200',
    );
    expect(() => resolveStoreAddress({ VAULT_ADDR: 'http://secrets.example:8200', SECRETSTORE_IAC_INSECURE_HTTP_HOSTS: 'secrets.example:9999' })).toThrow(/plain http/);
  });

  it.each(['http://localhost:8200', 'http://127.0.0.1:8200', 'http://[::1]:8200'])('allows plain http to this machine: %s', (address) => {
    expect(resolveStoreAddress({ SECRETSTORE_ADDR: address })).toBe(address);
  });

  it('a name under .localhost is not this machine (resolved through DNS) unless listed', () => {
    expect(() => resolveStoreAddress({ SECRETSTORE_ADDR: 'http://store.localhost:8200' })).toThrow(
      'SECRETSTORE_ADDR="http://store.localhost:8200" is plain http to a host other than this machine',
    );
    expect(resolveStoreAddress({ SECRETSTORE_ADDR: 'http://store.localhost:8200', SECRETSTORE_IAC_INSECURE_HTTP_HOSTS: 'store.localhost' })).toBe(
      'http://store.localhost:8200',
    );
  });

  it('refuses credentials inside the address without repeating them', () => {
    let message = '';
    try {
      resolveStoreAddress({ SECRETSTORE_ADDR: 'https://admin:hunter2@secrets.example:8200' });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toBe(
      'SECRETSTORE_ADDR="https://***@secrets.example:8200" carries credentials (user:password@) in the URL: they would be sent to the store and ' +
        'shown in messages. Remove them; the store token comes from VAULT_TOKEN',
    );
  });
});
