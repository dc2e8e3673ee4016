import * as zlib from 'zlib';

/** The folder of a saved plan (a zip archive) that holds the configuration the plan was made from. */
const CONFIG_DIR = 'tfconfig/';

/**
 * The files of a saved plan's configuration snapshot (`tfconfig/...` of the zip archive both engines
 * write: `tfconfig/modules.json` and `tfconfig/m-<module key>/<file>` for every configuration file
 * the engine loaded), by their path below `tfconfig/`.
 * @throws Error naming what is not a readable plan archive (not a zip, ZIP64, encrypted, another compression)
 */
export function planConfigurationFiles(archive: Buffer): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const [name, content] of planArchiveEntries(archive, (n) => n.startsWith(CONFIG_DIR))) files.set(name.slice(CONFIG_DIR.length), content);
  return files;
}

/**
 * The file entries of a saved plan (the zip archive both engines write: `tfplan`, `tfstate`,
 * `tfconfig/...`), by their name, those that `wanted` keeps (every one by default). Read from the
 * archive's central directory (stored or deflated entries, as Go's archive/zip writes them).
 * @throws Error naming what is not a readable plan archive (not a zip, ZIP64, encrypted, another compression)
 */
export function planArchiveEntries(archive: Buffer, wanted: (name: string) => boolean = () => true): Map<string, Buffer> {
  // End of central directory: its signature within the last 64 KiB + 22 bytes.
  let end = -1;
  for (let i = archive.length - 22; i >= Math.max(0, archive.length - 65_557); i--) {
    if (archive.readUInt32LE(i) === 0x06054b50) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new Error('not a saved plan: no zip archive');
  const entries = archive.readUInt16LE(end + 10);
  let at = archive.readUInt32LE(end + 16);
  if (entries === 0xffff || at === 0xffffffff) throw new Error('a ZIP64 plan archive: not read');
  const files = new Map<string, Buffer>();
  for (let n = 0; n < entries; n++) {
    if (at + 46 > archive.length || archive.readUInt32LE(at) !== 0x02014b50) throw new Error('not a saved plan: its zip directory is damaged');
    const flags = archive.readUInt16LE(at + 8);
    const method = archive.readUInt16LE(at + 10);
    const compressedSize = archive.readUInt32LE(at + 20);
    const size = archive.readUInt32LE(at + 24);
    const nameLength = archive.readUInt16LE(at + 28);
    const extraLength = archive.readUInt16LE(at + 30);
    const commentLength = archive.readUInt16LE(at + 32);
    const local = archive.readUInt32LE(at + 42);
    const name = archive.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    at += 46 + nameLength + extraLength + commentLength;
    if (name.endsWith('/') || !wanted(name)) continue;
    if ((flags & 1) !== 0) throw new Error(`${name}: an encrypted entry in the plan archive`);
    if (local + 30 > archive.length || archive.readUInt32LE(local) !== 0x04034b50) throw new Error(`${name}: its entry in the plan archive is damaged`);
    const data = local + 30 + archive.readUInt16LE(local + 26) + archive.readUInt16LE(local + 28);
    const raw = archive.subarray(data, data + compressedSize);
    let content: Buffer;
    if (method === 0) content = Buffer.from(raw);
    else if (method === 8) content = zlib.inflateRawSync(raw);
    else throw new Error(`${name}: compression method ${method} in the plan archive: not read`);
    if (content.length !== size) throw new Error(`${name}: its size in the plan archive is not the recorded one`);
    files.set(name, content);
  }
  return files;
}
