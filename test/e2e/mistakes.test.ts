import { expect, test } from 'bun:test'
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Command, FLAGS, NUMERIC, type OptionName } from '../../src/cli/command.ts'
import { usageOf } from '../../src/cli/help.ts'
import { COMMANDS } from '../../src/cli/registry.ts'
import { skipIf, why } from '../support/skip.ts'
import { freePort, runCli, startServer, tempDir, useBinary } from './support.ts'

/**
 * One wording and one exit status per kind of mistake, whatever the command:
 * every command of the binary is run with every mistake that applies to it,
 * and its one line on stderr and its status are compared with the kind's.
 *
 * - status 2, a mistake on the command line: an unknown option, a bad value,
 *   a wrong number of arguments;
 * - status 1, what the command line names is not usable: a missing directory
 *   or file, a directory that cannot be written, a database or a server that
 *   cannot be reached.
 */

const binary = useBinary()
const DB = '--db or DATABASE_PATH'
const URL_OPTION = 'DATABASE_URL or --db'

/** How each command is run when nothing is wrong but the mistake: its arguments, where the database goes. */
interface Invocation {
  /** the arguments, with `db` where the database is named (a path or a URL) */
  args: (db: string) => string[]
  /** what names the database on its command line, for the lines that say how to fix it */
  pathOption?: string
  urlOption?: string
  /** whether it creates a missing database file (serve, migrate, seed) or refuses one */
  creates?: boolean
}

const account = (name: string): Invocation => ({ args: (db) => [...name.split(' '), 'jake', '--db', db] })
const INVOCATIONS: Record<string, Invocation> = {
  serve: { args: (db) => ['serve', '--port', '0', '--host', '127.0.0.1', '--db', db], creates: true },
  migrate: { args: (db) => ['migrate', '--db', db], creates: true },
  seed: { args: (db) => ['seed', '--users', '1', '--articles', '0', '--db', db], creates: true },
  backup: { args: (db) => ['backup', join(tempDir(), 'out.db'), '--db', db] },
  copy: { args: (db) => ['copy', '--from', db, '--to', 'postgres://postgres@127.0.0.1:1/conduit'], pathOption: '--from' },
  healthcheck: { args: () => ['healthcheck', '--port', String(freePort())] },
  'admin users list': { args: (db) => ['admin', 'users', 'list', '--db', db] },
  'admin users show': account('admin users show'),
  'admin users password': account('admin users password'),
  'admin users lock': account('admin users lock'),
  'admin users unlock': account('admin users unlock'),
  'admin users delete': account('admin users delete'),
  'admin articles delete': { args: (db) => ['admin', 'articles', 'delete', 'some-slug', '--db', db] },
  'admin comments delete': { args: (db) => ['admin', 'comments', 'delete', '1', '--db', db] },
}

const invocation = (c: Command): Invocation => {
  const i = INVOCATIONS[c.name]
  if (!i) throw new Error(`no invocation for "${c.name}": add one above, so its mistakes are tested too`)
  return i
}
const takesDatabase = (c: Command) => c.name !== 'healthcheck'

/** The options of a command that take a value (not --json, --with-content). */
const valued = (c: Command): OptionName[] => c.options.filter((o) => FLAGS[o].type === 'string')

/** Runs the binary (in `cwd`, else a new directory); the one line on stderr and the status, nothing on stdout. */
async function mistake(args: string[], env: Record<string, string> = {}, cwd?: string): Promise<{ code: number | null; line: string }> {
  const r = await runCli(binary(), args, { env, cwd, timeoutMs: 15_000 })
  expect({ args, stdout: r.stdout, lines: r.stderr.split('\n').length }).toEqual({ args, stdout: '', lines: 2 })
  return { code: r.code, line: r.stderr.trimEnd() }
}

