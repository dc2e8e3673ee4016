import * as fs from 'fs';
import * as path from 'path';

/** What a checkout's package-lock.json says of the `secretstore-iac` it installs. */
export interface LockedLibrary {
  /** The version installed. */
  readonly version: string;
  /** Where it comes from and its checksum, as npm recorded them: two checkouts install the same library when these agree. */
  readonly identity: string;
}

/**
 * The `secretstore-iac` a checkout's package-lock.json installs; undefined when the checkout has no
 * readable lock file or the lock installs no such package (this repository itself, which is the
 * package).
 */
export function lockedLibrary(checkout: string): LockedLibrary | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(checkout, 'package-lock.json'), 'utf8');
  } catch {
    return undefined;
  }
  return lockedLibraryIn(text);
}

/** The `secretstore-iac` the text of a package-lock.json installs (see {@link lockedLibrary}); undefined when unreadable or none. */
export function lockedLibraryIn(lockText: string): LockedLibrary | undefined {
  let lock: { packages?: Record<string, { version?: unknown; resolved?: unknown; integrity?: unknown }> };
  try {
    lock = JSON.parse(lockText);
  } catch {
    return undefined;
  }
  const entry = lock?.packages?.['node_modules/secretstore-iac'];
  if (!entry || typeof entry.version !== 'string') return undefined;
  return { version: entry.version, identity: JSON.stringify([entry.version, entry.resolved, entry.integrity]) };
}
