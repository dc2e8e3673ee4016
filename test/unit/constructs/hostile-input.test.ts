import * as fs from 'fs';
import * as path from 'path';
import * as yaml from 'js-yaml';
import { CiSecret, RegistryServiceAccount, SecretStoreApp, SecretStoreValidationError } from '../../../lib';
import { hcl1PolicyItems } from '../../../lib/acl/hcl1-decoder';
import { templateParts } from '../../../lib/sources/terraform-reference';
import { definePlatform } from '../../../lib/platform/platform';
import { platformConfig } from '../../support/platform-config';
import { SeededRandom } from '../../support/seeded-random';
import { readOutdir, resources, tempOutdir } from '../../support/synthesized-platform';

// Property test (issue 11) through the whole synthesis: random construct ids, descriptions and
// usedBy texts (control characters, U+2028/U+2029/U+0085, quotes, comment and block markers) either
// are refused with every problem on one line and nothing written, or leave the parsed registry-ci
// policy and the parsed CI template's keys exactly as the declarations say.

const random = SeededRandom.fromEnvironment('hostile-input');
const CI_TEMPLATE = path.join('ci', 'secretstore-ci.gitlab-ci.yml');

interface Parsed {
  policyPaths: string[];
  templateKeys: string[];
}

async function synthesize(extend?: (app: SecretStoreApp) => void): Promise<{ parsed?: Parsed; problems?: string[]; outdir: string }> {
  const outdir = tempOutdir();
  const app = new SecretStoreApp({ outdir }).define((a) => {
    definePlatform(a, platformConfig);
    extend?.(a);
  });
  try {
    app.synth();
  } catch (e) {
    if (!(e instanceof SecretStoreValidationError)) throw e;
    return { problems: e.problems.map((p) => `[${p.constructPath}] ${p.message}`), outdir };
  }
  const out = readOutdir(outdir);
  const policy = resources(out.stacks['ci-access'], 'vault_policy').find((p) => p.name === 'registry-ci');
  // The store receives the text the engine reads from the Terraform JSON string ($${ is ${), read as HCL 1.
  const received = templateParts(policy.policy, (why) => new Error(why)).map((p) => p.literal).join('');
  const items = hcl1PolicyItems('registry-ci', received, 'openbao');
  const template = yaml.load(fs.readFileSync(path.join(outdir, CI_TEMPLATE), 'utf8')) as Record<string, unknown>;
  return { parsed: { policyPaths: items.map((i) => i.keys.join(' ')).sort(), templateKeys: Object.keys(template).sort() }, outdir };
}

describe('hostile construct ids and free text never change a parsed output', () => {
  let baseline: Parsed;
  beforeAll(async () => {
    baseline = (await synthesize()).parsed!;
  });

  it(`refused with one-line problems and nothing written, or the parsed policy and template are the declared ones (seed ${random.seed})`, async () => {
    let accepted = 0;
    let refused = 0;
    for (let i = 0; i < 16; i++) {
      // The first case is safe and the second hostile whatever the seed: both branches always run.
      const safe = i === 0 ? true : i === 1 ? false : random.next() < 0.4;
      const id = safe ? `sonar${i}` : `s${random.hostileString(16)}`;
      const description = safe ? 'scan token' : random.hostileString(20);
      const usedBy = i === 0 || random.next() < 0.5 ? 'charts' : random.hostileString(20);
      const result = await synthesize((app) => {
        const ci = app.node.findChild('ci-access') as any;
        new CiSecret(ci, id, { path: 'sonar/token', keys: ['token'], consumers: ['scan'], description, readers: [ci.registryCi] });
        new RegistryServiceAccount(ci, `helm${i}`, { name: 'helm', permissions: ['raw:read'], usedBy, consumers: ['chart-publish'], readers: [ci.registryCi] });
      });
      const context = { seed: random.seed, i, id, description, usedBy };
      if (result.problems) {
        refused++;
        expect({ context, multiline: result.problems.filter((p) => /[\n\r\u0085\u2028\u2029]/.test(p)) }).toEqual({ context, multiline: [] });
        expect(fs.existsSync(result.outdir)).toBe(false);
        expect(fs.readdirSync(path.dirname(result.outdir))).toEqual([]);
      } else {
        accepted++;
        const expected: Parsed = {
          policyPaths: [...baseline.policyPaths, 'path secret/data/registry/svc-helm', 'path secret/data/sonar/token'].sort(),
          templateKeys: [...baseline.templateKeys, '.secretstore-chart-publish', '.secretstore-scan'].sort(),
        };
        expect({ context, parsed: result.parsed }).toEqual({ context, parsed: expected });
      }
    }
    // Both branches ran: the property is not vacuous.
    expect([accepted > 0, refused > 0]).toEqual([true, true]);
  });
});
