import { jwtLogin } from '../store/jwt-login';
import { resolveStoreAddress } from '../store/store-address';
import { StoreClient, STORE_TOKEN_VARIABLES } from '../store/store-client';
import { resolveStoreNamespace } from '../store/store-namespace-setting';
import { StoreTransport } from '../store/store-transport';
import { LEGACY_JOB_JWT_VARIABLE } from '../render/ci-login-script';
import { ID_TOKEN_VARIABLE, LOGIN_AUDIENCE_VARIABLE, LOGIN_JOB, LOGIN_MOUNT_VARIABLE, LOGIN_NAMESPACE_VARIABLE, LOGIN_ROLE_VARIABLE } from '../render/configuration-pipeline-yaml';
import { PipelineJobLog } from './pipeline-job-log';

/** A job's store session: the environment its steps run with, and its end. */
export interface PipelineLoginSession {
  /** The job's environment with the login's token as `VAULT_TOKEN` (and its namespace), or the job's own when it did not log in. */
  readonly env: NodeJS.ProcessEnv;
  /** Revokes the login's token (and so every child token made from it); nothing when the job did not log in. */
  end(): Promise<void>;
}

/**
 * The store login of a configuration pipeline job, in this process: when the job's hidden login job
 * names a role (`SECRETSTORE_IAC_LOGIN_ROLE`, with the mount, audience and namespace beside it), a JWT
 * login with the job's ID token (`SECRETSTORE_ID_TOKEN`; lib/store/jwt-login.ts, errors per spec §7;
 * when it is empty, the older flow's `CI_JOB_JWT_V2`, with a notice, as the CI login template does)
 * gives the job its token, which stays in this process: the engine runs and child tokens get it, no
 * shell variable holds it, and it is revoked when the job ends. A store token the job's environment
 * carries as well is not used (said in one line). Without a role (a person running the job's command
 * on a laptop) the job uses the token of its environment, as every other command does.
 * @throws JwtLoginError, StoreAddressError, StoreError: the job fails before any step (exit 3)
 */
export async function pipelineLogin(env: NodeJS.ProcessEnv, log: PipelineJobLog): Promise<PipelineLoginSession> {
  const role = (env[LOGIN_ROLE_VARIABLE] ?? '').trim();
  if (role === '') return { env, end: async () => undefined };
  const mount = (env[LOGIN_MOUNT_VARIABLE] ?? '').trim().replace(/^\/+|\/+$/g, '') || 'jwt';
  const namespace = (env[LOGIN_NAMESPACE_VARIABLE] ?? '').trim();
  // The token is valid only in the namespace it logged in to: the engine's provider gets it with the token.
  const loginEnv: NodeJS.ProcessEnv = namespace === '' ? { ...env } : { ...env, VAULT_NAMESPACE: namespace };
  const client = new StoreClient({ address: resolveStoreAddress(loginEnv), namespace: resolveStoreNamespace(loginEnv), transport: StoreTransport.fromEnvironment(loginEnv) });
  // Spec §2.5: the older flow's variable, used only when the job declares no ID token (GitLab before id_tokens).
  const legacy = (env[ID_TOKEN_VARIABLE] ?? '').trim() === '' && (env[LEGACY_JOB_JWT_VARIABLE] ?? '').trim() !== '';
  if (legacy) {
    log.decide(`${ID_TOKEN_VARIABLE} is empty: using the older ${LEGACY_JOB_JWT_VARIABLE} (older flow); declare the id_tokens block instead (extend ${LOGIN_JOB})`);
  }
  const login = await jwtLogin(client, {
    mount,
    role,
    jwt: (legacy ? env[LEGACY_JOB_JWT_VARIABLE] : env[ID_TOKEN_VARIABLE]) ?? '',
    audience: (env[LOGIN_AUDIENCE_VARIABLE] ?? '').trim() || '(the audience of the role: its bound_audiences)',
    // The fixes name the variable to declare, also when the older one was sent.
    tokenVariable: ID_TOKEN_VARIABLE,
    baseJob: LOGIN_JOB,
  });
  const unused = STORE_TOKEN_VARIABLES.filter((v) => (env[v] ?? '').trim() !== '');
  log.decide(
    `logged in to ${client.address}${client.namespace === undefined ? '' : ` (namespace ${client.namespace})`} as role ${role} at auth/${mount}: ` +
      `policies ${login.policies.join(', ') || '(none but default)'}, for ${login.ttlSeconds} s` +
      (unused.length > 0 ? `; the store token in ${unused.join(', ')} is not used` : ''),
  );
  const jobEnv: NodeJS.ProcessEnv = { ...loginEnv, VAULT_TOKEN: login.token };
  for (const v of STORE_TOKEN_VARIABLES) if (v !== 'VAULT_TOKEN') delete jobEnv[v];
  // The job token has done its work: no step (nor the engine) gets it, under either name.
  delete jobEnv[ID_TOKEN_VARIABLE];
  delete jobEnv[LEGACY_JOB_JWT_VARIABLE];
  return {
    env: jobEnv,
    async end() {
      try {
        await client.request('POST', 'auth/token/revoke-self', undefined, login.token);
        log.decide(`revoked the job's store token (role ${role}) and the stack tokens made from it`);
      } catch (e) {
        log.decide(`could not revoke the job's store token (role ${role}): ${e instanceof Error ? e.message : String(e)}; it expires with its time to live (${login.ttlSeconds} s)`);
      }
    },
  };
}