skipIf(why.sqlitePass).describe('every command, every mistake: one line, one status', () => {
  test('every command of the binary has an invocation here', () => {
    expect(COMMANDS.map((c) => c.name).sort()).toEqual(Object.keys(INVOCATIONS).sort())
  })

  test('an unknown option: 2', async () => {
    for (const c of COMMANDS) {
      const r = await mistake([...invocation(c).args(join(tempDir(), 'c.db')), '--bogus'])
      expect({ command: c.name, ...r }).toEqual({ command: c.name, code: 2, line: 'conduit: unknown option --bogus; see conduit --help' })
    }
  }, 60_000)

  test('a bad value in the environment: 2', async () => {
    for (const c of COMMANDS) {
      const r = await mistake(invocation(c).args(join(tempDir(), 'c.db')), { PORT: 'eighty' })
      expect({ command: c.name, ...r }).toEqual({ command: c.name, code: 2, line: 'conduit: PORT must be an integer, got "eighty"' })
    }
  }, 60_000)

  test('a bad value on the command line: 2', async () => {
    for (const c of COMMANDS) {
      for (const option of c.options.filter((o) => NUMERIC.includes(`--${o}`))) {
        const r = await mistake([...invocation(c).args(join(tempDir(), 'c.db')), `--${option}`, 'many'])
        const line = `conduit: --${option} must be an integer, got "many"`
        expect({ command: c.name, ...r }).toEqual({ command: c.name, code: 2, line })
      }
    }
    expect(await mistake(['serve', '--port', '0', '--workers', '0'])).toEqual({
      code: 2,
      line: 'conduit: --workers must be between 1 and 256, got 0',
    })
  }, 60_000)

  test('an option the command does not take: 2, before anything is opened or written; only its own options are checked', async () => {
    for (const c of COMMANDS) {
      // --from names another database than the command's, --db another than copy's
      const option = c.options.includes('from') ? 'db' : 'from'
      const cwd = tempDir()
      const r = await mistake([...invocation(c).args(join(cwd, 'c.db')), `--${option}`, join(cwd, 'other.db')], {}, cwd)
      const line = `conduit: ${c.name} does not take --${option}; see conduit ${c.name} --help`
      expect({ command: c.name, ...r, made: readdirSync(cwd) }).toEqual({ command: c.name, code: 2, line, made: [] })
    }
    // whether the backup would have been of ./conduit.db (there) or of --from: neither is made
    const cwd = tempDir()
    expect((await runCli(binary(), ['migrate'], { cwd })).code).toBe(0)
    const files = readdirSync(cwd).sort()
    expect(await mistake(['backup', 'out.db', '--from', join(cwd, 'conduit.db')], {}, cwd)).toEqual({
      code: 2,
      line: 'conduit: backup does not take --from; see conduit backup --help',
    })
    const refused: [string[], string][] = [
      [['--json'], 'serve does not take --json; see conduit serve --help'],
      [['serve', '--with-content'], 'serve does not take --with-content; see conduit serve --help'],
      [['migrate', '--to', 'postgres://postgres@127.0.0.1:1/conduit'], 'migrate does not take --to; see conduit migrate --help'],
      [['seed', '--from', 'x.db'], 'seed does not take --from; see conduit seed --help'],
      [['healthcheck', '--db', 'x.db'], 'healthcheck does not take --db; see conduit healthcheck --help'],
      // a value the command would refuse, of an option it does not take: the option is what is wrong
      [
        ['admin', 'users', 'list', '--limit', '1', '--workers', '0'],
        'admin users list does not take --workers; see conduit admin users list --help',
      ],
      [['version', '--port', '3'], 'version does not take --port; see conduit --help'],
      [['--version', '--db', 'x.db'], 'version does not take --db; see conduit --help'],
    ]
    for (const [args, line] of refused)
      expect({ args, ...(await mistake(args, {}, cwd)) }).toEqual({ args, code: 2, line: `conduit: ${line}` })
    expect(readdirSync(cwd).sort()).toEqual(files)
  }, 60_000)

  test("every command's help lists the options it takes: conduit help COMMAND and COMMAND --help", async () => {
    for (const c of COMMANDS) {
      const [viaHelp, viaFlag] = await Promise.all([
        runCli(binary(), ['help', ...c.name.split(' ')]),
        runCli(binary(), [...c.name.split(' '), '--help']),
      ])
      expect(viaFlag).toEqual(viaHelp)
      const usage = viaHelp.stdout.split('\n').find((l) => l.startsWith(`  ${usageOf(c)}`))
      const named = [...(usage ?? '').matchAll(/--([a-z-]+)/g)].map((m) => m[1])
      expect({ command: c.name, code: viaHelp.code, named: named.sort() }).toEqual({
        command: c.name,
        code: 0,
        named: [...c.options].sort(),
      })
    }
  }, 60_000)

  test('an empty value (`--db "$DB"`, DB unset): 2, nothing opened or made', async () => {
    for (const c of COMMANDS) {
      for (const option of valued(c)) {
        const cwd = tempDir()
        const r = await mistake([...invocation(c).args(join(cwd, 'c.db')), `--${option}`, ''], {}, cwd)
        const line = `conduit: option --${option} needs a value, got ""; see conduit --help`
        expect({ command: c.name, option, ...r, made: readdirSync(cwd) }).toEqual({ command: c.name, option, code: 2, line, made: [] })
      }
    }
    expect(await mistake(['migrate', '--db='])).toEqual({ code: 2, line: 'conduit: option --db needs a value, got ""; see conduit --help' })
  }, 60_000)

  test('an empty argument (`backup "$FILE"`, FILE unset): 2, with what it names', async () => {
    for (const c of COMMANDS.filter((c) => c.args > 0)) {
      const args = invocation(c).args(join(tempDir(), 'c.db'))
      const at = c.name.split(' ').length
      const r = await mistake([...args.slice(0, at), '', ...args.slice(at + 1)])
      const line = `conduit: ${c.name}: ${c.usage.split(' ')[0]} must not be empty; see conduit ${c.name} --help`
      expect({ command: c.name, ...r }).toEqual({ command: c.name, code: 2, line })
    }
  }, 60_000)

  test('an argument too many: 2, with the usage', async () => {
    for (const c of COMMANDS) {
      const r = await mistake([...invocation(c).args(join(tempDir(), 'c.db')), 'extra'])
      expect({ command: c.name, ...r }).toEqual({ command: c.name, code: 2, line: `conduit: usage: ${usageOf(c)}; see conduit --help` })
    }
  }, 60_000)

  test('a database in a directory that does not exist: 1', async () => {
    for (const c of COMMANDS.filter(takesDatabase)) {
      const dir = join(tempDir(), 'missing')
      const option = invocation(c).pathOption ?? DB
      const r = await mistake(invocation(c).args(join(dir, 'c.db')))
      expect({ command: c.name, ...r }).toEqual({
        command: c.name,
        code: 1,
        line: `conduit: cannot open the database ${join(dir, 'c.db')}: directory ${dir} does not exist; create it or choose another file with ${option}`,
      })
    }
  }, 60_000)

  test('a database under a regular file (not a directory): 1, named as such, not as a read-only file', async () => {
    for (const c of COMMANDS.filter(takesDatabase)) {
      const notDir = join(tempDir(), 'notadb.db')
      writeFileSync(notDir, 'a file')
      const option = invocation(c).pathOption ?? DB
      const r = await mistake(invocation(c).args(join(notDir, 'c.db')))
      expect({ command: c.name, ...r }).toEqual({
        command: c.name,
        code: 1,
        line: `conduit: cannot open the database ${join(notDir, 'c.db')}: ${notDir} is not a directory; choose another file with ${option}`,
      })
    }
  }, 60_000)

  test('a directory given as the database, whoever owns the one it is in (/tmp: root): 1, "it is a directory"', async () => {
    for (const c of COMMANDS.filter(takesDatabase)) {
      const option = invocation(c).pathOption ?? DB
      for (const dir of [tempDir(), '/tmp']) {
        const r = await mistake(invocation(c).args(dir))
        expect({ command: c.name, ...r }).toEqual({
          command: c.name,
          code: 1,
          line: `conduit: cannot open the database ${dir}: it is a directory, not a file; choose another file with ${option}`,
        })
      }
    }
  }, 60_000)

  // (as root, / may be written)
  skipIf(process.geteuid?.() === 0 && 'runs as a user who is not root').test(
    'a new file in a directory of root this user may not write (started in /): 1, choose another directory, not "run as root"',
    async () => {
      for (const c of COMMANDS.filter((c) => invocation(c).creates)) {
        const r = await mistake(invocation(c).args('conduit.db'), {}, '/')
        expect({ command: c.name, ...r }).toEqual({
          command: c.name,
          code: 1,
          line: `conduit: cannot create the database /conduit.db: directory / is not writable; choose a file in a writable directory with ${DB}`,
        })
      }
    },
    60_000,
  )

  test('a database file that does not exist, for the commands that never create one: 1', async () => {
    for (const c of COMMANDS.filter((c) => takesDatabase(c) && !invocation(c).creates)) {
      const file = join(tempDir(), 'c.db')
      const option = invocation(c).pathOption ?? DB
      const r = await mistake(invocation(c).args(file))
      expect({ command: c.name, ...r }).toEqual({
        command: c.name,
        code: 1,
        line: `conduit: cannot open the database ${file}: the file does not exist; choose another file with ${option}`,
      })
    }
  }, 60_000)

  // (/proc: no one may create a file there, root included)
  test('a new file in a directory that cannot be written: 1', async () => {
    for (const c of COMMANDS.filter((c) => invocation(c).creates)) {
      const r = await mistake(invocation(c).args('/proc/conduit.db'))
      expect({ command: c.name, ...r }).toEqual({
        command: c.name,
        code: 1,
        line: `conduit: cannot create the database /proc/conduit.db: directory /proc is not writable; choose a file in a writable directory with ${DB}`,
      })
    }
    const cwd = tempDir()
    expect((await runCli(binary(), ['migrate', '--db', 'c.db'], { cwd })).code).toBe(0)
    const r = await mistake(['backup', '/proc/out.db', '--db', join(cwd, 'c.db')])
    expect(r).toEqual({
      code: 1,
      line: 'conduit: cannot create the backup /proc/out.db: directory /proc is not writable; choose a file in a writable directory',
    })
  }, 60_000)

  test('a database that cannot be reached: 1', async () => {
    const port = freePort()
    const url = `postgres://postgres@127.0.0.1:${port}/conduit`
    const refused = (option: string) =>
      `conduit: cannot reach the PostgreSQL database ${url}: the connection was refused; is PostgreSQL running at 127.0.0.1:${port} (and listening there: listen_addresses, port, a firewall)? Check the host and port in ${option}`
    // (backup is SQLite's: on PostgreSQL it points to pg_dump instead)
    for (const c of COMMANDS.filter((c) => takesDatabase(c) && c.name !== 'backup' && c.name !== 'copy')) {
      const r = await mistake(invocation(c).args(url))
      expect({ command: c.name, ...r }).toEqual({ command: c.name, code: 1, line: refused(URL_OPTION) })
    }
    const cwd = tempDir()
    expect((await runCli(binary(), ['migrate', '--db', 'c.db'], { cwd })).code).toBe(0)
    const copy = await mistake(['copy', '--from', join(cwd, 'c.db'), '--to', url])
    expect(copy).toEqual({ code: 1, line: refused('--to') })
  }, 60_000)

  test('a database URL that names no database, has an unknown sslmode, or is not PostgreSQL: 2, before anything is opened', async () => {
    const NO_DATABASE = 'conduit: the PostgreSQL URL names no database (postgres://user:password@host:port/database)'
    const cases = [
      ['postgres://postgres@127.0.0.1:5432', NO_DATABASE],
      ['postgres://', NO_DATABASE],
      [
        'postgresql://postgres@127.0.0.1/conduit?sslmode=bogus',
        'conduit: the PostgreSQL URL\'s sslmode must be one of disable, allow, prefer, require, verify-ca, verify-full, got "bogus"',
      ],
      [
        'mysql://root@127.0.0.1/conduit',
        'conduit: mysql:// is not a database this server uses: a postgres:// URL selects PostgreSQL, a file path SQLite',
      ],
    ] as const
    const cwd = tempDir()
    const commands = COMMANDS.filter((c) => takesDatabase(c) && c.name !== 'copy')
    for (const [i, c] of commands.entries()) {
      const [url, line] = cases[i % cases.length]!
      const r = await mistake(invocation(c).args(url))
      expect({ command: c.name, url, ...r }).toEqual({ command: c.name, url, code: 2, line })
    }
    for (const [url, line] of cases) {
      expect({ url, ...(await mistake(['copy', '--from', join(cwd, 'none.db'), '--to', url])) }).toEqual({ url, code: 2, line })
      expect({ url, ...(await mistake(['serve'], { DATABASE_URL: url })) }).toEqual({ url, code: 2, line })
    }
    expect(readdirSync(cwd)).toEqual([])
  }, 60_000)

  test('a file: or sqlite: URI for the SQLite file: 2, the plain path to write instead, no file made', async () => {
    const cwd = tempDir()
    for (const [value, path] of [
      ['file:n1.db', 'n1.db'],
      ['sqlite:n1.db', 'n1.db'],
      ['SQLITE3:/data/n1.db?mode=ro', '/data/n1.db'],
      ['file:///data/n1.db', '/data/n1.db'],
      ['file://localhost/data/my%20n1.db?cache=shared', '/data/my n1.db'],
      // read differently by other tools, or another host's: no path is suggested
      ['sqlite:///n1.db', 'the path'],
      ['sqlite3://data/n1.db', 'the path'],
      ['file://server/share/n1.db', 'the path'],
    ] as const) {
      const line = `conduit: ${value} is not a database this server uses: a postgres:// URL selects PostgreSQL, a file path SQLite (write ${path} alone)`
      const runs: [string[], Record<string, string>][] = [
        [['migrate', '--db', value], {}],
        [['seed', '--users', '1', '--articles', '0'], { DATABASE_URL: value }],
        [['serve', '--port', '0', '--host', '127.0.0.1'], { DATABASE_PATH: value }],
        [['copy', '--from', join(cwd, 'none.db'), '--to', value], {}],
      ]
      for (const [args, env] of runs) {
        expect({ args, env, ...(await mistake(args, env, cwd)) }).toEqual({ args, env, code: 2, line })
      }
    }
    expect(readdirSync(cwd)).toEqual([])
  }, 60_000)

  test('SINGLE_INSTANCE=true with --workers 2: 2, before anything is opened', async () => {
    const cwd = tempDir()
    const r = await mistake(['serve', '--host', '127.0.0.1', '--port', '0', '--db', join(cwd, 'c.db'), '--workers', '2'], {
      SINGLE_INSTANCE: 'true',
    })
    expect(r).toEqual({ code: 2, line: 'conduit: SINGLE_INSTANCE=true means one process, and --workers 2 runs 2: leave it unset' })
    expect(existsSync(join(cwd, 'c.db'))).toBe(false)
  }, 30_000)

  test("a SQLite path that begins or ends with white space (an env file's trailing blank): 2, nothing made", async () => {
    const cwd = tempDir()
    for (const [args, env, value] of [
      [['migrate', '--db', 'c.db '], {}, 'c.db '],
      [['serve', '--host', '127.0.0.1', '--port', '0'], { DATABASE_PATH: ' c.db' }, ' c.db'],
      [['seed', '--users', '1', '--articles', '0'], { DATABASE_URL: '\tc.db' }, '\tc.db'],
      [['migrate'], { DATABASE_PATH: 'c.db\r' }, 'c.db\r'],
    ] as const) {
      const line = `conduit: the database path ${JSON.stringify(value)} begins or ends with white space: write the path without it`
      expect({ args, ...(await mistake([...args], env, cwd)) }).toEqual({ args, code: 2, line })
    }
    expect(readdirSync(cwd)).toEqual([])
  }, 30_000)

  test(':memory: for a command other than serve, or for several workers: 2, nothing made; a server on it says so', async () => {
    const cwd = tempDir()
    for (const c of COMMANDS.filter((c) => c.name !== 'serve' && c.options.includes('db'))) {
      const r = await mistake(invocation(c).args(':memory:'), {}, cwd)
      const line = `conduit: ${c.name}: :memory: is a database inside one serving process, empty when it starts and gone when it stops; give a file or a postgres:// URL`
      expect({ command: c.name, ...r }).toEqual({ command: c.name, code: 2, line })
    }
    for (const [args, env] of [
      [['--db', ':memory:', '--workers', '2'], {}],
      [[], { DATABASE_PATH: ':memory:', WORKERS: '3' }],
    ] as const) {
      const r = await mistake(['serve', '--host', '127.0.0.1', '--port', '0', ...args], env, cwd)
      const n = env.WORKERS ?? '2'
      const line = `conduit: :memory: is a database inside one process, and --workers ${n} runs ${n}, each with an empty one of its own: use a file`
      expect({ args, ...r }).toEqual({ args, code: 2, line })
    }
    expect(readdirSync(cwd)).toEqual([])
    const server = await startServer(binary(), { args: ['--db', ':memory:'] })
    try {
      expect(server.stdout()).toContain('WARN the database is in memory: whatever is written is lost when the server stops')
    } finally {
      await server.stop()
    }
  }, 60_000)

  test('a port in use: 1, and no database file made, with workers or without', async () => {
    const taken = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    try {
      const cwd = tempDir()
      for (const workers of [[], ['--workers', '2']]) {
        const r = await mistake(['serve', '--host', '127.0.0.1', '--port', String(taken.port), '--db', join(cwd, 'c.db'), ...workers])
        const start = `conduit: cannot listen on 127.0.0.1:${taken.port}: the port is already in use`
        expect({ workers, code: r.code, said: r.line.startsWith(start) ? start : r.line }).toEqual({ workers, code: 1, said: start })
      }
      expect(readdirSync(cwd)).toEqual([])
      // a server logging JSON says it in JSON, as its last log line
      const json = await runCli(binary(), ['serve', '--host', '127.0.0.1', '--port', String(taken.port), '--db', join(cwd, 'c.db')], {
        env: { LOG_FORMAT: 'json' },
        timeoutMs: 15_000,
      })
      const lines = json.stderr.trimEnd().split('\n')
      expect({ code: json.code, lines: lines.length }).toEqual({ code: 1, lines: 1 })
      expect(JSON.parse(lines[0]!)).toMatchObject({
        level: 'error',
        msg: `cannot listen on 127.0.0.1:${taken.port}: the port is already in use; stop the other server or choose another port with --port or PORT`,
      })
    } finally {
      taken.stop(true)
    }
  }, 60_000)

  test('a server that cannot be reached (healthcheck): 1, the same words', async () => {
    const port = freePort()
    const r = await mistake(['healthcheck', '--port', String(port)])
    expect(r).toEqual({
      code: 1,
      line: `conduit: cannot reach the server http://127.0.0.1:${port}/health: the connection was refused; is conduit running there? Check the port and host in --port/PORT and --host/HOST`,
    })
  }, 30_000)

  test('a server that takes the connection and does not answer (healthcheck): 1, not a wrong port', async () => {
    // as a server migrating a large SQLite database is: the port bound, the process busy
    const silent = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    try {
      const r = await mistake(['healthcheck', '--port', String(silent.port)])
      expect(r).toEqual({
        code: 1,
        line: `conduit: the server http://127.0.0.1:${silent.port}/health did not answer within 3 s: it is stuck or very busy; one migrating a SQLite database answers nothing until done (see its log)`,
      })
    } finally {
      silent.stop(true)
    }
  }, 30_000)
})
