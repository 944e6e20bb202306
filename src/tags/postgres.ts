import type { SQL } from 'bun'
import { read } from '../db/postgres/client.ts'
import type { TagReadSql } from './store.ts'

/** articles_count is kept by triggers; a tag whose last article went is at 0 and hidden */
export const PG_TAGS = 'SELECT ARRAY(SELECT name FROM tags WHERE articles_count > 0 ORDER BY articles_count DESC, name) AS names'
const PG_FIRST_TAGS = 'SELECT ARRAY(SELECT name FROM tags WHERE articles_count > 0 ORDER BY articles_count DESC, name LIMIT $1) AS names'

export function postgresTags(sql: SQL): TagReadSql {
  return {
    popular: (limit) =>
      read(async () => {
        const [row] = await (limit === undefined ? sql.unsafe(PG_TAGS) : sql.unsafe(PG_FIRST_TAGS, [limit]))
        return row.names as string[]
      }),
  }
}
