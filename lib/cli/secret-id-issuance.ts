import { AppRoleCredentials, AppRoleCredentialsFile, FileOwner } from '../store/approle-credentials-file';
import { AppRoleOperator, IssuedSecretId } from '../store/approle-operator';
import { CredentialsFileTarget } from './operator-options';
import { terminalLine } from '../private/terminal-text';
import { RedactingContext } from './redacting-context';

/**
 * Issues a new Secret ID for the role, meant for the target's env file: the file is checked writable
 * before the store is asked (a Secret ID is issued only when it can be written), and the Secret ID the
 * file held before and the new one are hidden from every output. Call it under the file's lock.
 */
export async function issueSecretIdForFile(
  target: CredentialsFileTarget,
  role: string,
  io: RedactingContext,
  issuedBy: string,
): Promise<{ previous: string | undefined; roleId: string; issued: IssuedSecretId }> {
  target.file.assertWritable(target.owner);
  const previous = target.file.readSecretId();
  io.hide(previous);
  const roleId = await target.operator.roleId(role);
  const issued = await target.operator.issueSecretId(role, { issued_by: issuedBy });
  io.hide(issued.secretId);
  return { previous, roleId, issued };
}

/**
 * Writes the pair and says where, with which mode and owner (never the Secret ID). When the write
 * fails, the Secret ID just issued is destroyed, so that no valid Secret ID exists outside the file.
 */
export async function writeCredentials(
  file: AppRoleCredentialsFile,
  credentials: AppRoleCredentials,
  owner: FileOwner | undefined,
  io: RedactingContext,
  issued: { operator: AppRoleOperator; role: string; secretId: IssuedSecretId },
): Promise<void> {
  let given: FileOwner;
  try {
    given = file.write(credentials, owner);
  } catch (e) {
    // Printed escaped; the store gets the accessor as it gave it.
    const accessor = terminalLine(issued.secretId.accessor);
    const reason = e instanceof Error ? e.message : String(e);
    try {
      await issued.operator.destroySecretId(issued.role, issued.secretId.accessor);
    } catch (d) {
      throw new Error(
        `${reason}; destroying the Secret ID just issued (accessor ${accessor}) failed too (${(d as Error).message}): destroy it with ` +
          `POST auth/${issued.operator.mount}/role/${issued.role}/secret-id-accessor/destroy {"secret_id_accessor":"${accessor}"}`,
      );
    }
    throw new Error(`${reason}; the Secret ID just issued (accessor ${accessor}) was destroyed, and ${file.path} is unchanged`);
  }
  io.stdout(`wrote SECRETSTORE_ROLE_ID and SECRETSTORE_SECRET_ID to ${file.path} (mode 0600, owner ${given.uid}:${given.gid})`);
}
