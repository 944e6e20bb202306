import type { SQL, TransactionSQL } from 'bun'
import { read } from '../db/postgres/client.ts'
import type { Credentials, UserReadSql, UserRow, UserWriteSql } from './store.ts'

/** The reads of accounts on PostgreSQL. */
export function postgresUserReads(sql: SQL): UserReadSql {
  return {
    byId: (id) =>
      read(async () => {
        const [row] = await sql`SELECT id, username, email, bio, image, token_version FROM users WHERE id = ${id}`
        return (row as UserRow | undefined) ?? null
      }),
    credentialsByEmail: (email) =>
      read(async () => {
        const [row] = await sql`SELECT id, username, email, bio, image, token_version, password_hash FROM users WHERE email = ${email}`
        return (row as Credentials | undefined) ?? null
      }),
  }
}

/** The SQL of account writes on PostgreSQL, over one transaction. */
export function postgresUserSql(tx: TransactionSQL): UserWriteSql {
  return {
    async insert(u, now) {
      const [row] = await tx`INSERT INTO users (username, username_key, email, password_hash, created_at)
        VALUES (${u.username}, ${u.usernameKey}, ${u.email}, ${u.passwordHash}, ${now})
        RETURNING id, username, email, bio, image, token_version`
      return row as UserRow
    },
    async nameKey(id) {
      // FOR UPDATE: the name before the change, and no other change in between
      const [before] = await tx`SELECT username_key FROM users WHERE id = ${id} FOR UPDATE`
      return before ? (before.username_key as string) : null
    },
    async update(id, c) {
      const hash = c.passwordHash ?? null
      const [user] = await tx`UPDATE users SET
          username      = COALESCE(${c.username ?? null}::text, username),
          username_key  = COALESCE(${c.usernameKey ?? null}::text, username_key),
          email         = COALESCE(${c.email ?? null}::text, email),
          password_hash = COALESCE(${hash}::text, password_hash),
          token_version = token_version + CASE WHEN ${hash}::text IS NULL THEN 0 ELSE 1 END,
          bio           = CASE WHEN ${c.bio !== undefined} THEN ${c.bio ?? null}::text ELSE bio END,
          image         = CASE WHEN ${c.image !== undefined} THEN ${c.image ?? null}::text ELSE image END
        WHERE id = ${id}
        RETURNING id, username, email, bio, image, token_version`
      return (user as UserRow | undefined) ?? null
    },
    async taken(id, email, key) {
      const [t] = await tx`SELECT EXISTS (SELECT 1 FROM users WHERE email = ${email} AND id <> ${id}) AS email_taken,
                                  EXISTS (SELECT 1 FROM users WHERE username_key = ${key} AND id <> ${id}) AS username_taken`
      return t
    },
  }
}
