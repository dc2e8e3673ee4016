/**
 * Environment-variable names a secret may not become. The platform turns secret keys into variables
 * (the CI login exports `<PREFIX>_<KEY>`, the agent's env file holds `<KEY>` upper-cased): a key
 * whose variable is one of these would let whoever writes the secret's value, or picks its key, run
 * code or redirect traffic in every job or application that loads it. Grouped by who reads them; a
 * name is denied when it equals a listed name or starts with a listed prefix.
 */
export const DENIED_ENVIRONMENT_VARIABLES: readonly {
  /** Who reads the variables, and what they do: the reason in a problem. */
  readonly why: string;
  /** Exact names. */
  readonly names: readonly string[];
  /** Name prefixes. */
  readonly prefixes: readonly string[];
}[] = [
  {
    why: 'the dynamic loader reads it: it loads code into every process started after it is set',
    names: ['GCONV_PATH', 'LOCPATH', 'NLSPATH', 'HOSTALIASES', 'RESOLV_HOST_CONF', 'LOCALDOMAIN', 'RES_OPTIONS'],
    prefixes: ['LD_', 'DYLD_', 'MALLOC_'],
  },
  {
    why: 'the shell reads it: it runs commands, changes how words and commands are found, or where the shell reads its start-up files',
    names: [
      'BASH_ENV', 'ENV', 'IFS', 'PATH', 'CDPATH', 'GLOBIGNORE', 'HOME', 'SHELL', 'SHELLOPTS', 'BASHOPTS', 'PS1', 'PS2', 'PS3', 'PS4',
      'PROMPT_COMMAND', 'HISTFILE', 'MAIL', 'MAILPATH', 'OPTARG', 'OPTIND', 'PPID', 'PWD', 'OLDPWD', 'UID', 'EUID', 'TMPDIR',
      'POSIXLY_CORRECT', 'EDITOR', 'VISUAL', 'PAGER', 'BROWSER', 'LESSOPEN', 'LESSCLOSE',
    ],
    prefixes: ['BASH_'],
  },
  {
    why: 'a language runtime or package tool reads it: it loads or runs code, or installs from another index',
    names: [
      'NODE_OPTIONS', 'NODE_PATH', 'NODE_EXTRA_CA_CERTS', 'NODE_TLS_REJECT_UNAUTHORIZED', 'PYTHONPATH', 'PYTHONSTARTUP', 'PYTHONHOME',
      'PYTHONINSPECT', 'PYTHONUSERBASE', 'PERL5OPT', 'PERL5LIB', 'PERLLIB', 'PERL5DB', 'RUBYOPT', 'RUBYLIB', 'JAVA_TOOL_OPTIONS',
      '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS', 'CLASSPATH',
    ],
    prefixes: ['NPM_CONFIG_', 'PIP_', 'GIT_'],
  },
  {
    why: 'HTTP clients and TLS libraries read it: it sends traffic, tokens included, through another host or trusts another CA',
    names: ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'CURL_CA_BUNDLE', 'CURL_HOME', 'REQUESTS_CA_BUNDLE', 'WGETRC', 'REGISTRY_AUTH_FILE'],
    prefixes: ['DOCKER_'],
  },
  {
    why: 'the store clients and this platform read it: it changes which store or test target a job or agent talks to, or with which token',
    names: ['E2E_BASE_URL', 'REPORTING_ENDPOINT'],
    prefixes: ['VAULT_', 'BAO_', 'SECRETSTORE_'],
  },
  {
    why: 'the CI system sets and reads it: a job would act on forged job facts',
    names: ['CI', 'GITLAB_CI'],
    prefixes: ['CI_', 'GITLAB_', 'FF_'],
  },
];

/**
 * Why `name` may not be set from a secret, or undefined when it may. Compared upper-cased, as the
 * platform upper-cases keys into variable names.
 */
export function deniedEnvironmentVariableReason(name: string): string | undefined {
  const upper = String(name).toUpperCase();
  for (const group of DENIED_ENVIRONMENT_VARIABLES) {
    const prefix = group.prefixes.find((p) => upper.startsWith(p));
    if (group.names.includes(upper)) return group.why;
    if (prefix) return `${group.why} (${prefix}*)`;
  }
  return undefined;
}
