import type { Database } from 'bun:sqlite'

export function tagQueries(db: Database) {
  // articles_count is kept by triggers; a tag whose last article went is at 0 and hidden
  const popular = db.query<{ json: string }, []>(
    `SELECT coalesce(json_group_array(name ORDER BY articles_count DESC, name), '[]') AS json
     FROM tags WHERE articles_count > 0`,
  )
  return {
    /** Every tag in use, most used first, ties in ascending order, as a JSON array. */
    popular: (): string => popular.get()!.json,
  }
}
export type TagQueries = ReturnType<typeof tagQueries>
