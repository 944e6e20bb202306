import type { SQL } from 'bun'
import { userChanged } from '../cache/keys.ts'
import type { PgChanges } from '../db/postgres/changes.ts'
import { guardedTransaction, isUniqueViolation, read, write } from '../db/postgres/client.ts'
import { explainTaken } from './taken.ts'
import type { Credentials, UserRow, UserStore } from './store.ts'

export function postgresUsers(sql: SQL, changes: PgChanges): UserStore {
  const takenBy = async (id: number, email: string | null, key: string | null) => {
    const [t] = await sql`SELECT EXISTS (SELECT 1 FROM users WHERE email = ${email} AND id <> ${id}) AS email_taken,
                                 EXISTS (SELECT 1 FROM users WHERE username_key = ${key} AND id <> ${id}) AS username_taken`
    return explainTaken(t)
  }
  const conflict = async (e: unknown, id: number, email?: string, key?: string): Promise<never> => {
    if (!isUniqueViolation(e)) throw e
    throw await read(() => takenBy(id, email ?? null, key ?? null))
  }

  return {
    async create(u) {
      try {
        // answered 503 while this waited: no account is made
        const [row] = await write((expired) =>
          guardedTransaction(
            sql,
            expired,
            (tx) => tx`INSERT INTO users (username, username_key, email, password_hash, created_at)
                      VALUES (${u.username}, ${u.usernameKey}, ${u.email}, ${u.passwordHash}, ${Date.now()})
                      RETURNING id, username, email, bio, image, token_version`,
          ),
        )
        return row as UserRow
      } catch (e) {
        return conflict(e, 0, u.email, u.usernameKey)
      }
    },
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
    async update(id, c) {
      try {
        return await changes.write(async (tx, changed) => {
          // FOR UPDATE: the name before the change, and no other change in between
          const [before] = await tx`SELECT username_key FROM users WHERE id = ${id} FOR UPDATE`
          if (!before) return null
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
          const renamed = c.usernameKey !== undefined && c.usernameKey !== before.username_key
          changed(userChanged(id, renamed ? { from: before.username_key, to: c.usernameKey! } : undefined))
          return user as UserRow
        })
      } catch (e) {
        return conflict(e, id, c.email, c.usernameKey)
      }
    },
  }
}
