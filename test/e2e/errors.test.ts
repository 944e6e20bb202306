import { Database } from 'bun:sqlite'
import { expect, test } from 'bun:test'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  type CliResult,
  freePort,
  installBinary,
  isRoot,
  makeUnwritable,
  run,
  runCli,
  tempDir,
  unwritableSkip,
  useBinary,
} from './support.ts'
import { skipIf, why } from '../support/skip.ts'

/**
 * Failures on the first run: whatever goes wrong at start-up or in a command
 * ends as ONE line on stderr that names what failed (the path, port or
 * address) — never Bun's dump of the minified bundle — with exit status 1 for
 * a runtime failure and 2 for a usage error. --debug adds the stack.
 */

const binary = useBinary()
const unwritable = await unwritableSkip()
const CLI = { timeoutMs: 15_000 }

/** The one line on stderr; fails the test unless there is exactly one, reasonably short, without source code. */
function oneLine(r: CliResult, code: number): string {
  const stderr = r.stderr.replace(/\n$/, '')
  expect({ signal: r.signal, code: r.code, lines: stderr.split('\n').length }).toEqual({ signal: null, code, lines: 1 })
  expect(stderr).toStartWith('conduit: ')
  expect(stderr.length).toBeLessThan(400)
  expect(stderr).not.toContain('fatal')
  expect(stderr).not.toContain('$bunfs')
  return stderr
}

/** Holds `port` on every interface (as another server would) while `work` runs. */
async function whileTaken<T>(work: (port: number) => Promise<T>): Promise<T> {
  const listener = Bun.listen({ hostname: '0.0.0.0', port: 0, socket: { data() {} } })
  try {
    return await work(listener.port)
  } finally {
    listener.stop(true)
  }
}

/** The first port anyone may bind (Linux lets it be lowered, down to 0 in some containers). */
const unprivilegedPorts = (() => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8'))
  } catch {
    return 1024
  }
})()

/** Serves a migrated c.db while `name` beside it (made empty when missing) cannot be written; `check` gets the one line and the directory. */
async function startWhileUnwritable(name: string, check: (line: string, cwd: string) => void): Promise<void> {
  const cwd = tempDir()
  expect((await runCli(binary(), ['migrate', '--db', 'c.db'], { cwd, ...CLI })).code).toBe(0)
  const path = join(cwd, name)
  if (!existsSync(path)) writeFileSync(path, '')
  const restore = await makeUnwritable(path, 'file')
  try {
    check(oneLine(await runCli(binary(), ['--port', String(freePort()), '--db', 'c.db'], { cwd, ...CLI }), 1), cwd)
  } finally {
    await restore()
  }
}

