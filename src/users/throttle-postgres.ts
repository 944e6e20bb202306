import type { SQL } from 'bun'
import { ms, read, write } from '../db/postgres/client.ts'
import { KNOWN, OVERFLOW_ORDER, type ThrottleStore } from './throttle.ts'

const KNOWN_KEYS = `${KNOWN}:%`

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
    renew: (key, windowMs, now) =>
      write(
        async () =>
          void (await sql`INSERT INTO throttle (key, hits, reset_at) VALUES (${key}, 1, ${now + windowMs}::bigint)
            ON CONFLICT (key) DO UPDATE SET hits = throttle.hits + 1, reset_at = EXCLUDED.reset_at`),
      ),
    purge: (now, maxRows) =>
      read(() =>
        // one transaction: instances sweeping at once do not both cut the overflow
        sql.begin(async (tx) => {
          await tx`DELETE FROM throttle WHERE reset_at <= ${now}`
          for (const [which, order] of [
            ['NOT LIKE', OVERFLOW_ORDER],
            ['LIKE', 'ORDER BY reset_at'],
          ] as const) {
            const [{ n }] = await tx.unsafe(`SELECT count(*)::int AS n FROM throttle WHERE key ${which} $1`, [KNOWN_KEYS])
            if (n > maxRows)
              await tx.unsafe(`DELETE FROM throttle WHERE key IN (SELECT key FROM throttle WHERE key ${which} $1 ${order} LIMIT $2)`, [
                KNOWN_KEYS,
                n - maxRows,
              ])
          }
        }),
      ),
  }
}
