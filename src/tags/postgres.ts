import type { SQL } from 'bun'
import { read } from '../db/postgres/client.ts'
import type { TagStore } from './store.ts'

export function postgresTags(sql: SQL): TagStore {
  // articles_count is kept by triggers; a tag whose last article went is at 0 and hidden
  return {
    popular: () =>
      read(async () => {
        const [row] = await sql`SELECT ARRAY(SELECT name FROM tags WHERE articles_count > 0 ORDER BY articles_count DESC, name) AS names`
        return row.names as string[]
      }),
  }
}
