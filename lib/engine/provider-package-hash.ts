import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';

/**
 * The names of the files under `dir`, relative, `/`-separated, as `dirhash.DirFiles(dir, "")` of
 * golang.org/x/mod lists them: a walk that does not follow symbolic links below `dir` (a link is
 * listed as a file and read through; a link to a directory cannot be read, and is an error, as for
 * the engines).
 */
function dirFiles(dir: string, prefix = ''): string[] {
  const files: string[] = [];
  for (const entry of fs.readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) files.push(...dirFiles(dir, rel));
    else files.push(rel);
  }
  return files;
}

/**
 * File hashes computed in this process, by the file's identity and change time (a provider binary is
 * tens of megabytes, and one run checks it before and after the engine): a file written since has
 * another `ctime`, which no caller can set back.
 */
const fileHashes = new Map<string, string>();

/** SHA-256 of a file's contents (hex), streamed in blocks. */
function fileSha256(file: string): string {
  const stat = fs.statSync(file);
  const key = `${file}\0${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
  const known = fileHashes.get(key);
  if (known !== undefined) return known;
  const hash = createHash('sha256');
  const fd = fs.openSync(file, 'r');
  try {
    const block = Buffer.allocUnsafe(1 << 20);
    for (let n = fs.readSync(fd, block, 0, block.length, null); n > 0; n = fs.readSync(fd, block, 0, block.length, null)) hash.update(block.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  const digest = hash.digest('hex');
  fileHashes.set(key, digest);
  return digest;
}

/**
 * The `h1:` hash of an unpacked provider package directory, as OpenTofu and Terraform compute it
 * (`getproviders.PackageHashV1`: `dirhash.HashDir(EvalSymlinks(dir), "", dirhash.Hash1)`): the
 * SHA-256 of the lines `<sha256 hex of the file>  <relative name>\n`, names sorted bytewise, in
 * standard base64. A lock file's `h1:` hashes are these; an installed package that hashes to none of
 * its lock's was not the package the lock recorded.
 * @throws Error when a name holds a newline (dirhash refuses it) or a file cannot be read
 */
export function packageHashV1(dir: string): string {
  const real = fs.realpathSync(dir);
  const files = dirFiles(real).sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
  const summary = createHash('sha256');
  for (const file of files) {
    if (file.includes('\n')) throw new Error(`${path.join(real, file)}: a file name with a newline, which the engines' package hash refuses`);
    summary.update(`${fileSha256(path.join(real, file))}  ${file}\n`, 'utf8');
  }
  return `h1:${summary.digest('base64')}`;
}

/**
 * The `zh:` hash of a packed provider package (a `.zip` of a mirror or the registry): the SHA-256 of
 * the archive file, in hex, as the engines record it.
 */
export function packageHashZip(archive: string): string {
  return `zh:${fileSha256(fs.realpathSync(archive))}`;
}
