import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { committedLockRecord, mirrorRecord, providerRecord, ProvidersRefused, readProviderLock, refuseUntrustedProviders } from '../../../lib/engine/installed-providers';
import { packageHashV1, packageHashZip } from '../../../lib/engine/provider-package-hash';

// The provider builds an engine run starts are the ones the tool installed: the lock file lists only
// hashes the tool's record holds, and every installed package hashes to one of them. Proven on the
// real OpenTofu and provider mirror in test/store/engine-providers.store.test.ts; here on files laid
// out as the engines lay them out.

const roots: string[] = [];
afterAll(() => roots.splice(0).forEach((root) => fs.rmSync(root, { recursive: true, force: true })));
const tmp = (): string => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ssi-providers-'));
  roots.push(root);
  return root;
};

const ADDRESS = 'registry.opentofu.org/hashicorp/vault';

/** An unpacked package directory `<root>/<address>/<version>/linux_amd64` holding one binary. */
function lay(root: string, binary: string, version = '5.9.0'): string {
  const dir = path.join(root, ADDRESS, version, 'linux_amd64');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `terraform-provider-vault_v${version}`), binary, { mode: 0o755 });
  return dir;
}

/** A lock file as OpenTofu writes it. */
const lock = (hashes: string[], version = '5.9.0'): string =>
  [
    '# This file is maintained automatically by "tofu init".',
    '# Manual edits may be lost in future updates.',
    '',
    `provider "${ADDRESS}" {`,
    `  version     = "${version}"`,
    '  constraints = ">= 5.6.0, < 6.0.0"',
    '  hashes = [',
    ...hashes.map((h) => `    "${h}",`),
    '  ]',
    '}',
    '',
  ].join('\n');

const refusal = (run: () => void): string => {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(ProvidersRefused);
    return (e as Error).message;
  }
  throw new Error('not refused');
};

