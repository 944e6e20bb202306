import type { Database } from 'bun:sqlite'
import { userChanged } from '../cache/keys.ts'
import type { SqliteChanges } from '../db/sqlite/changes.ts'
import { isUniqueViolation } from '../db/sqlite/open.ts'
import { explainTaken } from './taken.ts'
import type { Credentials, NewUser, UserChanges, UserRow, UserStore } from './store.ts'

const USER_COLUMNS = 'id, username, email, bio, image, token_version'

export function sqliteUsers(db: Database, changes: SqliteChanges): UserStore {
  const insert = db.query<UserRow, Record<string, string | number>>(
    `INSERT INTO users (username, username_key, email, password_hash, created_at)
     VALUES (:username, :key, :email, :hash, :now)
     RETURNING ${USER_COLUMNS}`,
  )
  const byId = db.query<UserRow, [number]>(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`)
  const credentialsByEmail = db.query<Credentials, [string]>(`SELECT ${USER_COLUMNS}, password_hash FROM users WHERE email = ?`)
  const takenBy = db.query<{ email_taken: number; username_taken: number }, Record<string, string | number | null>>(
    `SELECT EXISTS (SELECT 1 FROM users WHERE email = :email AND id <> :id) AS email_taken,
            EXISTS (SELECT 1 FROM users WHERE username_key = :key AND id <> :id) AS username_taken`,
  )
  const current = db.query<{ username_key: string }, [number]>('SELECT username_key FROM users WHERE id = ?')
  // COALESCE keeps a column when the change leaves it out; bio and image can be
  // set to NULL, so they carry an explicit "set" flag instead.
  const update = db.query<UserRow, Record<string, string | number | null>>(
    `UPDATE users SET
       username      = COALESCE(:username, username),
       username_key  = COALESCE(:key, username_key),
       email         = COALESCE(:email, email),
       password_hash = COALESCE(:hash, password_hash),
       token_version = token_version + (:hash IS NOT NULL),
       bio           = CASE WHEN :setBio THEN :bio ELSE bio END,
       image         = CASE WHEN :setImage THEN :image ELSE image END
     WHERE id = :id
     RETURNING ${USER_COLUMNS}`,
  )

  const conflict = (e: unknown, id: number, email?: string, key?: string): never => {
    if (!isUniqueViolation(e)) throw e
    throw explainTaken(takenBy.get({ email: email ?? null, key: key ?? null, id })!)
  }

  return {
    create(u: NewUser): UserRow {
      try {
        // a new account changes nothing cached (no keys); through write() so it counts as the service's own
        return changes.write(
          () => insert.get({ username: u.username, key: u.usernameKey, email: u.email, hash: u.passwordHash, now: Date.now() })!,
        )
      } catch (e) {
        return conflict(e, 0, u.email, u.usernameKey)
      }
    },
    byId: (id) => byId.get(id),
    credentialsByEmail: (email) => credentialsByEmail.get(email),
    update(id: number, c: UserChanges): UserRow | null {
      try {
        return changes.write((changed) => {
          const before = current.get(id)
          const user = update.get({
            id,
            username: c.username ?? null,
            key: c.usernameKey ?? null,
            email: c.email ?? null,
            hash: c.passwordHash ?? null,
            setBio: c.bio !== undefined ? 1 : 0,
            bio: c.bio ?? null,
            setImage: c.image !== undefined ? 1 : 0,
            image: c.image ?? null,
          })
          if (user && before) {
            const renamed = c.usernameKey !== undefined && c.usernameKey !== before.username_key
            changed(userChanged(id, renamed ? { from: before.username_key, to: c.usernameKey! } : undefined))
          }
          return user
        })
      } catch (e) {
        return conflict(e, id, c.email, c.usernameKey)
      }
    },
  }
}
