import { StoreCapability } from '../acl/store-capability';
import { KV2_SECRET_API_PREFIXES, KvVersion } from '../model/kv-mount';

/** A KV mount the analysis knows the version of: declared by the stacks, or read from the store. */
export interface KnownKvMount {
  /** Mount path without slashes (`secret`). */
  readonly path: string;
  /** KV version. */
  readonly version: KvVersion;
  /** Where the version comes from, for the note (`settings.kvMount of stack platform`, `sys/mounts`). */
  readonly source: string;
}

/** A request path rewritten to the form its KV mount serves, and why. */
export interface KvPathForm {
  /** The path to evaluate. */
  readonly path: string;
  /** One line saying which path is evaluated and why. */
  readonly note: string;
}

/**
 * The form of `path` that its KV mount serves, when `path` is written in the other KV version's
 * form; undefined when the path is in its mount's form, or under no known KV mount.
 *
 * - KV version 2 serves secrets under `data/` (and lists them under `metadata/`): `secret/a/b` on
 *   a version 2 mount is answered for `secret/data/a/b` (`secret/metadata/a/b` for LIST and SCAN),
 *   the path the store's CLI and agent request for it. The store checks a request to `secret/a/b`
 *   as written, then answers 404 "Invalid path for a versioned K/V secrets engine": no secret is
 *   served there.
 * - KV version 1 has no API prefix: `secret/data/a/b` (or `metadata/`, `delete/`, ... of the
 *   version 2 API) on a version 1 mount is answered for `secret/a/b`. The library never declares a
 *   logical path starting with a version 2 API word (`KV2_API_PREFIXES`), so such a path is the
 *   version 2 form of a version 1 secret.
 */
export function kvPathForm(capability: StoreCapability, path: string, mounts: readonly KnownKvMount[]): KvPathForm | undefined {
  const request = path.replace(/^\/+/, '');
  const mount = mounts
    .filter((m) => request.startsWith(`${m.path}/`))
    .sort((a, b) => b.path.length - a.path.length)[0];
  if (!mount) return undefined;
  const rest = request.slice(mount.path.length + 1);
  const [first, ...tail] = rest.split('/');
  const isApiForm = KV2_SECRET_API_PREFIXES.includes(first) || first === 'config';
  const listing = capability === 'list' || capability === 'scan';
  if (mount.version === 2) {
    if (isApiForm || rest === '') return undefined;
    const api = listing ? 'metadata' : 'data';
    const served = `${mount.path}/${api}/${rest}`;
    return {
      path: served,
      note:
        `${mount.path}/ is KV version 2 (${mount.source}): it serves no secret at ${request} (the store answers 404 ` +
        `"Invalid path for a versioned K/V secrets engine" to a token allowed there), so this answers for ${served}, ` +
        `the path the store's CLI and agent ${listing ? 'list' : 'request'} for it`,
    };
  }
  if (!KV2_SECRET_API_PREFIXES.includes(first) || tail.length === 0) return undefined;
  const served = `${mount.path}/${tail.join('/')}`;
  return {
    path: served,
    note:
      `${mount.path}/ is KV version 1 (${mount.source}): ${first}/ is KV version 2's API form, which a version 1 mount ` +
      `does not have, so this answers for ${served}, the path the mount serves the secret at`,
  };
}
