import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { CliError, EXIT_FAILURE, type ErrorLike, oneLine } from '../errors.ts'

/** What the file system tells of a SQLite database that cannot be opened, written or backed up. */

export const isSqliteError = (e: ErrorLike) => e?.name === 'SQLiteError' || (typeof e?.code === 'string' && e.code.startsWith('SQLITE_'))

/** What names the SQLite file, unless a command says otherwise (FailureContext.pathOption). */
const PATH_OPTION = '--db or DATABASE_PATH'

/**
 * A database that is not where it is named: the line for a missing directory
 * or file, the same from every command (serve creates a missing file; the
 * commands that only read or change one, admin, backup and copy, refuse it).
 */
function cannotOpen(file: string, problem: string, option: string): string {
  return `cannot open the database ${file}: ${problem}; ${problem.startsWith('directory') && problem.endsWith('does not exist') ? 'create it or ' : ''}choose another file with ${option}`
}

/** A SQLite file a command uses but never creates, missing (exit status 1, as for serve's missing directory). */
export function noDatabase(path: string, option = PATH_OPTION): CliError {
  const file = resolve(path)
  return new CliError(cannotOpen(file, fileProblem(file) ?? 'the file does not exist', option))
}

/** A failure of SQLite on the database file at `path`, explained from what the file system shows; `option` names the file on the command line. */
export function databaseFailure(e: ErrorLike, path: string, option = PATH_OPTION): string {
  const file = resolve(path)
  const dir = dirname(file)
  const code = String(e.code ?? '')
  const sqlite = oneLine(String(e.message ?? code))
  const hint = `choose another file with ${option}`
  // (a directory given as the file fails as CANTOPEN, IOERR or READONLY, by who owns what is around it)
  const problem = fileProblem(file)
  if (problem) return cannotOpen(file, problem, option)
  if (code.startsWith('SQLITE_CANTOPEN')) {
    // a new file in a directory of root's (`/`, `/usr/local`, the shell's directory): no owner to run as
    const created = !existsSync(file) && statOf(dir)?.uid === 0
    const others = created ? undefined : anotherUsers(`cannot open the database ${file}`, file)
    if (others) return others
    if (!existsSync(file)) {
      return `cannot create the database ${file}: directory ${dir} is not writable; choose a file in a writable directory with ${option}`
    }
    return readOnly(`cannot open the database ${file}`, file, code, sqlite, hint)
  }
  if (code.startsWith('SQLITE_READONLY')) return readOnly(`cannot write the database ${file}`, file, code, sqlite, hint)
  if (code.startsWith('SQLITE_NOTADB')) return `${file} is not a SQLite database; ${hint}`
  if (code.startsWith('SQLITE_CORRUPT')) return `the database ${file} is damaged (${sqlite}); restore it from a backup`
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return `the database ${file} stayed locked by another process (${sqlite}); wait for it to finish and try again`
  }
  if (code.startsWith('SQLITE_FULL')) return `the database ${file} cannot grow: the disk is full; free some space`
  return `database ${file}: ${sqlite}`
}

/**
 * An existing database SQLite may not write: the line blames what the file
 * system shows is read-only for this process (the file, or the directory
 * where SQLite must create its -wal and -shm files, or both), since a 0644
 * file in a 0555 directory fails with the same "readonly database" as a 0444
 * file. access(2) sees chattr +i too, for root as for anyone.
 */
function readOnly(what: string, file: string, code: string, sqlite: string, hint: string): string {
  const others = anotherUsers(what, file)
  if (others) return others
  const dir = dirname(file)
  const fileLocked = !writable(file)
  const dirLocked = code === 'SQLITE_READONLY_DIRECTORY' || !writable(dir)
  const wal = 'SQLite creates its -wal and -shm files next to the database'
  if (fileLocked && dirLocked) {
    return `${what}: the file and its directory ${dir} are read-only (${wal}); make both writable (chmod u+w, or chattr -i) or ${hint}`
  }
  if (dirLocked) return `${what}: its directory ${dir} is not writable (${wal}); make the directory writable or ${hint}`
  if (fileLocked) return `${what}: the file is read-only; make it writable (chmod u+w, or chattr -i) or ${hint}`
  // left read-only by a start on the read-only file (SQLite gives them the file's mode), or made by another user
  const locked = ['-wal', '-shm'].map((end) => `${file}${end}`).filter((f) => existsSync(f) && !writable(f))
  if (locked.length) {
    const [them, are] = locked.length > 1 ? ['them', 'are'] : ['it', 'is']
    return `${what}: ${locked.join(' and ')} ${are} read-only; make ${them} writable (chmod u+w, or chown to this user) or ${hint}`
  }
  return `${what} (${sqlite}): the file, its directory ${dir} or its -wal and -shm files are not writable; make them writable or ${hint}`
}

