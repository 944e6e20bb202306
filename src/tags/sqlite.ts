import type { Database } from 'bun:sqlite'
import type { TagStore } from './store.ts'

export function sqliteTags(db: Database): TagStore {
  // articles_count is kept by triggers; a tag whose last article went is at 0 and hidden
  const popular = db.query<{ name: string }, []>(
    'SELECT name FROM tags WHERE articles_count > 0 ORDER BY articles_count DESC, name',
  )
  return { popular: () => popular.all().map((r) => r.name) }
}
