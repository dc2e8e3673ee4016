import { IConstruct } from 'constructs';
import { AppRoleApplication } from '../constructs/approle-application';
import { AppRoleAuth } from '../constructs/approle-auth';
import { CiJwtAuth } from '../constructs/ci-jwt-auth';
import { CiJwtRole } from '../constructs/ci-jwt-role';
import { CiSecret } from '../constructs/ci-secret';
import { SecretDeclaration } from '../model/secret-declaration';
import { ValidationProblem } from '../model/validation-problem';
import { RegistryServiceAccount } from '../constructs/registry-service-account';

/** A problem found by a platform rule, attached to the construct that breaks it. */
export interface RuleFinding {
  /** Construct path of the offending declaration. */
  readonly constructPath: string;
  /** The problem, carrying the rule id. */
  readonly problem: ValidationProblem;
}

/**
 * A rule over the whole platform (all stacks at once), in the manner of cdk-nag: a stable id, a
 * one-line description, and a check that returns findings. Rules see every declaration, so they
 * catch what no single construct can: duplicates and cross-application access.
 */
export interface PlatformRule {
  /** Stable rule id, `SSI-R<n>`. */
  readonly id: string;
  /** What the rule requires. */
  readonly description: string;
  /** Finds the declarations that break the rule. */
  check(declarations: PlatformDeclarations): RuleFinding[];
}

/** The declarations of a construct tree, grouped by kind. */
export class PlatformDeclarations {
  /** JWT auth methods. */
  readonly jwtAuths: CiJwtAuth[];
  /** AppRole auth methods. */
  readonly appRoleAuths: AppRoleAuth[];
  /** CI JWT roles. */
  readonly jwtRoles: CiJwtRole[];
  /** Registry service accounts. */
  readonly accounts: RegistryServiceAccount[];
  /** Other CI secrets. */
  readonly ciSecrets: CiSecret[];
  /** AppRole applications. */
  readonly applications: AppRoleApplication[];

  constructor(root: IConstruct) {
    const all = root.node.findAll();
    this.jwtAuths = all.filter((c): c is CiJwtAuth => c instanceof CiJwtAuth);
    this.appRoleAuths = all.filter((c): c is AppRoleAuth => c instanceof AppRoleAuth);
    this.jwtRoles = all.filter((c): c is CiJwtRole => c instanceof CiJwtRole);
    this.accounts = all.filter((c): c is RegistryServiceAccount => c instanceof RegistryServiceAccount);
    this.ciSecrets = all.filter((c): c is CiSecret => c instanceof CiSecret);
    this.applications = all.filter((c): c is AppRoleApplication => c instanceof AppRoleApplication);
  }

  /** Every declared secret CI reads, with its declaring construct. */
  get ciSecretDeclarations(): { construct: IConstruct; secret: SecretDeclaration }[] {
    return [
      ...this.accounts.map((a) => ({ construct: a as IConstruct, secret: a.secret })),
      ...this.ciSecrets.map((s) => ({ construct: s as IConstruct, secret: s.secret })),
    ];
  }
}

/** Reports every item whose key was already seen, naming the first holder. */
function duplicates<T>(
  items: readonly T[],
  key: (item: T) => string,
  path: (item: T) => string,
  problem: (item: T, first: T) => ValidationProblem,
): RuleFinding[] {
  const seen = new Map<string, T>();
  const findings: RuleFinding[] = [];
  for (const item of items) {
    const k = key(item);
    const first = seen.get(k);
    if (first === undefined) seen.set(k, item);
    else findings.push({ constructPath: path(item), problem: problem(item, first) });
  }
  return findings;
}

const byPath = (c: IConstruct): string => c.node.path;

