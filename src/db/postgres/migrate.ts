import type { SQL } from 'bun'
import m001 from '../migrations/postgres/001_init.sql' with { type: 'text' }
import m002 from '../migrations/postgres/002_lasting_ids.sql' with { type: 'text' }
import m003 from '../migrations/postgres/003_reserved_slugs.sql' with { type: 'text' }
import m004 from '../migrations/postgres/004_locked_accounts.sql' with { type: 'text' }
import m005 from '../migrations/postgres/005_changes_by_hand.sql' with { type: 'text' }
import m006 from '../migrations/postgres/006_kept_token.sql' with { type: 'text' }
import m007 from '../migrations/postgres/007_lasting_article_ids.sql' with { type: 'text' }
import { MigrationError, othersTables } from '../migration-error.ts'
import { MIGRATING, type OpeningStep } from '../opening.ts'

/**
 * Numbered migrations for PostgreSQL, the same numbers and meaning as
 * SQLite's (src/db/migrations/sqlite), embedded in the binary. Never edit one
 * that has landed: add the next number.
 */
export const migrations: readonly string[] = [m001, m002, m003, m004, m005, m006, m007]

/** Any fixed number: the advisory lock every instance takes to migrate. */
const MIGRATION_LOCK = 0x636f6e64 // "cond"

export async function schemaVersion(sql: SQL): Promise<number> {
  const [row] = await sql`SELECT to_regclass('conduit_schema') IS NOT NULL AS present`
  if (!row.present) return 0
  const [v] = await sql`SELECT version FROM conduit_schema`
  return v?.version ?? 0
}

/**
 * Applies every pending migration in one transaction that holds an advisory
 * lock: instances starting together on an empty database wait for the first,
 * then find the schema applied. A database migrated by a newer binary is
 * refused. Returns the versions applied (up to `target`: tests of a migration).
 * `step` hears of a wait for the lock (with who holds it) and of the migrating.
 */
export async function migrate(sql: SQL, target = migrations.length, step?: OpeningStep): Promise<number[]> {
  return sql.begin(async (tx) => {
    // a migration, and waiting for another instance's, may take longer than a request may (DATABASE_TIMEOUT_SECONDS)
    await tx`SET LOCAL statement_timeout = 0`
    await tx`SET LOCAL lock_timeout = 0`
    await tx`SET LOCAL idle_in_transaction_session_timeout = 0`
    // per schema, so tests working in separate schemas do not wait on each other
    const [lock] = await tx`SELECT pg_try_advisory_xact_lock(${MIGRATION_LOCK}, hashtext(current_schema())) AS got`
    if (!lock.got) {
      step?.('waiting for another session to finish migrating it', await lockHolder(tx))
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK}, hashtext(current_schema()))`
    }
    await refuseOthers(tx)
    await tx`CREATE TABLE IF NOT EXISTS conduit_schema (version integer NOT NULL)`
    const [row] = await tx`SELECT version FROM conduit_schema`
    if (!row) await tx`INSERT INTO conduit_schema (version) VALUES (0)`
    const current: number = row?.version ?? 0
    if (current > migrations.length) {
      throw new MigrationError(
        `database schema version ${current} is newer than this binary knows (${migrations.length}); use a newer conduit`,
      )
    }
    if (current < target) step?.(MIGRATING, { from: current, to: target })
    const applied: number[] = []
    for (let v = current + 1; v <= target; v++) {
      await tx.unsafe(migrations[v - 1]!)
      applied.push(v)
    }
    if (applied.length) await tx`UPDATE conduit_schema SET version = ${target}`
    return applied
  })
}

/**
 * Who holds the migration lock, as far as this role may see (another role's
 * client address is hidden); since: its transaction's start, or when it went
 * idle holding the lock.
 */
async function lockHolder(tx: SQL): Promise<Record<string, string | number>> {
  const [h] = await tx`
    SELECT a.pid, a.application_name, host(a.client_addr) AS client, to_char(coalesce(a.xact_start, a.state_change) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS since
    FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted AND l.classid = ${MIGRATION_LOCK}
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.objid = hashtext(current_schema())::oid AND l.objsubid = 2`
  if (!h) return {}
  const holder: Record<string, string | number> = { holder_pid: h.pid }
  if (h.application_name) holder.holder_application = h.application_name
  if (h.client) holder.holder_client = h.client
  if (h.since) holder.holder_since = h.since
  return holder
}

/**
 * A schema without Conduit's version table but with tables of its own is
 * another program's: refused before anything is created in it (as SQLite's
 * refuseOthers does for a file).
 */
async function refuseOthers(tx: SQL): Promise<void> {
  const tables: { name: string }[] = await tx`
    SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
      AND NOT EXISTS (SELECT 1 FROM pg_class v WHERE v.relnamespace = n.oid AND v.relname = 'conduit_schema')
      -- an extension's own tables (PostGIS's spatial_ref_sys, pg_stat_statements) are no program's data
      AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
    ORDER BY c.relname`
  if (tables.length === 0) return
  // (no option named: the database may be copy's --to as well as --db or DATABASE_URL)
  throw othersTables(
    tables.map((t) => t.name),
    "not Conduit's; choose a new database or one of Conduit's",
  )
}
