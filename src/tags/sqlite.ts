import type { Database } from 'bun:sqlite'
import type { TagReadSql } from './store.ts'

/** articles_count is kept by triggers; a tag whose last article went is at 0 and hidden */
export const SQLITE_TAGS = 'SELECT name FROM tags WHERE articles_count > 0 ORDER BY articles_count DESC, name'

export function sqliteTags(db: Database): TagReadSql {
  const all = db.query<{ name: string }, []>(SQLITE_TAGS)
  const first = db.query<{ name: string }, [number]>(`${SQLITE_TAGS} LIMIT ?`)
  return { popular: (limit) => (limit === undefined ? all.all() : first.all(limit)).map((r) => r.name) }
}
