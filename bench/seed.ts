/**
 * Seeded databases, cached by size, seed value, user count and a hash of
 * everything that decides their content (the backend's migrations and
 * migrator, the seeder and its bulk loader, the slug function, the random
 * generator, the seed command): a rerun reuses them, a schema change reseeds.
 * Each benchmark works on a fresh copy, never on the cached seed itself
 * (create, favorite and the mixed traffic write to it).
 *
 * SQLite: files under bench/tmp/. PostgreSQL: databases named
 * conduit_bench_seed_a<articles>_u<users>_s<seed>_<key> on the benchmark's
 * server, copied per run with CREATE DATABASE … TEMPLATE.
 */
import { copyFileSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { onCleanup, run } from './proc.ts'

export type Backend = 'sqlite' | 'postgres'

/** Hash of what decides the content of a seeded database on `backend` (12 hex digits). */
function schemaKey(root: string, backend: Backend = 'sqlite'): string {
  const migrations = join(root, 'src/db/migrations', backend)
  const parts = readdirSync(migrations)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => readFileSync(join(migrations, f), 'utf8'))
  const files = [
    `src/db/${backend}/migrate.ts`,
    'src/cli/seed-data.ts',
    'src/db/bulk.ts',
    'src/articles/slug.ts',
    'src/random.ts',
    // SQLite's migrations fill username keys with it
    ...(backend === 'sqlite' ? ['src/names.ts'] : []),
  ]
  for (const f of files) {
    const file = join(root, f)
    if (existsSync(file)) parts.push(readFileSync(file, 'utf8'))
  }
  // the seed command's options (tags, follows, favorites, comments per article)
  const main = readFileSync(join(root, 'src/main.ts'), 'utf8')
  parts.push(/async function seed\([\s\S]*?\n}\n/.exec(main)?.[0] ?? main)
  // what the harness does to a PostgreSQL seed after seeding it
  if (backend === 'postgres') parts.push(PG_PREPARE)
  return Bun.hash(parts.join('\u0000')).toString(16).padStart(16, '0').slice(0, 12)
}

interface SeedSpec {
  articles: number
  users: number
  seed: number
}

/** Path of the cached seeded database for `spec`, seeding it first when missing. */
/** The files SQLite and the service keep beside a database: WAL, shared memory, the change signal. */
const BESIDE = ['-wal', '-shm', '-changes']

export async function seededDatabase(
  root: string,
  binary: string,
  dir: string,
  spec: SeedSpec,
): Promise<{ file: string; cached: boolean; seconds: number }> {
  const prefix = `seed-a${spec.articles}-u${spec.users}-s${spec.seed}-`
  const file = join(dir, `${prefix}${schemaKey(root, 'sqlite')}.db`)
  if (existsSync(file)) return { file, cached: true, seconds: 0 }
  // older seeds of the same size (another schema) only take disk space
  for (const f of readdirSync(dir)) if (f.startsWith(prefix)) rmSync(join(dir, f), { force: true })
  const partial = `${file}.partial`
  for (const suffix of ['', ...BESIDE]) rmSync(partial + suffix, { force: true })
  const t0 = performance.now()
  const args = ['seed', '--db', partial, '--users', String(spec.users), '--articles', String(spec.articles), '--seed', String(spec.seed)]
  console.log(`bench: seeding ${spec.articles.toLocaleString('en')} articles (${binary} ${args.join(' ')})`)
  const r = await run([binary, ...args], { env: { LOG_LEVEL: 'warn' }, stdout: 'inherit', stderr: 'inherit', timeoutMs: 15 * 60_000 })
  if (r.code !== 0) throw new Error(`seeding failed (exit ${r.code})`)
  if (existsSync(`${partial}-wal`) && statSync(`${partial}-wal`).size > 0) {
    throw new Error(`seeding left a non-empty WAL file next to ${partial}`)
  }
  for (const suffix of BESIDE) rmSync(partial + suffix, { force: true })
  renameSync(partial, file)
  return { file, cached: false, seconds: (performance.now() - t0) / 1000 }
}

/** A fresh working copy of a seeded database (and removes what an earlier copy left beside it). */
export function workingCopy(seeded: string, target: string): string {
  for (const suffix of ['', ...BESIDE]) rmSync(target + suffix, { force: true })
  copyFileSync(seeded, target)
  return target
}

export function removeDatabase(file: string): void {
  for (const suffix of ['', ...BESIDE]) rmSync(file + suffix, { force: true })
}

// ---------------------------------------------------------------- PostgreSQL

/**
 * Run on a PostgreSQL seed once it is filled: every working copy then starts
 * as a long-running database would be, its rows frozen and all-visible (no
 * hint-bit writes on the first reads, index-only scans without heap visits),
 * its statistics current — the same state in every run, not whatever
 * autovacuum had done by then.
 */
const PG_PREPARE = 'VACUUM (FREEZE, ANALYZE)'

