import { expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { joinNegativeNumbers, usageFromParseArgs } from '../../src/cli/argv.ts'
import { CliError, UsageError } from '../../src/cli/errors.ts'
import { explain } from '../../src/cli/report.ts'
import { ConfigError } from '../../src/config.ts'
import { MigrationError } from '../../src/db/migration-error.ts'
import { DatabaseUnavailable } from '../../src/db/types.ts'
import { skipIf, why } from '../support/skip.ts'

/** The explanation of a failure the e2e tests cannot provoke (they run as root, with working DNS or none). */
const listenError = (code: string) => Object.assign(new Error('Failed to start server'), { code, syscall: 'listen', errno: 0 })
const sqliteError = (code: string, message: string) => Object.assign(new Error(message), { name: 'SQLiteError', code })

skipIf(why.sqlitePass).describe('explain', () => {
  test('a port below 1024 without the right: one line naming the address and the way out', async () => {
    const { line, exitCode } = await explain(listenError('EACCES'), { host: '0.0.0.0', port: 80 })
    expect(exitCode).toBe(1)
    expect(line).toBe(
      'cannot listen on 0.0.0.0:80: permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE); choose a port from 1024 up with --port or PORT',
    )
  })

  test('an IPv6 address is written in brackets', async () => {
    const { line } = await explain(listenError('EADDRNOTAVAIL'), { host: '2001:db8::1', port: 3000 })
    expect(line).toStartWith('cannot listen on [2001:db8::1]:3000: 2001:db8::1 is not an address of this machine;')
  })

  test('SQLite errors name the absolute path of the database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'conduit-cli-errors-'))
    try {
      const busy = await explain(sqliteError('SQLITE_BUSY', 'database is locked'), { databasePath: join(dir, 'c.db') })
      expect(busy.line).toBe(
        `the database ${join(dir, 'c.db')} stayed locked by another process (database is locked); wait for it to finish and try again`,
      )
      const full = await explain(sqliteError('SQLITE_FULL', 'database or disk is full'), { databasePath: join(dir, 'c.db') })
      expect(full.line).toContain('disk is full')
      // a write of admin or seed meets the full disk as the service does (answered 503 there): the same line, not PostgreSQL's
      const write = await explain(new DatabaseUnavailable(sqliteError('SQLITE_FULL', 'database or disk is full')), {
        databasePath: join(dir, 'c.db'),
      })
      expect(write).toEqual({ line: full.line, exitCode: 1 })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a PostgreSQL change rolled back by deadlocks, try after try: not "cannot reach", but what happened and to run it again', async () => {
    const url = 'postgres://conduit@db.example:5432/conduit'
    const deadlock = Object.assign(new Error('deadlock detected'), {
      name: 'PostgresError',
      code: 'ERR_POSTGRES_SERVER_ERROR',
      errno: '40P01',
    })
    const got = await explain(new DatabaseUnavailable(deadlock), { databaseUrl: url })
    expect(got).toEqual({
      line: `the PostgreSQL database ${url} rolled this change back to end a conflict with other writes, three times (deadlock detected); nothing of that step was written: run the command again`,
      exitCode: 1,
    })
  })

  test('usage, configuration and migration errors exit 2; a migration error names the database', async () => {
    expect(await explain(new UsageError('usage: conduit migrate'), {})).toEqual({ line: 'usage: conduit migrate', exitCode: 2 })
    expect(await explain(new ConfigError('PORT must be an integer, got "x"'), {})).toEqual({
      line: 'PORT must be an integer, got "x"',
      exitCode: 2,
    })
    const newer = await explain(new MigrationError('database schema version 9 is newer than this binary knows (1)'), {
      databasePath: '/data/c.db',
    })
    expect(newer).toEqual({ line: '/data/c.db: database schema version 9 is newer than this binary knows (1)', exitCode: 2 })
    expect(await explain(new CliError('backup: x'), {})).toEqual({ line: 'backup: x', exitCode: 1 })
  })

  test('anything else: the command and the message on one line, marked unexpected', async () => {
    const e = Object.assign(new Error('something\nbroke\n  badly'), { code: 'EWHATEVER' })
    expect(await explain(e, { command: 'migrate' })).toEqual({
      line: 'migrate failed: something broke badly (EWHATEVER)',
      exitCode: 1,
      unexpected: true,
    })
    expect((await explain('a string', {})).line).toBe('failed: a string')
    expect((await explain(undefined, {})).line).toBe('failed: unknown error')
  })
})

skipIf(why.sqlitePass).describe('the command line', () => {
  const FLAGS = { port: { type: 'string' }, db: { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const
  const VALUED = ['--port', '--db']
  const usage = (args: string[]) => {
    try {
      parseArgs({ args: joinNegativeNumbers(args, ['--port'], VALUED), options: FLAGS, allowPositionals: true, strict: true })
    } catch (e) {
      return usageFromParseArgs(e).message
    }
    return undefined
  }

  test.each([
    [['--nope'], 'unknown option --nope; see conduit --help'],
    [['-q'], 'unknown option -q; see conduit --help'],
    [['-hq'], 'unknown option -q; see conduit --help'],
    [['--port'], 'option --port needs a value; see conduit --help'],
    [['--db', '--port', '1'], 'option --db needs a value (write --db=VALUE for a value that starts with "-"); see conduit --help'],
    [['--help=1'], 'option --help takes no value; see conduit --help'],
  ])('%p: %s', (args, message) => {
    expect(usage(args)).toBe(message)
  })

  test('a negative number is joined to its numeric option, nothing else is', () => {
    expect(joinNegativeNumbers(['seed', '--port', '-5', '--db', '-5'], ['--port'], VALUED)).toEqual(['seed', '--port=-5', '--db', '-5'])
    expect(joinNegativeNumbers(['--port', '-x'], ['--port'], VALUED)).toEqual(['--port', '-x'])
    expect(joinNegativeNumbers(['--', '--port', '-5'], ['--port'], VALUED)).toEqual(['--', '--port', '-5'])
    expect(usage(['--port', '-5'])).toBeUndefined()
  })

  test("a negative number that is no option's value is an argument, after any other", () => {
    const join = (args: string[]) => joinNegativeNumbers(args, ['--port'], VALUED)
    expect(join(['delete', '-1', '--db', 'x'])).toEqual(['delete', '--db', 'x', '--', '-1'])
    expect(join(['delete', '--db', '-1'])).toEqual(['delete', '--db', '-1'])
    expect(join(['delete', '-1', '--', 'a'])).toEqual(['delete', '--', '-1', 'a'])
    expect(usage(['delete', '-1'])).toBeUndefined()
    expect(usage(['--db', '-1'])).toBe('option --db needs a value (write --db=VALUE for a value that starts with "-"); see conduit --help')
  })
})