skipIf(why.sqlitePass).describe('serve: a failure to start is one line', () => {
  test('a port that is taken: exit 1, names the port, and leaves no database file behind', async () => {
    await whileTaken(async (port) => {
      const cwd = tempDir()
      const r = await runCli(binary(), ['--port', String(port)], { cwd, ...CLI })
      const line = oneLine(r, 1)
      expect(line).toContain(`:${port}`)
      expect(line).toContain('in use')
      expect(line).toMatch(/--port|PORT/)
      expect(readdirSync(cwd)).toEqual([])
    })
  }, 30_000)

  // binding below 1024 needs root (or CAP_NET_BIND_SERVICE): root runs the binary as nobody
  skipIf(unprivilegedPorts <= 80 && 'anyone may bind port 80 here (net.ipv4.ip_unprivileged_port_start)').test(
    'a port below 1024 without the right to bind it: exit 1, names the port and the way out',
    async () => {
      const dir = installBinary(binary())
      chmodSync(dir, 0o777)
      const asNobody = isRoot ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : []
      const r = await run([...asNobody, join(dir, 'conduit'), '--port', '80', '--host', '127.0.0.1'], { cwd: dir, timeoutMs: 15_000 })
      const line = oneLine(r, 1)
      expect(line).toContain('127.0.0.1:80')
      expect(line).toMatch(/permission|not permitted|privileged/i)
      expect(line).toMatch(/--port|PORT/)
      expect(readdirSync(dir)).toEqual(['conduit'])
    },
    30_000,
  )

  test('--debug (or LOG_LEVEL=debug) adds the stack after the same first line', async () => {
    await whileTaken(async (port) => {
      const plain = oneLine(await runCli(binary(), ['--port', String(port)], CLI), 1)
      for (const [args, env] of [
        [['--debug', '--port', String(port)], {}],
        [['--port', String(port)], { LOG_LEVEL: 'debug' }],
      ] as const) {
        const r = await runCli(binary(), [...args], { env, ...CLI })
        expect(r.code).toBe(1)
        const lines = r.stderr.trim().split('\n')
        expect(lines[0]).toBe(plain)
        expect(lines.length).toBeGreaterThan(1)
        expect(lines.slice(1).join('\n')).toMatch(/\bat /)
      }
    })
  }, 30_000)

  test('an address that is not on this machine: exit 1, names the address', async () => {
    const cwd = tempDir()
    const r = await runCli(binary(), ['--host', '192.0.2.1', '--port', String(freePort())], { cwd, ...CLI })
    const line = oneLine(r, 1)
    expect(line).toContain('192.0.2.1')
    expect(line).toMatch(/--host|HOST/)
    expect(readdirSync(cwd)).toEqual([])
  }, 30_000)

  test('a host name that does not resolve: exit 1, names it, and does not blame the port', async () => {
    const cwd = tempDir()
    const r = await runCli(binary(), ['--host', 'nonexistent.invalid', '--port', String(freePort())], { cwd, ...CLI })
    const line = oneLine(r, 1)
    expect(line).toContain('nonexistent.invalid')
    expect(line).not.toContain('in use')
    expect(readdirSync(cwd)).toEqual([])
  }, 30_000)

  test('DATABASE_PATH in a directory that does not exist: exit 1, names the directory', async () => {
    const cwd = tempDir()
    const missing = join(cwd, 'missing', 'sub')
    const r = await runCli(binary(), ['--port', String(freePort())], { cwd, env: { DATABASE_PATH: join(missing, 'c.db') }, ...CLI })
    const line = oneLine(r, 1)
    expect(line).toContain(missing)
    expect(line).toContain('does not exist')
    expect(readdirSync(cwd)).toEqual([])
  }, 30_000)

  test('DATABASE_PATH in a directory nobody can write (/proc): exit 1, names the path', async () => {
    const r = await runCli(binary(), ['--port', String(freePort())], { env: { DATABASE_PATH: '/proc/conduit.db' }, ...CLI })
    const line = oneLine(r, 1)
    expect(line).toContain('/proc/conduit.db')
    expect(line).toContain('not writable')
  }, 30_000)

  test('DATABASE_PATH naming a directory: exit 1, names the path', async () => {
    const cwd = tempDir()
    mkdirSync(join(cwd, 'data'))
    const r = await runCli(binary(), ['--port', String(freePort()), '--db', 'data'], { cwd, ...CLI })
    const line = oneLine(r, 1)
    expect(line).toContain(join(cwd, 'data'))
    expect(line).toContain('directory')
    expect(readdirSync(join(cwd, 'data'))).toEqual([])
  }, 30_000)

  skipIf(unwritable).test(
    'a database file that cannot be written: exit 1, names the file',
    async () => {
      await startWhileUnwritable('c.db', (line, cwd) => {
        expect(line).toContain(join(cwd, 'c.db'))
        expect(line).toContain('the file is read-only')
        expect(line).not.toContain('directory')
        // refused before SQLite made its -wal and -shm beside it (with the file's mode, they would refuse the next start)
        expect(readdirSync(cwd)).toEqual(['c.db'])
      })
    },
    30_000,
  )

  // what an operator meets: chmod 444, then the advice followed (root ignores the mode: it runs the binary as nobody)
  test('a database file made read-only (chmod 444): refused with nothing made beside it, so chmod u+w is enough for the next start', async () => {
    const dir = installBinary(binary())
    chmodSync(dir, 0o777)
    const asNobody = isRoot ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : []
    const conduit = [...asNobody, join(dir, 'conduit')]
    expect((await run([...conduit, 'migrate', '--db', 'c.db'], { cwd: dir, timeoutMs: 15_000 })).code).toBe(0)
    chmodSync(join(dir, 'c.db'), 0o444)
    const refused = await run([...conduit, '--port', String(freePort()), '--host', '127.0.0.1', '--db', 'c.db'], {
      cwd: dir,
      timeoutMs: 15_000,
    })
    expect(oneLine(refused, 1)).toContain(`${join(dir, 'c.db')}: the file is read-only; make it writable (chmod u+w`)
    expect(readdirSync(dir).sort()).toEqual(['c.db', 'conduit'])
    chmodSync(join(dir, 'c.db'), 0o644)
    const again = await run([...conduit, 'migrate', '--db', 'c.db'], { cwd: dir, timeoutMs: 15_000 })
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: '' })
  }, 30_000)

  // what the fix above prevents, met by whoever started on a read-only file before it: the line names the file to fix
  skipIf(unwritable).test(
    'a -shm file left read-only beside a writable database: exit 1, names it',
    async () => {
      await startWhileUnwritable('c.db-shm', (line, cwd) =>
        expect(line).toContain(`${join(cwd, 'c.db-shm')} is read-only; make it writable`),
      )
    },
    30_000,
  )

  skipIf(unwritable).test(
    'a database in a directory that cannot be written (no room for its -wal file): exit 1, names the file',
    async () => {
      const cwd = tempDir()
      const data = join(cwd, 'data')
      mkdirSync(data)
      expect((await runCli(binary(), ['migrate', '--db', 'data/c.db'], { cwd, ...CLI })).code).toBe(0)
      const restore = await makeUnwritable(data, 'directory')
      try {
        const r = await runCli(binary(), ['--port', String(freePort()), '--db', 'data/c.db'], { cwd, ...CLI })
        const line = oneLine(r, 1)
        expect(line).toContain(join(data, 'c.db'))
        expect(line).toContain(`its directory ${data} is not writable`)
        expect(line).not.toContain('read-only')
      } finally {
        await restore()
      }
    },
    30_000,
  )
})

