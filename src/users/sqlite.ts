import type { Database } from 'bun:sqlite'
import type { Credentials, UserReadSql, UserRow, UserWriteSql } from './store.ts'

const USER_COLUMNS = 'id, username, email, bio, image, token_version'

/** The reads of accounts on SQLite. */
export function sqliteUserReads(db: Database): UserReadSql {
  const byId = db.query<UserRow, [number]>(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`)
  const credentialsByEmail = db.query<Credentials, [string]>(`SELECT ${USER_COLUMNS}, password_hash FROM users WHERE email = ?`)
  return { byId: (id) => byId.get(id), credentialsByEmail: (email) => credentialsByEmail.get(email) }
}

/** The SQL of account writes on SQLite, prepared once. */
export function sqliteUserSql(db: Database): UserWriteSql {
  const insert = db.query<UserRow, Record<string, string | number>>(
    `INSERT INTO users (username, username_key, email, password_hash, created_at)
     VALUES (:username, :key, :email, :hash, :now)
     RETURNING ${USER_COLUMNS}`,
  )
  const taken = db.query<{ email_taken: number; username_taken: number }, Record<string, string | number | null>>(
    `SELECT EXISTS (SELECT 1 FROM users WHERE email = :email AND id <> :id) AS email_taken,
            EXISTS (SELECT 1 FROM users WHERE username_key = :key AND id <> :id) AS username_taken`,
  )
  const nameKey = db.query<{ username_key: string }, [number]>('SELECT username_key FROM users WHERE id = ?')
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
  return {
    insert: (u, now) => insert.get({ username: u.username, key: u.usernameKey, email: u.email, hash: u.passwordHash, now })!,
    nameKey: (id) => nameKey.get(id)?.username_key ?? null,
    update: (id, c) =>
      update.get({
        id,
        username: c.username ?? null,
        key: c.usernameKey ?? null,
        email: c.email ?? null,
        hash: c.passwordHash ?? null,
        setBio: c.bio !== undefined ? 1 : 0,
        bio: c.bio ?? null,
        setImage: c.image !== undefined ? 1 : 0,
        image: c.image ?? null,
      }),
    taken: (id, email, key) => taken.get({ email, key, id })!,
  }
}
