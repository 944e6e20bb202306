import type { Database } from 'bun:sqlite'
import type { ChangeTracker } from '../db/changes.ts'
import { isUniqueViolation, taken, type ErrorMap, unprocessable } from '../errors.ts'

export interface UserRow {
  id: number
  username: string
  email: string
  bio: string | null
  image: string | null
  token_version: number
}
export interface Credentials extends UserRow {
  password_hash: string
}
export interface UserChanges {
  username?: string
  email?: string
  passwordHash?: string
  bio?: string | null
  image?: string | null
}

const USER_COLUMNS = 'id, username, email, bio, image, token_version'

export function userQueries(db: Database, changes: ChangeTracker) {
  const insert = db.query<UserRow, { username: string; email: string; hash: string; now: number }>(
    `INSERT INTO users (username, email, password_hash, created_at) VALUES (:username, :email, :hash, :now)
     RETURNING ${USER_COLUMNS}`,
  )
  const byId = db.query<UserRow, [number]>(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`)
  const credentialsByEmail = db.query<Credentials, [string]>(
    `SELECT ${USER_COLUMNS}, password_hash FROM users WHERE email = ?`,
  )
  const takenBy = db.query<{ email_taken: number; username_taken: number }, { email: string | null; username: string | null; id: number }>(
    `SELECT EXISTS (SELECT 1 FROM users WHERE email = :email AND id <> :id) AS email_taken,
            EXISTS (SELECT 1 FROM users WHERE username = :username AND id <> :id) AS username_taken`,
  )
  // COALESCE keeps a column when the change leaves it out; bio and image can be
  // set to NULL, so they carry an explicit "set" flag instead.
  const update = db.query<UserRow, Record<string, string | number | null>>(
    `UPDATE users SET
       username      = COALESCE(:username, username),
       email         = COALESCE(:email, email),
       password_hash = COALESCE(:hash, password_hash),
       token_version = token_version + (:hash IS NOT NULL),
       bio           = CASE WHEN :setBio THEN :bio ELSE bio END,
       image         = CASE WHEN :setImage THEN :image ELSE image END
     WHERE id = :id
     RETURNING ${USER_COLUMNS}`,
  )

  /** Turns a unique violation into 422s naming every taken field (not only the first the database hit). */
  function explainConflict(e: unknown, id: number, email?: string, username?: string): never {
    if (!isUniqueViolation(e)) throw e
    const t = takenBy.get({ email: email ?? null, username: username ?? null, id })!
    const errors: ErrorMap = {}
    if (t.email_taken) errors.email = ['has already been taken']
    if (t.username_taken) errors.username = ['has already been taken']
    throw Object.keys(errors).length ? unprocessable(errors) : taken('username')
  }

  return {
    create(u: { username: string; email: string; passwordHash: string }): UserRow {
      try {
        return insert.get({ username: u.username, email: u.email, hash: u.passwordHash, now: Date.now() })!
      } catch (e) {
        explainConflict(e, 0, u.email, u.username)
      }
    },
    byId: (id: number): UserRow | null => byId.get(id),
    credentialsByEmail: (email: string): Credentials | null => credentialsByEmail.get(email),
    update(id: number, c: UserChanges): UserRow | null {
      try {
        const user = update.get({
          id,
          username: c.username ?? null,
          email: c.email ?? null,
          hash: c.passwordHash ?? null,
          setBio: c.bio !== undefined ? 1 : 0,
          bio: c.bio ?? null,
          setImage: c.image !== undefined ? 1 : 0,
          image: c.image ?? null,
        })
        // authors' names, bios and images appear in cached articles; a new
        // password revokes tokens
        changes.changed('users')
        return user
      } catch (e) {
        explainConflict(e, id, c.email, c.username)
      }
    },
  }
}
export type UserQueries = ReturnType<typeof userQueries>
