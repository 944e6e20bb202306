import { Database } from 'bun:sqlite'
import { accessSync, chmodSync, closeSync, constants, existsSync, openSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { DatabaseUnavailable } from '../types.ts'
import { contentsOf, refuseUnknown } from './migrate.ts'

/**
 * Opens the database with the settings every connection needs:
 * - strict: a missing named parameter is an error, not a silent NULL;
 * - WAL + synchronous=NORMAL: a committed transaction survives a crash of the
 *   process (only a power loss can take the last ones), readers never block;
 * - busy_timeout: a second process (backup, migrate) waits instead of failing;
 * - foreign_keys: cascades and references are enforced.
 */
export function openDatabase(path: string): Database {
  const db = new Database(path, { create: true, strict: true })
  db.run('PRAGMA busy_timeout = 5000')
  if (path !== ':memory:') db.run('PRAGMA journal_mode = WAL')
  db.run('PRAGMA synchronous = NORMAL')
  db.run('PRAGMA foreign_keys = ON')
  db.run('PRAGMA temp_store = MEMORY')
  return db
}

/**
 * Opens the database of a command that writes it (serve, migrate, seed,
 * admin), as openDatabase does, after two things SQLite would do otherwise:
 * - a new file is made readable by its owner only (0600): it holds the JWT
 *   signing secret and every password hash, and SQLite would make it 0644
 *   under the usual umask. SQLite gives its -wal and -shm the file's mode.
 * - a file this process may not write is refused before SQLite makes its
 *   -wal and -shm beside it with the file's read-only mode: they would still
 *   refuse the next start once the file itself was made writable.
 * And a file that is not Conduit's (another program's, or of a newer Conduit)
 * is refused as it is, read through a read-only connection first: opened
 * writable, it would be made a WAL database before migrate could refuse it.
 */
export function openWritable(path: string): Database {
  if (path !== ':memory:' && path !== '') {
    createPrivately(path)
    if (!writable(path)) {
      throw Object.assign(new Error(`the database file ${path} is read-only for this process`), { code: 'SQLITE_READONLY' })
    }
    // one left read-only beside it: refused before SQLite opens it, which would then remove it on closing
    for (const beside of [`${path}-wal`, `${path}-shm`]) {
      if (!writable(beside)) throw Object.assign(new Error(`${beside} is read-only for this process`), { code: 'SQLITE_READONLY' })
    }
    if (existsSync(path)) {
      const reading = openReadOnly(path)
      try {
        refuseUnknown(contentsOf(reading))
      } finally {
        reading.close()
      }
    }
  }
  return openDatabase(path)
}

/**
 * Opens an existing database a command only reads (backup, copy's source, the
 * admin commands that list or show) so that it is never changed, its journal
 * mode included (query_only), and a file or directory this process may only
 * read will do:
 * - where this process may write the file and its directory, SQLite keeps
 *   the -wal and -shm of a WAL database as for any connection, and removes
 *   them when the last one closes;
 * - else read-only. SQLite then makes a missing -wal and -shm beside a WAL
 *   database and leaves them, and gives them the file's mode (and owner, as
 *   root), those already there too: they are given back their owner's write
 *   permission, so that they do not refuse the next start once the file
 *   itself is made writable again.
 */
export function openReadOnly(path: string): Database {
  const writes = writable(path) && writable(dirname(resolve(path)))
  const db = writes ? new Database(path, { readwrite: true, strict: true }) : new Database(path, { readonly: true, strict: true })
  try {
    db.run('PRAGMA busy_timeout = 5000')
    db.run('PRAGMA query_only = ON')
    // the first read opens the WAL, making its files
    db.query('SELECT count(*) FROM sqlite_master').get()
  } catch (e) {
    db.close()
    throw e
  }
  if (!writes) for (const f of [`${path}-wal`, `${path}-shm`]) ownerMayWrite(f)
  return db
}

function ownerMayWrite(path: string): void {
  try {
    const mode = statSync(path).mode & 0o777
    if ((mode & 0o600) !== 0o600) chmodSync(path, mode | 0o600)
  } catch {
    // not made (a database in rollback mode), or not this process's to change
  }
}

/** Creates `path` empty (an empty file is an empty SQLite database) with mode 0600, unless it exists; any other failure is left for SQLite to report. */
function createPrivately(path: string): void {
  try {
    closeSync(openSync(path, 'wx', 0o600))
  } catch {
    // there already, or cannot be made: SQLite says which, as it always did
  }
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK)
    return true
  } catch (e) {
    // missing (a directory that does not exist, or a file on the way that is not one): SQLite's own error names it
    const code = (e as { code?: string }).code
    return code === 'ENOENT' || code === 'ENOTDIR'
  }
}

/**
 * Flushes the WAL into the main file and closes; used on shutdown. On a full
 * disk (or an I/O error) the flush fails and the connection is closed all the
 * same: every committed write is in the WAL, which the next open reads. That
 * failure is thrown as DatabaseUnavailable, for one line rather than a stack.
 */
export function closeDatabase(db: Database): void {
  try {
    db.run('PRAGMA wal_checkpoint(TRUNCATE)')
    db.run('PRAGMA optimize')
  } catch (e) {
    throw isStorageFailure(e) ? new DatabaseUnavailable(e) : e
  } finally {
    db.close()
  }
}

/** SQLite reports constraint violations with a code; the database, not the code, enforces uniqueness. */
export function isUniqueViolation(e: unknown): boolean {
  const code = (e as { code?: string } | null)?.code
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
}

/**
 * SQLite's codes for storage that cannot take a write now: the disk (or the
 * file system's quota) is full, or the device fails (an I/O error, extended
 * codes included). The service answers them 503, as a database it cannot
 * reach: the request was fine, and may succeed once space is freed.
 */
export function isStorageFailure(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code
  return typeof code === 'string' && (code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR'))
}
