import { expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { chmodSync, chownSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { skipIf, why } from '../support/skip.ts'
import {
  api,
  installBinary,
  isRoot,
  makeUnwritable,
  register,
  run,
  runCli,
  startServer,
  tempDir,
  unwritableSkip,
  useBinary,
} from './support.ts'

/**
 * The files the binary keeps beside a SQLite database: who may read them,
 * and what it says when one it shares with other processes cannot be used.
 */
const binary = useBinary()
const unwritable = await unwritableSkip()
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8)

skipIf(why.sqliteOnly).describe('the SQLite files', () => {
  test('a new database, its -wal and -shm, and a backup are readable by their owner only (they hold the signing secret)', async () => {
    const cwd = tempDir()
    const db = join(cwd, 'c.db')
    expect((await runCli(binary(), ['migrate', '--db', db], { cwd })).code).toBe(0)
    expect(mode(db)).toBe('600')
    const server = await startServer(binary(), { env: { HOST: '127.0.0.1', DATABASE_PATH: db } })
    try {
      await register(server.url)
      expect([mode(db), mode(`${db}-wal`), mode(`${db}-shm`), mode(`${db}-changes`)]).toEqual(['600', '600', '600', '600'])
      const backup = join(cwd, 'b.db')
      expect((await runCli(binary(), ['backup', backup, '--db', db], { cwd })).code).toBe(0)
      expect(mode(backup)).toBe('600')
    } finally {
      await server.stop()
    }
    // a database made by serve itself, too
    const other = join(tempDir(), 'new.db')
    const fresh = await startServer(binary(), { env: { HOST: '127.0.0.1', DATABASE_PATH: other } })
    expect(mode(other)).toBe('600')
    await fresh.stop()
  }, 60_000)

  test('the database file removed or replaced under a running server: 503 and /ready 503, no write acknowledged into the lost file', async () => {
    for (const how of ['removed', 'replaced'] as const) {
      const cwd = tempDir()
      const db = join(cwd, 'c.db')
      const server = await startServer(binary(), { env: { HOST: '127.0.0.1', DATABASE_PATH: db, LOG_LEVEL: 'warn' } })
      try {
        const user = await register(server.url)
        const write = () =>
          api(server.url, 'POST', '/api/articles', {
            token: user.token,
            body: { article: { title: 'Into what?', description: 'd', body: 'b' } },
          })
        expect((await write()).status).toBe(201)
        for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true })
        // replaced: a backup put in its place while the server runs, a new file at the path
        if (how === 'replaced') expect((await runCli(binary(), ['migrate', '--db', db], { cwd })).code).toBe(0)
        // the path is checked once a second
        await Bun.sleep(1_200)
        const refused = await write()
        expect({ how, status: refused.status, body: refused.body }).toEqual({
          how,
          status: 503,
          body: { errors: { database: ['is unavailable; try again shortly'] } },
        })
        expect({ how, ready: (await api(server.url, 'GET', '/ready')).status }).toEqual({ how, ready: 503 })
        // (removed: the checkpointer's own connection may have made a new file at the path meanwhile)
        expect(server.stdout()).toMatch(
          /reason="the database file \S+c\.db was (removed|replaced) while this process had it open: restart the service"/,
        )
      } finally {
        await server.stop()
      }
    }
  }, 60_000)

  test('a write lock held by another process past busy_timeout: 503 with Retry-After, nothing written; then served', async () => {
    const db = join(tempDir(), 'c.db')
    const server = await startServer(binary(), { env: { HOST: '127.0.0.1', DATABASE_PATH: db } })
    const other = new Database(db)
    try {
      const user = await register(server.url)
      other.run('BEGIN IMMEDIATE')
      const post = (title: string) =>
        fetch(`${server.url}/api/articles`, {
          method: 'POST',
          headers: { authorization: `Token ${user.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ article: { title, description: 'd', body: 'b' } }),
          signal: AbortSignal.timeout(20_000),
        })
      const refused = await post('while locked')
      expect([refused.status, refused.headers.get('retry-after')]).toEqual([503, '2'])
      expect(await refused.json()).toEqual({ errors: { database: ['is unavailable; try again shortly'] } })
      other.run('ROLLBACK')
      expect((await post('after the lock')).status).toBe(201)
      expect(other.query("SELECT count(*) AS n FROM articles WHERE title = 'while locked'").get()).toEqual({ n: 0 })
      expect(server.stdout()).toContain('database is locked')
    } finally {
      other.close()
      await server.stop()
    }
  }, 60_000)

  skipIf(unwritable).test(
    'a change signal file the server cannot open: it serves, and says once why it is slower and how to fix it',
    async () => {
      const cwd = tempDir()
      const db = join(cwd, 'c.db')
      expect((await runCli(binary(), ['migrate', '--db', db], { cwd })).code).toBe(0)
      // as one made by root (a command run as root before the service wrote) is for the service's user
      writeFileSync(`${db}-changes`, new Uint8Array(4096))
      const restore = await makeUnwritable(`${db}-changes`, 'file')
      try {
        const server = await startServer(binary(), { env: { HOST: '127.0.0.1', DATABASE_PATH: db } })
        const user = await register(server.url)
        expect(user.token).toBeTruthy()
        await server.stop()
        const warnings = server
          .stdout()
          .split('\n')
          .filter((l) => l.includes(' WARN '))
        expect(warnings).toHaveLength(1)
        expect(warnings[0]).toContain(
          `WARN cannot use the change signal ${db}-changes, so every request asks SQLite what changed (slower): give the file to the service's user (chown) or remove it while no process uses the database reason=`,
        )
      } finally {
        await restore()
      }
    },
    30_000,
  )

  skipIf(!isRoot && 'needs root: a command run as root on a database another user owns').test(
    "a command run as root on another user's database makes the change signal that user's, as SQLite makes its -wal and -shm",
    async () => {
      const cwd = tempDir()
      const db = join(cwd, 'c.db')
      expect((await runCli(binary(), ['migrate', '--db', db], { cwd })).code).toBe(0)
      chownSync(db, 65534, 65534)
      const seed = await runCli(binary(), ['seed', '--db', db, '--users', '2', '--articles', '2'], { cwd })
      expect(seed.code).toBe(0)
      const signal = statSync(`${db}-changes`)
      expect({ uid: signal.uid, gid: signal.gid, mode: mode(`${db}-changes`) }).toEqual({ uid: 65534, gid: 65534, mode: '600' })
    },
    30_000,
  )
})

const sha = (path: string) => new Bun.CryptoHasher('sha256').update(readFileSync(path)).digest('hex')
const journalMode = (path: string) => {
  const db = new Database(path, { readonly: true })
  try {
    return (db.query('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode
  } finally {
    db.close()
  }
}

/** Another program's file: one table and a row, in rollback-journal mode (as sqlite3 and Python make it), `version` its user_version. */
function othersFile(file: string, version: number): void {
  const db = new Database(file)
  db.run('CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount INTEGER)')
  db.run('INSERT INTO invoices (amount) VALUES (5)')
  db.run(`PRAGMA user_version = ${version}`)
  db.close()
}

/** The commands that open a SQLite file, with what names it on their command line. */
const ON_A_FILE: [string, (file: string) => string[], string][] = [
  ['migrate', (f) => ['migrate', '--db', f], '--db or DATABASE_PATH'],
  ['serve', (f) => ['serve', '--port', '0', '--host', '127.0.0.1', '--db', f], '--db or DATABASE_PATH'],
  ['seed', (f) => ['seed', '--users', '1', '--articles', '0', '--db', f], '--db or DATABASE_PATH'],
  ['admin users list', (f) => ['admin', 'users', 'list', '--db', f], '--db or DATABASE_PATH'],
  ['admin users show', (f) => ['admin', 'users', 'show', 'jake', '--db', f], '--db or DATABASE_PATH'],
  ['admin users lock', (f) => ['admin', 'users', 'lock', 'jake', '--db', f], '--db or DATABASE_PATH'],
  ['backup', (f) => ['backup', join(tempDir(), 'out.db'), '--db', f], '--db or DATABASE_PATH'],
  ['copy', (f) => ['copy', '--from', f, '--to', 'postgres://postgres@127.0.0.1:1/conduit'], '--from'],
]

skipIf(why.sqliteOnly).describe("files that are not Conduit's, and files a command only reads", () => {
  // user_version 0, and one another program set: below this binary's schema version, and above it
  test.each([0, 3, 42])(
    "another program's file (user_version %i): every command refuses it (2) in one line, and leaves it byte for byte",
    async (version) => {
      const dir = tempDir()
      const file = join(dir, 'invoices.db')
      othersFile(file, version)
      const before = sha(file)
      for (const [name, args, option] of ON_A_FILE) {
        const r = await runCli(binary(), args(file), { cwd: dir })
        expect({ name, code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({
          name,
          code: 2,
          stderr: `conduit: ${file}: holds another program's tables (invoices), not Conduit's; choose a new file or one of Conduit's with ${option}\n`,
          stdout: '',
        })
        expect({ name, sha: sha(file), journal: journalMode(file), files: readdirSync(dir) }).toEqual({
          name,
          sha: before,
          journal: 'delete',
          files: ['invoices.db'],
        })
      }
    },
    60_000,
  )

  // root writes a 0444 file: it runs the binary as nobody, the file's owner
  test('a read-only database (chmod 444): backup and admin users list read it and leave it as it was; the next start is not refused', async () => {
    const dir = installBinary(binary())
    chmodSync(dir, 0o777)
    const asNobody = isRoot ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : []
    const conduit = [...asNobody, join(dir, 'conduit')]
    const cli = (...args: string[]) => run([...conduit, ...args], { cwd: dir, timeoutMs: 15_000 })
    expect((await cli('seed', '--users', '2', '--articles', '1', '--db', 'c.db')).code).toBe(0)
    chmodSync(join(dir, 'c.db'), 0o444)
    const before = sha(join(dir, 'c.db'))
    const backup = await cli('backup', 'b.db', '--db', 'c.db')
    expect({ code: backup.code, stderr: backup.stderr }).toEqual({ code: 0, stderr: '' })
    const list = await cli('admin', 'users', 'list', '--db', 'c.db')
    expect({ code: list.code, stderr: list.stderr }).toEqual({ code: 0, stderr: '' })
    expect(list.stdout.split('\n').filter(Boolean)).toHaveLength(3)
    expect(sha(join(dir, 'c.db'))).toBe(before)
    chmodSync(join(dir, 'c.db'), 0o644)
    const again = await cli('migrate', '--db', 'c.db')
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: '' })
    const copy = new Database(join(dir, 'b.db'), { readonly: true })
    expect(copy.query('SELECT count(*) AS n FROM users').get()).toEqual({ n: 2 })
    copy.close()
  }, 60_000)

  skipIf(!isRoot && 'needs root: a database that belongs to another user').test(
    'a database of another user that this one may not read (0600): every command names its owner, not chmod',
    async () => {
      const dir = installBinary(binary())
      chmodSync(dir, 0o755)
      const data = tempDir()
      chmodSync(data, 0o755)
      const file = join(data, 'c.db')
      expect((await runCli(binary(), ['migrate', '--db', file])).code).toBe(0)
      const before = sha(file)
      const asNobody = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', join(dir, 'conduit')]
      for (const [name, args] of ON_A_FILE) {
        const r = await run([...asNobody, ...args(file)], { cwd: dir, timeoutMs: 15_000 })
        const what = ['migrate', 'serve', 'seed', 'admin users lock'].includes(name) ? 'cannot write' : 'cannot open'
        expect({ name, code: r.code, stderr: r.stderr.replace(/\(this user \([^)]*\)/, '(this user (nobody)') }).toEqual({
          name,
          code: 1,
          stderr: `conduit: ${what} the database ${file}: the file belongs to another user, root, and this user (nobody) may not read it; run the command as root, or have root change the owner or mode (chown, chmod)\n`,
        })
      }
      expect({ sha: sha(file), files: readdirSync(data) }).toEqual({ sha: before, files: ['c.db'] })
    },
    60_000,
  )
})