skipIf(why.sqlitePass).describe('commands: a failure is one line', () => {
  test('migrate into a directory that does not exist: exit 1, names the directory', async () => {
    const cwd = tempDir()
    const r = await runCli(binary(), ['migrate', '--db', 'nowhere/x.db'], { cwd, ...CLI })
    const line = oneLine(r, 1)
    expect(line).toContain(join(cwd, 'nowhere'))
    expect(readdirSync(cwd)).toEqual([])
  }, 30_000)

  test('backup into a directory that does not exist: exit 1, names the directory', async () => {
    const cwd = tempDir()
    expect((await runCli(binary(), ['migrate'], { cwd, ...CLI })).code).toBe(0)
    const r = await runCli(binary(), ['backup', 'nowhere/out.db'], { cwd, ...CLI })
    const line = oneLine(r, 1)
    expect(line).toContain(join(cwd, 'nowhere'))
    expect(line).toContain('does not exist')
    expect(readdirSync(cwd).sort()).toEqual(['conduit.db'])
  }, 30_000)

  test('seed on a database that already has users: exit 2, names the database, leaves it as it was', async () => {
    const cwd = tempDir()
    const seed = ['seed', '--db', 's.db', '--users', '2', '--articles', '1']
    const first = await runCli(binary(), seed, { cwd, ...CLI })
    expect(first.code).toBe(0)
    const again = await runCli(binary(), seed, { cwd, ...CLI })
    const line = oneLine(again, 2)
    expect(line).toContain(join(cwd, 's.db'))
    expect(line).toContain('2 users')
    const db = new Database(join(cwd, 's.db'), { readonly: true })
    try {
      expect(db.query('SELECT count(*) AS n FROM users').get()).toEqual({ n: 2 })
    } finally {
      db.close()
    }
  }, 30_000)

  test('a database migrated by a newer binary is refused: exit 2, names its version, leaves it as it was', async () => {
    const cwd = tempDir()
    expect((await runCli(binary(), ['migrate'], { cwd, ...CLI })).code).toBe(0)
    const db = new Database(join(cwd, 'conduit.db'))
    db.run('PRAGMA user_version = 99')
    db.close()
    for (const args of [['migrate'], []]) {
      const line = oneLine(await runCli(binary(), args, { cwd, ...CLI }), 2)
      expect(line).toContain('version 99 is newer than this binary knows')
      expect(line).toContain(join(cwd, 'conduit.db'))
    }
    const after = new Database(join(cwd, 'conduit.db'))
    expect((after.query('PRAGMA user_version').get() as { user_version: number }).user_version).toBe(99)
    after.close()
  }, 30_000)

  test("another program's SQLite database is refused: exit 2, names its tables, leaves it as it was", async () => {
    const cwd = tempDir()
    const file = join(cwd, 'notes.db')
    const other = new Database(file)
    other.run('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)')
    other.run("INSERT INTO notes (body) VALUES ('keep me')")
    other.close()
    for (const args of [
      ['migrate', '--db', file],
      ['--db', file, '--port', '0'],
    ]) {
      const line = oneLine(await runCli(binary(), args, { cwd, ...CLI }), 2)
      expect(line).toBe(
        `conduit: ${file}: holds another program's tables (notes), not Conduit's; choose a new file or one of Conduit's with --db or DATABASE_PATH`,
      )
    }
    const after = new Database(file, { readonly: true })
    expect(after.query("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([{ name: 'notes' }])
    expect((after.query('PRAGMA user_version').get() as { user_version: number }).user_version).toBe(0)
    after.close()
  }, 30_000)

  test('a file that is not a database: exit 1, names it', async () => {
    const cwd = tempDir()
    writeFileSync(join(cwd, 'notes.txt'), 'not a database, just some text that is long enough to have a header\n'.repeat(20))
    const r = await runCli(binary(), ['migrate', '--db', 'notes.txt'], { cwd, ...CLI })
    const line = oneLine(r, 1)
    expect(line).toContain(join(cwd, 'notes.txt'))
    expect(line).toContain('not a SQLite database')
  }, 30_000)
})

skipIf(why.sqlitePass).describe('usage errors are one line ending with the way to help (exit 2)', () => {
  test.each([
    ['an unknown long flag', ['--no-such-flag'], '--no-such-flag'],
    ['an unknown short flag', ['-x'], '-x'],
    ['an unknown flag after a command', ['seed', '--bogus'], '--bogus'],
    ['a flag with no value', ['--port'], '--port'],
    ['a flag whose value looks like a flag', ['migrate', '--db', '--port'], '--db'],
    ['a value for a switch', ['--help=yes'], '--help'],
  ])(
    '%s',
    async (_, args, mention) => {
      const cwd = tempDir()
      const line = oneLine(await runCli(binary(), args, { cwd, ...CLI }), 2)
      expect(line).toContain(mention)
      expect(line).toEndWith('see conduit --help')
      expect(readdirSync(cwd)).toEqual([])
    },
    30_000,
  )

  test.each([
    [['seed', '--articles', '-5'], '--articles', '-5'],
    [['seed', '--users', '-1'], '--users', '-1'],
    [['--port', '-1'], '--port', '-1'],
  ])(
    'a negative number: %p',
    async (args, flag, value) => {
      const cwd = tempDir()
      const line = oneLine(await runCli(binary(), args, { cwd, ...CLI }), 2)
      expect(line).toContain(flag)
      expect(line).toContain(`must be between`)
      expect(line).toEndWith(`got ${value}`)
      expect(readdirSync(cwd)).toEqual([])
    },
    30_000,
  )
})