/** The rules checked at every synthesis. */
export const PLATFORM_RULES: readonly PlatformRule[] = [
  {
    id: 'SSI-R1',
    description: 'Role names are unique within an auth method.',
    check: (d) => [
      ...duplicates(
        d.jwtRoles,
        (r) => r.identityName,
        byPath,
        (r, first) => new ValidationProblem('roleName', r.roleName, `is already declared by ${first.node.path}`, 'SSI-R1'),
      ),
      ...duplicates(
        d.applications,
        (a) => a.identityName,
        byPath,
        (a, first) => new ValidationProblem('roleName', a.roleName, `is already declared by ${first.node.path}`, 'SSI-R1'),
      ),
    ],
  },
  {
    id: 'SSI-R2',
    description: 'Policy names are unique in the store.',
    check: (d) =>
      duplicates(
        [...d.jwtRoles, ...d.applications],
        (i) => i.policy.name,
        byPath,
        (i, first) =>
          new ValidationProblem('policy', i.policy.name, `policy name is already used by ${first.node.path}`, 'SSI-R2'),
      ),
  },
  {
    id: 'SSI-R3',
    description: 'A registry service account exists only for a distinct permission scope (spec §2.1).',
    check: (d) =>
      duplicates(
        d.accounts,
        (a) => a.scope.key,
        byPath,
        (a, first) =>
          new ValidationProblem(
            'permissions',
            a.scope.permissions,
            `same permission scope as ${first.accountName} (${first.node.path}): a new account is created only for a distinct scope`,
            'SSI-R3',
          ),
      ),
  },
  {
    id: 'SSI-R4',
    description: 'Account names and CI secret paths are unique.',
    check: (d) => [
      ...duplicates(
        d.accounts,
        (a) => a.accountName,
        byPath,
        (a, first) => new ValidationProblem('name', a.accountName, `is already declared by ${first.node.path}`, 'SSI-R4'),
      ),
      ...duplicates(
        d.ciSecretDeclarations.filter((x) => x.construct instanceof CiSecret),
        (x) => x.secret.path.policyPath,
        (x) => x.construct.node.path,
        (x, first) =>
          new ValidationProblem('path', x.secret.path.logical, `is already declared by ${first.construct.node.path}`, 'SSI-R4'),
      ),
      ...d.ciSecrets.flatMap((s) =>
        d.accounts
          .filter((a) => a.secret.path.overlaps(s.secret.path))
          .map((a) => ({
            constructPath: s.node.path,
            problem: new ValidationProblem('path', s.secret.path.logical, `is the credentials path of ${a.accountName}`, 'SSI-R4'),
          })),
      ),
    ],
  },
  {
    id: 'SSI-R5',
    description: 'No cross-application access: application paths do not overlap (spec §2.4).',
    check: (d) =>
      d.applications.flatMap((a, i) =>
        d.applications
          .slice(0, i)
          .filter((b) => a.readablePath.overlaps(b.readablePath))
          .map((b) => ({
            constructPath: a.node.path,
            problem: new ValidationProblem(
              'readablePath',
              a.readablePath.policyPath,
              `overlaps ${b.readablePath.policyPath} of ${b.roleName} (${b.node.path}): cross-application secret access is not permitted`,
              'SSI-R5',
            ),
          })),
      ),
  },
  {
    id: 'SSI-R6',
    description: 'CI secrets do not lie inside an application\'s paths.',
    check: (d) =>
      d.ciSecretDeclarations.flatMap(({ construct, secret }) =>
        d.applications
          .filter((a) => a.readablePath.overlaps(secret.path))
          .map((a) => ({
            constructPath: construct.node.path,
            problem: new ValidationProblem(
              'path',
              secret.path.logical,
              `lies inside the paths of application ${a.roleName} (${a.node.path}): CI would read application secrets`,
              'SSI-R6',
            ),
          })),
      ),
  },
  {
    id: 'SSI-R8',
    description: 'A secret declared with CI consumers is readable by some identity, or its jobs could not read it.',
    check: (d) =>
      d.ciSecretDeclarations
        .filter(({ secret }) => secret.consumers.length > 0 && secret.grants.length === 0)
        .map(({ construct, secret }) => ({
          constructPath: construct.node.path,
          problem: new ValidationProblem(
            'readers',
            [],
            `nobody is granted read, yet consumers ${secret.consumers.join(', ')} need it: add readers (e.g. the registry-ci role) or drop the consumers`,
            'SSI-R8',
          ),
        })),
  },
  {
    id: 'SSI-R7',
    description: 'Auth methods have distinct mount paths.',
    check: (d) =>
      duplicates(
        [...d.jwtAuths, ...d.appRoleAuths],
        (m) => m.path,
        byPath,
        (m, first) => new ValidationProblem('path', m.path, `auth mount path is already used by ${first.node.path}`, 'SSI-R7'),
      ),
  },
];