function writable(path: string): boolean {
  return may(path, constants.W_OK)
}

function may(path: string, mode: number): boolean {
  try {
    accessSync(path, mode)
    return true
  } catch {
    return false
  }
}

/**
 * The line for a database this process may not use because another user
 * owns it: the file, or the directory it is in, is not readable and writable
 * (the directory: not writable or not searchable) for this user, and belongs
 * to another one. chmod would not help: only its owner (or root) may change
 * it, or the command may run as that user. Undefined when that is not it
 * (root is stopped by no owner: by chattr +i or a read-only mount).
 */
function anotherUsers(what: string, file: string): string | undefined {
  const me = process.geteuid?.()
  if (me === undefined || me === 0) return undefined
  const dir = dirname(file)
  const f = statOf(file)
  const d = statOf(dir)
  const fileUid = f?.uid ?? -1 // (used only where it stops, so known)
  const dirUid = d?.uid ?? -1
  // only where the owner's own bits allow it (rw- on the file, -wx on the directory): when not even
  // the owner may (/proc, a 0555 directory), the owner is not the obstacle, and the usual line says why
  const fileStops = f !== undefined && f.uid !== me && (f.mode & 0o600) === 0o600 && !may(file, constants.R_OK | constants.W_OK)
  const dirStops = d !== undefined && d.uid !== me && (d.mode & 0o300) === 0o300 && !may(dir, constants.W_OK | constants.X_OK)
  const user = `this user (${userName(me)})`
  const wal = 'SQLite creates its -wal and -shm files next to the database'
  const how = (uid: number) =>
    `run the command as ${userName(uid)}, or have ${uid === 0 ? 'root' : `${userName(uid)} (or root)`} change the owner or mode (chown, chmod)`
  if (fileStops && !may(file, constants.R_OK)) {
    return `${what}: the file belongs to another user, ${userName(fileUid)}, and ${user} may not read it; ${how(fileUid)}`
  }
  if (fileStops && dirStops && dirUid === fileUid) {
    return `${what}: the file and its directory ${dir} belong to another user, ${userName(fileUid)}, and ${user} may not write them (${wal}); ${how(fileUid)}`
  }
  if (fileStops) return `${what}: the file belongs to another user, ${userName(fileUid)}, and ${user} may not write it; ${how(fileUid)}`
  if (dirStops) {
    const verb = may(dir, constants.X_OK) ? `write in it (${wal})` : 'enter it'
    return `${what}: its directory ${dir} belongs to another user, ${userName(dirUid)}, and ${user} may not ${verb}; ${how(dirUid)}`
  }
  return undefined
}

function statOf(path: string): { uid: number; mode: number } | undefined {
  try {
    return statSync(path)
  } catch {
    return undefined
  }
}

/** A user's name, from /etc/passwd; `uid N` when it has none there. */
function userName(uid: number): string {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , id] = line.split(':')
      if (name && id !== '' && Number(id) === uid) return name
    }
  } catch {
    // no /etc/passwd (a scratch container): the number alone
  }
  return `uid ${uid}`
}
/** What creating a file can fail with, short of SQLite (the backup file is made before SQLite writes it). */
const CANNOT_CREATE = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'EACCES', 'EPERM', 'EROFS'])

/**
 * A failure to create the backup file, or of `VACUUM INTO file` to open it
 * (the live database, already open, is not the one it could not open). Any
 * other failure is returned as it is, to be explained as a database failure.
 */
export function backupFailure(error: unknown, file: string): unknown {
  const e = error as ErrorLike
  const sqliteCannotOpen = isSqliteError(e) && String(e.code).startsWith('SQLITE_CANTOPEN')
  if (!sqliteCannotOpen && !CANNOT_CREATE.has(String(e?.code))) return error
  const problem = fileProblem(file) ?? `directory ${dirname(file)} is not writable`
  const fix = problem.endsWith('does not exist')
    ? 'create it or choose another backup file'
    : problem.endsWith('not writable')
      ? 'choose a file in a writable directory'
      : 'choose another backup file'
  return new CliError(`cannot create the backup ${file}: ${problem}; ${fix}`, EXIT_FAILURE, { cause: error })
}

/**
 * What is wrong with a path a file should be created at, as far as the file
 * system shows: a directory missing on the way, or a directory where the file
 * should be. Undefined when nothing is visibly wrong.
 */
function fileProblem(file: string): string | undefined {
  const dir = dirname(file)
  if (!existsSync(dir)) return `directory ${dir} does not exist`
  if (!isDirectory(dir)) return `${dir} is not a directory`
  if (isDirectory(file)) return 'it is a directory, not a file'
  return undefined
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}
