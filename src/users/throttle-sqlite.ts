import type { Database } from 'bun:sqlite'
import { KNOWN, OVERFLOW_ORDER, type ThrottleStore, type WindowState } from './throttle.ts'

export function sqliteThrottle(db: Database): ThrottleStore {
  // a window that ended starts again at this hit
  const hit = db.query<WindowState, { key: string; now: number; end: number }>(
    `INSERT INTO throttle (key, hits, reset_at) VALUES (:key, 1, :end)
     ON CONFLICT (key) DO UPDATE SET
       hits     = CASE WHEN reset_at <= :now THEN 1 ELSE hits + 1 END,
       reset_at = CASE WHEN reset_at <= :now THEN :end ELSE reset_at END
     RETURNING hits, reset_at AS resetAt`,
  )
  const reset = db.query<unknown, [string]>('DELETE FROM throttle WHERE key = ?')
  const undo = db.query<unknown, [string]>('UPDATE throttle SET hits = max(hits - 1, 0) WHERE key = ?')
  const open = db.query<unknown, [string, number]>('SELECT 1 FROM throttle WHERE key = ? AND reset_at > ?')
  const renew = db.query<unknown, [string, number]>(
    'INSERT INTO throttle (key, hits, reset_at) VALUES (?1, 1, ?2) ON CONFLICT (key) DO UPDATE SET hits = hits + 1, reset_at = ?2',
  )
  const known = `${KNOWN}:%`
  const hits = db.transaction((keys: readonly string[], windowMs: number, now: number) =>
    keys.map((key) => hit.get({ key, now, end: now + windowMs })!),
  )
  return {
    hit: (keys, windowMs, now) => hits.immediate(keys, windowMs, now),
    reset: (key) => void reset.run(key),
    undo: (key) => void undo.run(key),
    open: (key, now) => open.get(key, now) !== null,
    renew: (key, windowMs, now) => void renew.run(key, now + windowMs),
    purge(now, maxRows) {
      db.query('DELETE FROM throttle WHERE reset_at <= ?').run(now)
      for (const [which, order] of [
        ['NOT LIKE', OVERFLOW_ORDER],
        ['LIKE', 'ORDER BY reset_at'],
      ] as const) {
        const { n } = db.query<{ n: number }, [string]>(`SELECT count(*) AS n FROM throttle WHERE key ${which} ?`).get(known)!
        if (n > maxRows)
          db.query(`DELETE FROM throttle WHERE key IN (SELECT key FROM throttle WHERE key ${which} ?1 ${order} LIMIT ?2)`).run(
            known,
            n - maxRows,
          )
      }
    },
  }
}
