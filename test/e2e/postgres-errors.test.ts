import { afterAll, beforeAll, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { onPostgres, TEST_DATABASE_URL } from '../support/backend.ts'
import { type Cluster, CLUSTER_PASSWORD, clusterMissing, startCluster } from '../support/pg-cluster.ts'
import { skipIf, why } from '../support/skip.ts'
import { type CliResult, freePort, runCli, useBinary } from './support.ts'

/**
 * The binary's first start against PostgreSQL, as an operator meets it: each
 * way the connection can be refused ends as ONE line that names the URL
 * (never its password) and says what to run or change. Where the line gives
 * a command, the test follows it and the binary then starts. The shared
 * server (TEST_DATABASE_URL, trust authentication, no TLS) shows a missing
 * database or role, a refused connection and a client asking for TLS; a
 * private cluster (test/support/pg-cluster.ts: passwords, TLS only) shows a
 * wrong password, a server demanding TLS and a certificate that does not
 * verify.
 */
const binary = useBinary()
const SECRET = 'never-shown-S3cret'

/** The one line of a failed command: exit 1, one line under 400 characters, no password, no stack. */
function failure(r: CliResult): string {
  const stderr = r.stderr.replace(/\n$/, '')
  expect({ code: r.code, lines: stderr.split('\n').length }).toEqual({ code: 1, lines: 1 })
  expect(stderr).toStartWith('conduit: ')
  expect(stderr.length).toBeLessThan(400)
  for (const hidden of [SECRET, CLUSTER_PASSWORD, '$bunfs']) expect(stderr).not.toContain(hidden)
  return stderr
}
const migrate = (url: string) => runCli(binary(), ['migrate', '--db', url], { timeoutMs: 20_000 })
const unique = (prefix: string) => `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`

/** The shared server's URL with another role, password, database or port. */
function shared(o: { user?: string; password?: string; database?: string; port?: number; params?: Record<string, string> }): string {
  const u = new URL(TEST_DATABASE_URL!)
  if (o.user) u.username = o.user
  if (o.password) u.password = o.password
  if (o.database) u.pathname = `/${o.database}`
  if (o.port) u.port = String(o.port)
  for (const [k, v] of Object.entries(o.params ?? {})) u.searchParams.set(k, v)
  return u.toString()
}

async function admin<T>(work: (sql: SQL) => Promise<T>): Promise<T> {
  const sql = new SQL({ url: TEST_DATABASE_URL!, max: 1 })
  try {
    return await work(sql)
  } finally {
    await sql.close()
  }
}

skipIf(why.postgresOnly).describe('PostgreSQL refusing the first start: one line with the fix', () => {
  test('a database that does not exist: the CREATE DATABASE (or createdb) to run; running it lets the binary start', async () => {
    const name = unique('conduit_missing')
    const url = shared({ database: name, password: SECRET })
    const line = failure(await migrate(url))
    expect(line).toContain(`database "${name}" does not exist`)
    expect(line).toContain(`createdb -h 127.0.0.1`)
    const create = /CREATE DATABASE [^;]+;/.exec(line)?.[0]
    expect(create).toBe(`CREATE DATABASE ${name} OWNER ${new URL(TEST_DATABASE_URL!).username};`)
    await admin((sql) => sql.unsafe(create!))
    try {
      expect((await migrate(url)).code).toBe(0)
    } finally {
      await admin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    }
  }, 60_000)

  test('a database to copy from that does not exist: its name to check, not one to create; nothing written', async () => {
    const name = unique('conduit_nosource')
    const target = join(mkdtempSync(join(tmpdir(), 'conduit-copy-')), 'back.db')
    const line = failure(
      await runCli(binary(), ['copy', '--from', shared({ database: name, password: SECRET }), '--to', target], { timeoutMs: 20_000 }),
    )
    expect(line).toEndWith(
      `database "${name}" does not exist on 127.0.0.1:${new URL(TEST_DATABASE_URL!).port || '5432'}; check its name in --from`,
    )
    expect(existsSync(target)).toBe(false)
  }, 60_000)

  test('a password given in the query (?password=, libpq form) is never shown, in an error or a message naming the database', async () => {
    const name = unique('conduit_qpass')
    const url = shared({ database: name, params: { password: SECRET } })
    failure(await migrate(url))
    await admin((sql) => sql.unsafe(`CREATE DATABASE ${name}`))
    try {
      expect((await migrate(url)).code).toBe(0)
      // backup names the database it was pointed at
      const said = await runCli(binary(), ['backup', 'out.db', '--db', url], { timeoutMs: 20_000 })
      expect(said.stdout + said.stderr).toContain('password=***')
      expect(said.stdout + said.stderr).not.toContain(SECRET)
    } finally {
      await admin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    }
  }, 60_000)

  test('a role that may not create tables in the database (PostgreSQL 15+): the ALTER DATABASE to run; running it lets the binary start', async () => {
    const [role, name] = [unique('conduit_guest'), unique('conduit_notmine')]
    await admin((sql) => sql.unsafe(`CREATE ROLE ${role} LOGIN`))
    await admin((sql) => sql.unsafe(`CREATE DATABASE ${name}`))
    try {
      const line = failure(await migrate(shared({ user: role, database: name })))
      expect(line).toContain('permission denied for schema public')
      const alter = /ALTER DATABASE [^;]+;/.exec(line)?.[0]
      expect(alter).toBe(`ALTER DATABASE ${name} OWNER TO ${role};`)
      await admin((sql) => sql.unsafe(alter!))
      expect((await migrate(shared({ user: role, database: name }))).code).toBe(0)
    } finally {
      await admin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
      await admin((sql) => sql.unsafe(`DROP ROLE IF EXISTS ${role}`))
    }
  }, 60_000)

  test('a role that does not exist: names it, and the CREATE ROLE (or createuser) to run', async () => {
    const role = unique('conduit_nobody')
    const line = failure(await migrate(shared({ user: role, password: SECRET })))
    expect(line).toContain(`role "${role}" does not exist`)
    expect(line).toContain(`createuser -h 127.0.0.1`)
    expect(line).toContain(`CREATE ROLE ${role} LOGIN`)
  }, 30_000)

  test('nothing listening at the address: asks whether PostgreSQL runs at host:port', async () => {
    const port = freePort()
    const line = failure(await migrate(shared({ port, password: SECRET })))
    expect(line).toContain('cannot reach the PostgreSQL database')
    expect(line).toContain(`is PostgreSQL running at 127.0.0.1:${port}`)
    expect(line).toMatch(/DATABASE_URL|--db/)
  }, 30_000)

  test('a host name that does not resolve: says so, not that PostgreSQL is down', async () => {
    const url = new URL(shared({ password: SECRET }))
    url.hostname = 'db.nonexistent.invalid'
    const line = failure(await migrate(url.toString()))
    expect(line).toContain('the host name db.nonexistent.invalid does not resolve')
  }, 30_000)

  test('the URL asks for TLS from a server without it: the sslmode to use; using it lets the binary start', async () => {
    const ssl = await admin(async (sql) => (await sql`SHOW ssl`)[0].ssl)
    expect(ssl).toBe('off') // the shared server speaks no TLS: the private cluster below does
    const name = unique('conduit_tls')
    await admin((sql) => sql.unsafe(`CREATE DATABASE ${name}`))
    try {
      const line = failure(await migrate(shared({ database: name, params: { sslmode: 'require' } })))
      expect(line).toContain('does not offer it')
      expect(line).toContain('sslmode=disable')
      expect((await migrate(shared({ database: name, params: { sslmode: 'disable' } }))).code).toBe(0)
    } finally {
      await admin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    }
  }, 60_000)
})

const noCluster = onPostgres && (await clusterMissing())

skipIf(why.postgresOnly || noCluster).describe('PostgreSQL with passwords and TLS only (a private cluster): one line with the fix', () => {
  let cluster: Cluster
  beforeAll(async () => {
    cluster = await startCluster()
  }, 90_000)
  afterAll(() => cluster?.stop(), 30_000)

  test('a wrong password: names the role, blames the password or pg_hba.conf, never shows it', async () => {
    const line = failure(await migrate(cluster.url({ password: SECRET, params: { sslmode: 'require' } })))
    expect(line).toContain('password authentication failed for role "postgres"')
    expect(line).toContain('pg_hba.conf')
    expect(line).toContain(`127.0.0.1:${cluster.port}`)
  }, 30_000)

  test('a server that admits TLS only (hostssl) and a URL without sslmode: says sslmode=require; adding it lets the binary start', async () => {
    const line = failure(await migrate(cluster.url({ password: CLUSTER_PASSWORD })))
    expect(line).toContain('only over TLS')
    expect(line).toContain('sslmode=require')
    expect((await migrate(cluster.url({ password: CLUSTER_PASSWORD, params: { sslmode: 'require' } }))).code).toBe(0)
  }, 60_000)

  test('sslmode=verify-full and a certificate nobody vouches for: names sslrootcert; naming the CA lets the binary start', async () => {
    const line = failure(await migrate(cluster.url({ password: CLUSTER_PASSWORD, params: { sslmode: 'verify-full' } })))
    expect(line).toContain('certificate did not verify')
    expect(line).toContain('sslrootcert=')
    const trusted = cluster.url({ password: CLUSTER_PASSWORD, params: { sslmode: 'verify-full', sslrootcert: cluster.certificate } })
    expect((await migrate(trusted)).code).toBe(0)
  }, 60_000)
})
