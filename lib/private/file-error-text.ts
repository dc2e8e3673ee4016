/**
 * What a failed file operation means, as words for a sentence: Node's error messages start with the
 * errno code and end with the system call and path (`EISDIR: illegal operation on a directory,
 * read`), which tell a user nothing they can act on.
 */
const ERRNO_TEXT: Readonly<Record<string, string>> = {
  ENOENT: 'it does not exist',
  EISDIR: 'it is a directory, not a file',
  ENOTDIR: 'a part of the path is a file, not a directory',
  EACCES: 'permission denied',
  EPERM: 'the operation is not permitted',
  EEXIST: 'it already exists',
  ENOTEMPTY: 'the directory is not empty',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space is left on the device',
  EDQUOT: 'the disk quota is used up',
  ELOOP: 'it is a loop of symbolic links',
  ENAMETOOLONG: 'the name is too long',
  EMFILE: 'too many files are open',
  ENFILE: 'too many files are open',
  EBUSY: 'it is busy',
  EIO: 'the device reports an input/output error',
  ENXIO: 'no device answers at it',
  EXDEV: 'it is on another file system',
  ETXTBSY: 'it is a program that is running',
  EINVAL: 'the operation is not possible on it',
  ERR_FS_FILE_TOO_LARGE: 'it is too large to read',
};

/** The code of a file operation's error (`ENOENT`), if it has one. */
export function fileErrorCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Why a file operation failed, in words without the errno code: `it does not exist`, `permission
 * denied`. An error of unknown code keeps its message, without Node's `CODE: ` prefix and
 * `, syscall 'path'` suffix.
 */
export function fileErrorText(error: unknown): string {
  const code = fileErrorCode(error);
  const known = code === undefined ? undefined : ERRNO_TEXT[code];
  if (known !== undefined) return known;
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^[A-Z][A-Z0-9_]+: /, '').replace(/, [a-z]+ '[^']*'(?: -> '[^']*')?$/, '');
}
