import { SecretDeclaration } from '../model/secret-declaration';
import { templateCommentText, templateString } from './text-encoders';
import { ValidationProblem } from '../model/validation-problem';
import { shellQuote } from '../private/shell-quote';

/**
 * The environment file the agent renders for an application (spec §2.4: `/secretstore/secrets/.env`),
 * and the agent template that produces it.
 *
 * Format: one `NAME='value'` line per declared key, nothing else.
 * - `NAME` is the key upper-cased: `pg_host` becomes `PG_HOST`.
 * - The value is POSIX-shell single-quoted: every `'` in it is written as `'\''`; nothing else is
 *   escaped, so `$`, `` ` ``, `\`, `"`, spaces and newlines arrive unchanged. The file is safe to load
 *   with `set -a; . /secretstore/secrets/.env; set +a` (no expansion, no command substitution).
 * - Lines are ordered by secret path, then key. Non-string values (numbers, booleans) are written in
 *   their plain text form (`5432`, `true`).
 * - A declared key missing from the store makes the render fail (the agent's `error_on_missing_key`),
 *   so the file never holds an empty variable in place of a missing one.
 */
export class AgentEnvTemplate {
  /** The environment variable a secret key becomes: `pg_host` → `PG_HOST`. */
  static variableName(key: string): string {
    return key.toUpperCase();
  }

  /** One value, single-quoted for a POSIX shell: `it's` → `'it'\''s'`. */
  static quote(value: string): string {
    return shellQuote(value);
  }

  /**
   * @param roleName the application's role, named in the template's comment
   * @param secrets the application's declared secrets
   */
  constructor(
    readonly roleName: string,
    readonly secrets: readonly SecretDeclaration[],
  ) {}

  /** Every variable the file holds, in file order, with its source. */
  get variables(): { name: string; key: string; secret: SecretDeclaration }[] {
    return this.secrets.flatMap((secret) =>
      secret.keys.map((key) => ({ name: AgentEnvTemplate.variableName(key), key, secret })),
    );
  }

  /** Two keys that become the same variable would overwrite each other in the file. */
  problems(): ValidationProblem[] {
    const seen = new Map<string, string>();
    const problems: ValidationProblem[] = [];
    for (const v of this.variables) {
      const where = `${v.secret.path.logical}:${v.key}`;
      const first = seen.get(v.name);
      if (first === undefined) seen.set(v.name, where);
      else {
        problems.push(
          new ValidationProblem(
            'secrets',
            where,
            `becomes the environment variable ${v.name}, as ${first} does: rename one key, the agent's env file holds each variable once`,
          ),
        );
      }
    }
    return problems;
  }

  /**
   * The agent (consul-template) template. KV v2 keys are read from `.Data.data`, KV v1 keys from
   * `.Data`; `printf "%v"` turns non-string values into text, and `replaceAll` does the quoting
   * {@link quote} describes.
   */
  render(): string {
    const lines = [
      `{{- /* secretstore-iac: environment of AppRole ${templateCommentText(this.roleName)}, one NAME='value' line per declared key (docs/operators.md). No secret in this file. */ -}}`,
    ];
    for (const secret of this.secrets) {
      const data = secret.path.mount.version === 2 ? '.Data.data' : '.Data';
      lines.push(`{{ with secret ${templateString(secret.path.policyPath)} -}}`);
      for (const key of secret.keys) {
        lines.push(
          `${AgentEnvTemplate.variableName(key)}='{{ printf "%v" ${data}.${key} | replaceAll "'" "'\\\\''" }}'`,
        );
      }
      lines.push('{{ end -}}');
    }
    return `${lines.join('\n')}\n`;
  }
}
