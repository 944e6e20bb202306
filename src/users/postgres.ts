import type { SQL, TransactionSQL } from 'bun'
import { intArray, ms, pipelined, read } from '../db/postgres/client.ts'
import type { TokenState } from '../auth/actor.ts'
import type { Account, AccountCounts, Credentials, UserReadSql, UserRow, UserWriteSql } from './store.ts'

const ACCOUNT_COLUMNS = 'id, username, email, bio, image, created_at, locked_at'
/** An account's counts (`u` the user): articles and favorites are kept by triggers, the rest counted on an index. */
const COUNTS = `u.articles_count AS articles, u.favorites_count AS favorites,
  (SELECT count(*) FROM comments WHERE author_id = u.id)::int AS comments,
  (SELECT count(*) FROM follows WHERE followee_id = u.id)::int AS followers,
  (SELECT count(*) FROM follows WHERE follower_id = u.id)::int AS following`

/** bigint times arrive as strings */
type Raw = Omit<Account, 'created_at' | 'locked_at'> & { created_at: string; locked_at: string | null }
const account = <R extends Raw>(r: R) => ({ ...r, created_at: ms(r.created_at), locked_at: r.locked_at === null ? null : ms(r.locked_at) })

/** The reads of accounts on PostgreSQL. */
export function postgresUserReads(sql: SQL): UserReadSql {
  return {
    byId: (id) =>
      read(async () => {
        const [row] = await sql`SELECT id, username, email, bio, image, token_version, kept_token FROM users WHERE id = ${id}`
        return (row as UserRow | undefined) ?? null
      }),
    credentialsByEmail: (email) =>
      read(async () => {
        const [row] =
          await sql`SELECT id, username, email, bio, image, token_version, kept_token, password_hash, locked_at IS NOT NULL AS locked
          FROM users WHERE email = ${email}`
        return (row as Credentials | undefined) ?? null
      }),
    accounts: (search, limit) =>
      read(async () => {
        // newest first down the primary key, stopping after `limit` matches
        const rows = await sql.unsafe(
          `SELECT ${ACCOUNT_COLUMNS} FROM users
           WHERE $1::text IS NULL OR strpos(username_key, $1) > 0 OR strpos(email, $2) > 0
           ORDER BY id DESC LIMIT $3`,
          [search?.nameKey ?? null, search?.email ?? null, limit],
        )
        return [...rows].map((r: Raw) => account(r))
      }),
    account: (key) =>
      read(async () => {
        const [row] = await sql.unsafe(`SELECT ${ACCOUNT_COLUMNS}, ${COUNTS} FROM users u WHERE username_key = $1`, [key])
        return row ? account(row as Raw & AccountCounts) : null
      }),
  }
}

/** The SQL of account writes on PostgreSQL, over one transaction. */
export function postgresUserSql(tx: TransactionSQL): UserWriteSql {
  return {
    async insert(u, now) {
      const [row] = await tx`INSERT INTO users (username, username_key, email, password_hash, created_at)
        VALUES (${u.username}, ${u.usernameKey}, ${u.email}, ${u.passwordHash}, ${now})
        RETURNING id, username, email, bio, image, token_version, kept_token`
      return row as UserRow
    },
    async before(id) {
      // FOR UPDATE: the name before the change, and no other change in between; the account's turn as every
      // write by its user takes it (src/db/postgres/writes.ts)
      const [before] = await tx`SELECT username_key, token_version, kept_token
        FROM pg_advisory_xact_lock_shared((hashtext(current_schema())::bigint << 32) | ${id}), users
        WHERE id = ${id} FOR UPDATE OF users`
      return (before as ({ username_key: string } & TokenState) | undefined) ?? null
    },
    async update(id, c) {
      const hash = c.passwordHash ?? null
      const [user] = await tx`UPDATE users SET
          username      = COALESCE(${c.username ?? null}::text, username),
          username_key  = COALESCE(${c.usernameKey ?? null}::text, username_key),
          email         = COALESCE(${c.email ?? null}::text, email),
          password_hash = COALESCE(${hash}::text, password_hash),
          token_version = token_version + CASE WHEN ${hash}::text IS NULL THEN 0 ELSE 1 END,
          kept_token    = CASE WHEN ${hash}::text IS NULL THEN kept_token ELSE ${c.keptToken ?? null}::text || ':' || (token_version + 1) END,
          bio           = CASE WHEN ${c.bio !== undefined} THEN ${c.bio ?? null}::text ELSE bio END,
          image         = CASE WHEN ${c.image !== undefined} THEN ${c.image ?? null}::text ELSE image END
        WHERE id = ${id}
        RETURNING id, username, email, bio, image, token_version, kept_token`
      return (user as UserRow | undefined) ?? null
    },
    async taken(id, email, key) {
      const [t] = await tx`SELECT EXISTS (SELECT 1 FROM users WHERE email = ${email} AND id <> ${id}) AS email_taken,
                                  EXISTS (SELECT 1 FROM users WHERE username_key = ${key} AND id <> ${id}) AS username_taken`
      return t
    },
    async account(key) {
      // FOR UPDATE: no other change to the account before this one commits. Its turn first, exclusive: the
      // writes of its user that begin meanwhile wait behind this one (src/db/postgres/writes.ts)
      const [a] = await tx`SELECT id, username, locked_at IS NOT NULL AS locked
        FROM pg_advisory_xact_lock((hashtext(current_schema())::bigint << 32) | (SELECT id FROM users WHERE username_key = ${key})), users
        WHERE username_key = ${key} FOR UPDATE OF users`
      return (a as { id: number; username: string; locked: boolean } | undefined) ?? null
    },
    setLockedAt: async (id, at) => void (await tx`UPDATE users SET locked_at = ${at}::bigint WHERE id = ${id}`),
    revokeTokens: async (id) => void (await tx`UPDATE users SET token_version = token_version + 1, kept_token = NULL WHERE id = ${id}`),
    async counts(id) {
      const [n] = await tx.unsafe(`SELECT ${COUNTS} FROM users u WHERE id = $1`, [id])
      return n as AccountCounts
    },
    async removeSome(id, articles, limit) {
      let a = null
      if (articles) {
        const [row] = await tx`SELECT ARRAY(SELECT id FROM articles WHERE author_id = ${id} ORDER BY id LIMIT ${limit}) AS ids`
        const ids = intArray(row.ids)
        // their links go with them, each moving its tag's counter: those rows locked first, in name order, as
        // every other write of tags takes them (src/articles/postgres.ts, TAG_LOCK); else a creation deadlocks this
        const locked = tx`SELECT 1 FROM tags WHERE id IN (SELECT tag_id FROM article_tags WHERE article_id = ANY (${ids}::int[]))
                          ORDER BY name FOR NO KEY UPDATE`.execute()
        const removed = tx`DELETE FROM articles WHERE id = ANY (${ids}::int[])`.execute()
        ;[, a] = await pipelined(locked, removed)
      }
      const f =
        await tx`DELETE FROM favorites WHERE user_id = ${id} AND article_id IN (SELECT article_id FROM favorites WHERE user_id = ${id} LIMIT ${limit})`
      return { articles: a?.count ?? 0, favorites: f.count }
    },
    remove: async (id) => void (await tx`DELETE FROM users WHERE id = ${id}`),
  }
}
