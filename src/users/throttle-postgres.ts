import type { SQL } from 'bun'
import { ms, read, write } from '../db/postgres/client.ts'
import { OVERFLOW_ORDER, type ThrottleStore } from './throttle.ts'

export function postgresThrottle(sql: SQL): ThrottleStore {
  return {
    // one statement for all keys: atomic, a window that ended starts again at this hit
    hit: (keys, windowMs, now) =>
      write(async () => {
        const rows = await sql`INSERT INTO throttle (key, hits, reset_at)
            SELECT k, 1, ${now + windowMs}::bigint FROM unnest(${[...keys]}::text[]) AS k
          ON CONFLICT (key) DO UPDATE SET
            hits     = CASE WHEN throttle.reset_at <= ${now}::bigint THEN 1 ELSE throttle.hits + 1 END,
            reset_at = CASE WHEN throttle.reset_at <= ${now}::bigint THEN EXCLUDED.reset_at ELSE throttle.reset_at END
          RETURNING key, hits, reset_at`
        const byKey = new Map([...rows].map((r: { key: string; hits: number; reset_at: string }) => [r.key, r]))
        return keys.map((k) => ({ hits: byKey.get(k)!.hits, resetAt: ms(byKey.get(k)!.reset_at) }))
      }),
    reset: (key) => write(async () => void (await sql`DELETE FROM throttle WHERE key = ${key}`)),
    undo: (key) => write(async () => void (await sql`UPDATE throttle SET hits = greatest(hits - 1, 0) WHERE key = ${key}`)),
    open: (key, now) => read(async () => (await sql`SELECT 1 FROM throttle WHERE key = ${key} AND reset_at > ${now}`).length > 0),
    purge: (now, maxRows) =>
      read(() =>
        // one transaction: instances sweeping at once do not both cut the overflow
        sql.begin(async (tx) => {
          await tx`DELETE FROM throttle WHERE reset_at <= ${now}`
          const [{ n }] = await tx`SELECT count(*)::int AS n FROM throttle`
          if (n > maxRows)
            await tx.unsafe(`DELETE FROM throttle WHERE key IN (SELECT key FROM throttle ${OVERFLOW_ORDER} LIMIT $1)`, [n - maxRows])
        }),
      ),
  }
}
