import type { Database } from 'bun:sqlite'
import { randomBytes } from 'node:crypto'

/**
 * The signing secret: the configured one, else one generated on first start
 * and kept in the database so tokens survive restarts. INSERT OR IGNORE makes
 * two instances starting at once agree on the first secret written.
 */
export function signingSecret(db: Database, configured: string | undefined): string {
  if (configured) return configured
  db.query("INSERT OR IGNORE INTO settings (key, value) VALUES ('jwt_secret', ?)").run(randomBytes(48).toString('base64url'))
  return (db.query("SELECT value FROM settings WHERE key = 'jwt_secret'").get() as { value: string }).value
}