describe('the h1: package hash is the engines\' (dirhash Hash1 of the unpacked package)', () => {
  it('is the SHA-256 of "<sha256 hex>  <name>\\n" lines, names sorted bytewise, nested names with /, base64: the value coreutils gives', () => {
    const dir = path.join(tmp(), 'pkg');
    fs.mkdirSync(path.join(dir, 'sub'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'xyz'), 'data for xyz');
    fs.writeFileSync(path.join(dir, 'abc'), 'data for abc');
    fs.writeFileSync(path.join(dir, 'sub', 'n'), 'nested');
    // (for f in abc sub/n xyz; do printf '%s  %s\n' "$(sha256sum $f | cut -d' ' -f1)" "$f"; done) | sha256sum | xxd -r -p | base64
    expect(packageHashV1(dir)).toBe('h1:GS64aLXrjnGdGjqiNS/LUVFRQWvZv1zXwevpc/KLtrk=');
  });

  it('reads through a link to the package (the plugin cache), and changes with one byte of the binary; zh: is the archive\'s SHA-256', () => {
    const root = tmp();
    const real = lay(path.join(root, 'cache'), 'provider build');
    const link = path.join(root, 'linked');
    fs.symlinkSync(real, link);
    expect(packageHashV1(link)).toBe(packageHashV1(real));
    const other = lay(path.join(root, 'other'), 'provider builD');
    expect(packageHashV1(other)).not.toBe(packageHashV1(real));
    const zip = path.join(root, 'p.zip');
    fs.writeFileSync(zip, 'abc');
    expect(packageHashZip(zip)).toBe('zh:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('a lock file is read only in the form the engines write it', () => {
  it('reads the provider blocks: address, version, hashes', () => {
    expect(readProviderLock(lock(['h1:AAAA', 'zh:0123abcd']))).toEqual({ builds: [{ address: ADDRESS, version: '5.9.0', hashes: ['h1:AAAA', 'zh:0123abcd'] }], problems: [] });
  });

  it.each([
    ['a second block for the same provider', lock(['h1:AAAA']) + lock(['h1:BBBB'])],
    ['an attribute given twice', lock(['h1:AAAA']).replace('  constraints', '  version = "5.8.0"\n  constraints')],
    ['an attribute the engine does not write', lock(['h1:AAAA']).replace('  constraints', '  source = "x"\n  constraints')],
    ['a template in a hash', lock(['h1:${file("x")}'])],
    ['an escape in the version', lock(['h1:AAAA']).replace('"5.9.0"', '"5.9\\u002e0"')],
    ['a block comment', `/* ${lock(['h1:AAAA'])} */`],
    ['an unclosed block', lock(['h1:AAAA']).replace(/\}\n$/, '')],
  ])('%s is a problem', (_what, text) => {
    expect(readProviderLock(text).problems.length).toBeGreaterThan(0);
  });
});

describe('refuseUntrustedProviders: the lock and the installed packages hold only builds of the tool\'s record', () => {
  function stack(binary: string, lockHashes?: string[]) {
    const root = tmp();
    const mirror = path.join(root, 'mirror');
    const mirrored = lay(mirror, 'the build the toolchain compiled');
    const work = path.join(root, 'stack');
    fs.mkdirSync(work);
    const installed = lay(path.join(work, '.terraform', 'providers'), binary);
    fs.writeFileSync(path.join(work, '.terraform.lock.hcl'), lock(lockHashes ?? [packageHashV1(installed)]));
    return { mirror, mirrored, work, installed, record: mirrorRecord(mirror) };
  }

  it('passes the build the mirror holds, installed and locked', () => {
    const s = stack('the build the toolchain compiled');
    expect(() => refuseUntrustedProviders(s.work, 'app-roles', s.record)).not.toThrow();
  });

  it('a swapped package and its rewritten lock (providers lock -fs-mirror, init -plugin-dir): refused, naming the provider, the hashes expected and found, and the fix', () => {
    const s = stack('a swapped build');
    const expected = packageHashV1(s.mirrored);
    const found = packageHashV1(s.installed);
    const message = refusal(() => refuseUntrustedProviders(s.work, 'app-roles', s.record));
    expect(message).toBe(
      `app-roles: nothing run: the providers are not the builds the tool installed (the toolchain's provider mirror ${s.mirror}); the engine would run them with the store token:\n` +
        `  ${ADDRESS} 5.9.0: .terraform.lock.hcl lists ${found}; expected only ${expected}\n` +
        `  ${ADDRESS} 5.9.0 (linux_amd64): installed .terraform/providers/${ADDRESS}/5.9.0/linux_amd64 hashes to ${found}; expected ${expected}\n` +
        'Fix: remove the stack\'s .terraform directory and its lock file (.terraform.lock.hcl, and locks/app-roles/.terraform.lock.hcl if the repository commits one: `git checkout -- locks/app-roles` when it was edited), ' +
        'then run `secretstore-iac tf app-roles -- init`: it installs from the mirror and writes the lock from it (docs/toolchain.md)',
    );
  });

  it('a lock listing the mirror\'s hash and another one (a second, swapped build the engine would accept) is refused', () => {
    const s = stack('the build the toolchain compiled', []);
    fs.writeFileSync(path.join(s.work, '.terraform.lock.hcl'), lock([packageHashV1(s.mirrored), 'h1:c3dhcHBlZA==']));
    expect(refusal(() => refuseUntrustedProviders(s.work, 'app-roles', s.record))).toContain(`.terraform.lock.hcl lists h1:c3dhcHBlZA==; expected only ${packageHashV1(s.mirrored)}`);
  });

  it('a lock selecting a version the mirror does not hold is refused', () => {
    const s = stack('the build the toolchain compiled', []);
    fs.writeFileSync(path.join(s.work, '.terraform.lock.hcl'), lock(['h1:AAAA'], '5.10.0'));
    expect(refusal(() => refuseUntrustedProviders(s.work, 'app-roles', s.record))).toContain(`${ADDRESS} 5.10.0: .terraform.lock.hcl selects a build the toolchain's provider mirror ${s.mirror} does not hold`);
  });

  it('a prepared plugin cache: the installed package is a link to a swapped build, refused naming where the link leads', () => {
    const s = stack('the build the toolchain compiled');
    const cache = lay(path.join(path.dirname(s.work), 'plugin-cache'), 'a swapped build');
    fs.rmSync(s.installed, { recursive: true });
    fs.symlinkSync(cache, s.installed);
    expect(refusal(() => refuseUntrustedProviders(s.work, 'app-roles', s.record))).toContain(
      `installed .terraform/providers/${ADDRESS}/5.9.0/linux_amd64 (-> ${fs.realpathSync(cache)}) hashes to ${packageHashV1(cache)}; expected ${packageHashV1(s.mirrored)}`,
    );
  });

  it('the committed lock is the record without a tool mirror: a package none of its hashes names is refused', () => {
    const s = stack('a registry build');
    const committed = path.join(path.dirname(s.work), 'committed.hcl');
    fs.writeFileSync(committed, lock(['h1:cmVnaXN0cnk=', 'zh:0123']));
    const record = committedLockRecord(committed, 'locks/app-roles/.terraform.lock.hcl');
    expect(refusal(() => refuseUntrustedProviders(s.work, 'app-roles', record))).toContain(`hashes to ${packageHashV1(s.installed)}; expected h1:cmVnaXN0cnk=, zh:0123`);
    fs.writeFileSync(committed, lock([packageHashV1(s.installed)]));
    fs.writeFileSync(path.join(s.work, '.terraform.lock.hcl'), lock([packageHashV1(s.installed)]));
    expect(() => refuseUntrustedProviders(s.work, 'app-roles', committedLockRecord(committed, 'locks/app-roles/.terraform.lock.hcl'))).not.toThrow();
  });

  it('providerRecord: the toolchain mirror when it holds a package, else the committed lock, else none', () => {
    const cache = tmp();
    const repo = tmp();
    fs.writeFileSync(path.join(repo, 'cdktf.json'), '{}');
    const stackDir = path.join(repo, 'cdktf.out', 'stacks', 'app-roles');
    fs.mkdirSync(stackDir, { recursive: true });
    expect(providerRecord(stackDir, { SECRETSTORE_IAC_CACHE: cache })).toBeUndefined();
    fs.mkdirSync(path.join(repo, 'locks', 'app-roles'), { recursive: true });
    fs.writeFileSync(path.join(repo, 'locks', 'app-roles', '.terraform.lock.hcl'), lock(['h1:AAAA']));
    expect(providerRecord(stackDir, { SECRETSTORE_IAC_CACHE: cache })?.source).toBe('committed lock');
    lay(path.join(cache, 'provider-mirror'), 'build');
    expect(providerRecord(stackDir, { SECRETSTORE_IAC_CACHE: cache })?.source).toBe('mirror');
  });
});
