import { closeSync, fchownSync, fstatSync, ftruncateSync, openSync, statSync } from 'node:fs'

/** The file's size: one page, of which the first four bytes are the counter. */
const SIZE = 4096

/**
 * A counter that every process on one SQLite file shares: a 4-byte integer in
 * a small file beside the database (`<database>-changes`), mapped into each
 * process (MAP_SHARED), as SQLite shares its WAL index through `-shm`. A
 * process that committed a write rings it before it answers; every request
 * reads it (one memory load) and asks SQLite what changed (`PRAGMA
 * data_version`, then the change log) only when it moved.
 * Its value means nothing; only that it moved.
 *
 * The file is never truncated (a mapped file that shrinks would crash the
 * processes mapping it): it is created empty and extended to its size, by
 * whichever process comes first.
 */
export class ChangeSignal {
  private constructor(
    private readonly path: string,
    private readonly counter: Int32Array,
    private readonly inode: number,
  ) {}

  /**
   * The signal beside `database`, or why that file cannot be made or mapped
   * (then SQLite is asked at every request). Made by root (a command run as
   * root on the service's database), it is given to the database file's
   * owner, as SQLite gives its -wal and -shm: else the service could not
   * open it.
   */
  static open(database: string): ChangeSignal | Error {
    const path = `${database}-changes`
    try {
      let fd: number
      let made = true
      try {
        fd = openSync(path, 'wx', 0o600)
      } catch (e) {
        if ((e as { code?: string }).code !== 'EEXIST') throw e
        // there already: opened for writing (never truncated)
        fd = openSync(path, 'a+', 0o600)
        made = false
      }
      let inode: number
      try {
        if (made && process.getuid?.() === 0) {
          const owner = statSync(database)
          if (owner.uid !== 0) fchownSync(fd, owner.uid, owner.gid)
        }
        const st = fstatSync(fd)
        if (st.size < SIZE) ftruncateSync(fd, SIZE)
        inode = st.ino
      } finally {
        closeSync(fd)
      }
      const bytes = Bun.mmap(path, { shared: true })
      if (bytes.byteLength < SIZE) return new Error(`${path} is shorter than ${SIZE} bytes`)
      return new ChangeSignal(path, new Int32Array(bytes.buffer, bytes.byteOffset, 1), inode)
    } catch (e) {
      return e instanceof Error ? e : new Error(String(e))
    }
  }

  /** Tells every process mapping the file that something was committed. */
  ring(): void {
    Atomics.add(this.counter, 0, 1)
  }

  read(): number {
    return Atomics.load(this.counter, 0)
  }

  /** Whether the path still names the mapped file (not removed, or replaced by another that other processes map). */
  current(): boolean {
    try {
      return statSync(this.path).ino === this.inode
    } catch {
      return false
    }
  }
}