/** The default server of the benchmark's PostgreSQL databases (the maintenance database; trust auth). */
export const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/postgres'
/** Every database the benchmark makes starts with this (seeds and working copies). */
const PG_PREFIX = 'conduit_bench_'
const PG_SEED_PREFIX = `${PG_PREFIX}seed_`
const PG_WORK_PREFIX = `${PG_PREFIX}work_`
/** PostgreSQL truncates identifiers longer than this */
const PG_MAX_NAME = 63

const ident = (name: string) => {
  if (!/^[a-z0-9_]+$/.test(name) || name.length > PG_MAX_NAME) throw new Error(`not a usable database name: ${name}`)
  return `"${name}"`
}

/** The URL of database `name` on the server of `adminUrl`. */
export function databaseUrl(adminUrl: string, name: string): string {
  const u = new URL(adminUrl)
  u.pathname = `/${name}`
  return u.toString()
}

/** Without the password, for the console and the results. */
export function redact(url: string): string {
  const u = new URL(url)
  if (u.password) u.password = '***'
  return u.toString()
}

/**
 * The benchmark's connection to the PostgreSQL server: one connection to the
 * maintenance database, for CREATE / DROP / ALTER DATABASE and for finding the
 * server's processes. Databases it creates or drops all start with
 * `conduit_bench_`.
 */
export class PgAdmin {
  private readonly sql: InstanceType<typeof Bun.SQL>

