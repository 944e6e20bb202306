/**
 * Seeded databases, cached under bench/tmp/ by size, seed value, user count
 * and a hash of everything that decides their content (the backend's
 * migrations and migrator, the seeder and its bulk loader, the slug
 * function, the random generator, the seed command): a rerun reuses them, a
 * schema change reseeds. Each benchmark works on a fresh copy, never on the
 * cached file itself (create and favorite write to it).
 */
import { copyFileSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { run } from './proc.ts'

export type Backend = 'sqlite' | 'postgres'

/** Hash of what decides the content of a seeded database on `backend` (12 hex digits). */
export function schemaKey(root: string, backend: Backend = 'sqlite'): string {
  const migrations = join(root, 'src/db/migrations', backend)
  const parts = readdirSync(migrations)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => readFileSync(join(migrations, f), 'utf8'))
  const files = [
    `src/db/${backend}/migrate.ts`,
    'src/db/seed.ts',
    'src/db/bulk.ts',
    'src/articles/slug.ts',
    'src/random.ts',
    // SQLite's migrations fill username keys with it
    ...(backend === 'sqlite' ? ['src/users/username.ts'] : []),
  ]
  for (const f of files) {
    const file = join(root, f)
    if (existsSync(file)) parts.push(readFileSync(file, 'utf8'))
  }
  // the seed command's options (tags, follows, favorites, comments per article)
  const main = readFileSync(join(root, 'src/main.ts'), 'utf8')
  parts.push(/async function seed\([\s\S]*?\n}\n/.exec(main)?.[0] ?? main)
  return Bun.hash(parts.join('\u0000')).toString(16).padStart(16, '0').slice(0, 12)
}

export interface SeedSpec {
  articles: number
  users: number
  seed: number
}

/** Path of the cached seeded database for `spec`, seeding it first when missing. */
export async function seededDatabase(root: string, binary: string, dir: string, spec: SeedSpec): Promise<{ file: string; cached: boolean; seconds: number }> {
  const prefix = `seed-a${spec.articles}-u${spec.users}-s${spec.seed}-`
  const file = join(dir, `${prefix}${schemaKey(root, 'sqlite')}.db`)
  if (existsSync(file)) return { file, cached: true, seconds: 0 }
  // older seeds of the same size (another schema) only take disk space
  for (const f of readdirSync(dir)) if (f.startsWith(prefix)) rmSync(join(dir, f), { force: true })
  const partial = `${file}.partial`
  for (const suffix of ['', '-wal', '-shm']) rmSync(partial + suffix, { force: true })
  const t0 = performance.now()
  const args = ['seed', '--db', partial, '--users', String(spec.users), '--articles', String(spec.articles), '--seed', String(spec.seed)]
  console.log(`bench: seeding ${spec.articles.toLocaleString('en')} articles (${binary} ${args.join(' ')})`)
  const r = await run([binary, ...args], { env: { LOG_LEVEL: 'warn' }, stdout: 'inherit', stderr: 'inherit', timeoutMs: 15 * 60_000 })
  if (r.code !== 0) throw new Error(`seeding failed (exit ${r.code})`)
  if (existsSync(`${partial}-wal`) && statSync(`${partial}-wal`).size > 0) {
    throw new Error(`seeding left a non-empty WAL file next to ${partial}`)
  }
  for (const suffix of ['-wal', '-shm']) rmSync(partial + suffix, { force: true })
  renameSync(partial, file)
  return { file, cached: false, seconds: (performance.now() - t0) / 1000 }
}

/** A fresh working copy of a seeded database (and removes any stale WAL of an earlier copy). */
export function workingCopy(seeded: string, target: string): string {
  for (const suffix of ['', '-wal', '-shm']) rmSync(target + suffix, { force: true })
  copyFileSync(seeded, target)
  return target
}

export function removeDatabase(file: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
}
