/**
 * The slow lane: a worker thread with its own connection to the SQLite file,
 * reading the list pages that may cost more than a few milliseconds (see
 * sqliteListStore). Built into the binary as a second entry point.
 */
import { openDatabase } from '../db/sqlite/open.ts'
import type { ListFilters, Page } from './list-store.ts'
import { sqliteLists } from './list-sqlite.ts'

export type SlowRequest =
  | { id: number; kind: 'page'; filters: ListFilters; page: Page }
  | { id: number; kind: 'feed'; viewerId: number; page: Page }

declare const self: Worker
let lists: ReturnType<typeof sqliteLists> | undefined

self.onmessage = (e: MessageEvent) => {
  const m = e.data as { type: 'open'; path: string } | { type: 'close' } | SlowRequest
  if ('type' in m) {
    if (m.type === 'open') {
      const db = openDatabase(m.path)
      db.run('PRAGMA query_only = ON')
      lists = sqliteLists(db)
    }
    return
  }
  try {
    const planned = m.kind === 'page' ? lists!.planPage(m.filters, m.page) : lists!.planFeed(m.viewerId, m.page)
    postMessage({ id: m.id, result: planned.run() })
  } catch (err) {
    postMessage({ id: m.id, error: String(err) })
  }
}