  constructor(readonly url: string) {
    const u = new URL(url)
    if (!['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname)) {
      throw new Error(`the benchmark only loads this machine: the PostgreSQL URL must name 127.0.0.1 (got ${u.hostname})`)
    }
    this.sql = new Bun.SQL(url, { max: 1, idleTimeout: 0, connectionTimeout: 10 })
  }

  async check(): Promise<string> {
    const [row] = await this.sql`SELECT current_setting('server_version') AS v, current_setting('max_connections')::int AS max`
    return `PostgreSQL ${row.v} (max_connections ${row.max})`
  }

  async databases(prefix: string): Promise<{ name: string; comment: string | null }[]> {
    const rows = await this.sql`
      SELECT datname AS name, shobj_description(oid, 'pg_database') AS comment
      FROM pg_database WHERE starts_with(datname, ${prefix}) ORDER BY datname`
    return [...rows] as { name: string; comment: string | null }[]
  }

  async exists(name: string): Promise<boolean> {
    const rows = await this.sql`SELECT 1 FROM pg_database WHERE datname = ${name}`
    return rows.length > 0
  }

  /** Drops `name` (a database of the benchmark's); `force` also ends the sessions connected to it. */
  async drop(name: string, o: { force?: boolean } = {}): Promise<void> {
    if (!name.startsWith(PG_PREFIX)) throw new Error(`refusing to drop ${name}: not a benchmark database`)
    await this.sql.unsafe(`DROP DATABASE IF EXISTS ${ident(name)}${o.force ? ' WITH (FORCE)' : ''}`)
  }

  /** CREATE DATABASE name [TEMPLATE template]; a template in use by another session is retried for a few seconds. */
  async create(name: string, template?: string): Promise<void> {
    if (!name.startsWith(PG_PREFIX)) throw new Error(`refusing to create ${name}: not a benchmark database name`)
    const statement = `CREATE DATABASE ${ident(name)}${template ? ` TEMPLATE ${ident(template)}` : ''}`
    for (let tries = 1; ; tries++) {
      try {
        await this.sql.unsafe(statement)
        return
      } catch (e) {
        const busy = /being accessed by other users/.test((e as Error).message)
        if (!busy || tries >= 20) throw e
        await Bun.sleep(250)
      }
    }
  }

  async rename(from: string, to: string): Promise<void> {
    await this.sql.unsafe(`ALTER DATABASE ${ident(from)} RENAME TO ${ident(to)}`)
  }

  async comment(name: string, text: string): Promise<void> {
    await this.sql.unsafe(`COMMENT ON DATABASE ${ident(name)} IS '${text.replace(/'/g, "''")}'`)
  }

  /** Sessions connected to `name` right now. */
  async sessions(name: string): Promise<number> {
    const [row] = await this.sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = ${name}`
    return row.n as number
  }

  /**
   * Pids of the server's processes: the postmaster and all its children
   * (backends, background writer, WAL writer, checkpointer, autovacuum).
   * The postmaster is the parent of this connection's backend.
   */
  async processes(): Promise<number[]> {
    const [row] = await this.sql`SELECT pg_backend_pid() AS pid`
    const backend = row.pid as number
    const stat = await Bun.file(`/proc/${backend}/stat`)
      .text()
      .catch(() => '')
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    if (!ppid) return []
    const children = await run(['pgrep', '-P', String(ppid)], { timeoutMs: 5000 })
    return [ppid, ...children.stdout.split('\n').filter(Boolean).map(Number)]
  }

  async close(): Promise<void> {
    await this.sql.close({ timeout: 2 })
  }
}

const pgSeedName = (root: string, spec: SeedSpec) => `${pgSeedPrefix(spec)}${schemaKey(root, 'postgres')}`
const pgSeedPrefix = (spec: SeedSpec) => `${PG_SEED_PREFIX}a${spec.articles}_u${spec.users}_s${spec.seed}_`

/**
 * The cached seeded PostgreSQL database for `spec`, seeding it first when
 * missing: `conduit seed` fills `<name>_partial`, which is renamed when it
 * succeeded. Older seeds of the same size that this working tree made (their
 * comment names it) are dropped; those of other trees (another checkout on
 * the same server, with other sources) are left alone.
 */
export async function seededPostgres(
  admin: PgAdmin,
  root: string,
  binary: string,
  spec: SeedSpec,
): Promise<{ name: string; cached: boolean; seconds: number }> {
  const name = pgSeedName(root, spec)
  const partial = `${name}_partial`
  if (partial.length > PG_MAX_NAME) throw new Error(`the seed database name would be too long for PostgreSQL: ${partial}`)
  if (await admin.exists(name)) return { name, cached: true, seconds: 0 }
  for (const db of await admin.databases(pgSeedPrefix(spec))) {
    if (db.name === name || db.name === partial) continue
    let tree: string | undefined
    try {
      tree = (JSON.parse(db.comment ?? '{}') as { tree?: string }).tree
    } catch {}
    if (tree !== root) continue
    try {
      await admin.drop(db.name)
      console.log(`bench: dropped ${db.name} (an older seed of this tree)`)
    } catch (e) {
      console.warn(`bench: could not drop ${db.name}: ${(e as Error).message}`)
    }
  }
  await admin.drop(partial, { force: true })
  await admin.create(partial)
  const t0 = performance.now()
  const url = databaseUrl(admin.url, partial)
  const args = ['seed', '--db', url, '--users', String(spec.users), '--articles', String(spec.articles), '--seed', String(spec.seed)]
  console.log(`bench: seeding ${spec.articles.toLocaleString('en')} articles (${binary} ${args.join(' ').replace(url, redact(url))})`)
  const r = await run([binary, ...args], {
    env: { LOG_LEVEL: 'warn', DATABASE_URL: undefined, WORKERS: undefined },
    stdout: 'inherit',
    stderr: 'inherit',
    timeoutMs: 30 * 60_000,
  })
  if (r.code !== 0) {
    await admin.drop(partial, { force: true }).catch(() => {})
    throw new Error(`seeding failed (exit ${r.code})`)
  }
  const prepare = new Bun.SQL(url, { max: 1, idleTimeout: 0, connectionTimeout: 10 })
  try {
    const t1 = performance.now()
    await prepare.unsafe(PG_PREPARE)
    console.log(`bench: ${PG_PREPARE} in ${((performance.now() - t1) / 1000).toFixed(1)} s`)
  } finally {
    await prepare.close({ timeout: 2 })
  }
  // the seeder's connections close as it exits; a template must have none
  for (let i = 0; i < 50 && (await admin.sessions(partial)) > 0; i++) await Bun.sleep(100)
  await admin.rename(partial, name)
  await admin.comment(name, JSON.stringify({ tree: root, seededAt: new Date().toISOString(), ...spec }))
  return { name, cached: false, seconds: (performance.now() - t0) / 1000 }
}

/** Name of this run's working database (one at a time; each size and variant gets a fresh one). */
export const pgWorkName = (pid = process.pid) => `${PG_WORK_PREFIX}${pid}`

/** A fresh working copy of a seeded database: CREATE DATABASE … TEMPLATE (the template must have no sessions). */
export async function pgWorkingCopy(admin: PgAdmin, seeded: string, name = pgWorkName()): Promise<string> {
  await admin.drop(name, { force: true })
  await admin.create(name, seeded)
  return name
}

/** Working copies of earlier runs that were killed outright (their pid no longer exists). */
export async function dropStaleWorkingCopies(admin: PgAdmin): Promise<void> {
  for (const db of await admin.databases(PG_WORK_PREFIX)) {
    const pid = new RegExp(`^${PG_WORK_PREFIX}(\\d+)$`).exec(db.name)?.[1]
    if (!pid || existsSync(`/proc/${pid}`)) continue
    try {
      await admin.drop(db.name, { force: true })
      console.log(`bench: dropped ${db.name} (left by a run that was killed)`)
    } catch (e) {
      console.warn(`bench: could not drop ${db.name}: ${(e as Error).message}`)
    }
  }
}

/**
 * The database one run works on, as DATABASE_URL: a copy of the seeded
 * SQLite file in `dir`, or on PostgreSQL a database made from the seeded
 * one and dropped at exit.
 */
export async function workingDatabase(o: {
  backend: string
  pgUrl: string
  root: string
  binary: string
  /** where seeds are cached (bench/tmp) */
  tmp: string
  /** the run's own directory */
  dir: string
  spec: SeedSpec
}): Promise<string> {
  if (o.backend !== 'postgres') return workingCopy((await seededDatabase(o.root, o.binary, o.tmp, o.spec)).file, join(o.dir, 'work.db'))
  const admin = new PgAdmin(o.pgUrl)
  onCleanup(async () => {
    await admin.drop(pgWorkName(), { force: true })
    await admin.close()
  })
  const seeded = (await seededPostgres(admin, o.root, o.binary, o.spec)).name
  return databaseUrl(o.pgUrl, await pgWorkingCopy(admin, seeded))
}
