import type { Database } from 'bun:sqlite'
import type { TokenState } from '../auth/actor.ts'
import type { Account, AccountCounts, Credentials, UserReadSql, UserRow, UserWriteSql } from './store.ts'

const USER_COLUMNS = 'id, username, email, bio, image, token_version, kept_token'
const ACCOUNT_COLUMNS = 'id, username, email, bio, image, created_at, locked_at'
/** An account's counts (`u` the user): articles and favorites are kept by triggers, the rest counted on an index. */
const COUNTS = `u.articles_count AS articles, u.favorites_count AS favorites,
  (SELECT count(*) FROM comments WHERE author_id = u.id) AS comments,
  (SELECT count(*) FROM follows WHERE followee_id = u.id) AS followers,
  (SELECT count(*) FROM follows WHERE follower_id = u.id) AS following`

/** The reads of accounts on SQLite. */
export function sqliteUserReads(db: Database): UserReadSql {
  const byId = db.query<UserRow, [number]>(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`)
  const credentialsByEmail = db.query<Omit<Credentials, 'locked'> & { locked: number }, [string]>(
    `SELECT ${USER_COLUMNS}, password_hash, locked_at IS NOT NULL AS locked FROM users WHERE email = ?`,
  )
  // newest first down the primary key, stopping after `limit` matches
  const accounts = db.query<Account, Record<string, string | number | null>>(
    `SELECT ${ACCOUNT_COLUMNS} FROM users
     WHERE :key IS NULL OR instr(username_key, :key) > 0 OR instr(email, :email) > 0
     ORDER BY id DESC LIMIT :limit`,
  )
  const account = db.query<Account & AccountCounts, [string]>(`SELECT ${ACCOUNT_COLUMNS}, ${COUNTS} FROM users u WHERE username_key = ?`)
  return {
    byId: (id) => byId.get(id),
    credentialsByEmail(email) {
      const c = credentialsByEmail.get(email)
      return c && { ...c, locked: c.locked === 1 }
    },
    accounts: (search, limit) => accounts.all({ key: search?.nameKey ?? null, email: search?.email ?? null, limit }),
    account: (key) => account.get(key),
  }
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
  const before = db.query<{ username_key: string } & TokenState, [number]>(
    'SELECT username_key, token_version, kept_token FROM users WHERE id = ?',
  )
  // COALESCE keeps a column when the change leaves it out; bio and image can be
  // set to NULL, so they carry an explicit "set" flag instead.
  const update = db.query<UserRow, Record<string, string | number | null>>(
    `UPDATE users SET
       username      = COALESCE(:username, username),
       username_key  = COALESCE(:key, username_key),
       email         = COALESCE(:email, email),
       password_hash = COALESCE(:hash, password_hash),
       token_version = token_version + (:hash IS NOT NULL),
       kept_token    = CASE WHEN :hash IS NOT NULL THEN :kept || ':' || (token_version + 1) ELSE kept_token END,
       bio           = CASE WHEN :setBio THEN :bio ELSE bio END,
       image         = CASE WHEN :setImage THEN :image ELSE image END
     WHERE id = :id
     RETURNING ${USER_COLUMNS}`,
  )
  const account = db.query<{ id: number; username: string; locked: number }, [string]>(
    'SELECT id, username, locked_at IS NOT NULL AS locked FROM users WHERE username_key = ?',
  )
  const setLockedAt = db.query<unknown, [number | null, number]>('UPDATE users SET locked_at = ? WHERE id = ?')
  const revokeTokens = db.query<unknown, [number]>('UPDATE users SET token_version = token_version + 1, kept_token = NULL WHERE id = ?')
  const counts = db.query<AccountCounts, [number]>(`SELECT ${COUNTS} FROM users u WHERE id = ?`)
  const remove = db.query<unknown, [number]>('DELETE FROM users WHERE id = ?')
  const someArticles = db.query<unknown, [number, number]>(
    'DELETE FROM articles WHERE id IN (SELECT id FROM articles WHERE author_id = ? ORDER BY id LIMIT ?)',
  )
  const someFavorites = db.query<unknown, [number, number, number]>(
    'DELETE FROM favorites WHERE user_id = ? AND article_id IN (SELECT article_id FROM favorites WHERE user_id = ? LIMIT ?)',
  )
  return {
    insert: (u, now) => insert.get({ username: u.username, key: u.usernameKey, email: u.email, hash: u.passwordHash, now })!,
    before: (id) => before.get(id),
    update: (id, c) =>
      update.get({
        id,
        username: c.username ?? null,
        key: c.usernameKey ?? null,
        email: c.email ?? null,
        hash: c.passwordHash ?? null,
        kept: c.keptToken ?? null,
        setBio: c.bio !== undefined ? 1 : 0,
        bio: c.bio ?? null,
        setImage: c.image !== undefined ? 1 : 0,
        image: c.image ?? null,
      }),
    taken: (id, email, key) => taken.get({ email, key, id })!,
    // the transaction holds the write lock: nothing to lock per row
    account(key) {
      const a = account.get(key)
      return a && { ...a, locked: a.locked === 1 }
    },
    setLockedAt: (id, at) => void setLockedAt.run(at, id),
    revokeTokens: (id) => void revokeTokens.run(id),
    counts: (id) => counts.get(id)!,
    removeSome: (id, articles, limit) => ({
      articles: articles ? someArticles.run(id, limit).changes : 0,
      favorites: someFavorites.run(id, id, limit).changes,
    }),
    remove: (id) => void remove.run(id),
  }
}
