/**
 * The slow lane: a worker thread with its own connection to the SQLite file,
 * reading the list pages that may cost more than a few milliseconds (see
 * sqliteListStore). Built into the binary as a second entry point.
 */
import { openDatabase } from '../db/sqlite/open.ts'
import { serveLane } from '../lane.ts'
import type { ListFilters, Page } from './list-store.ts'
import { sqliteListPlans } from './list-sqlite.ts'

export type SlowRequest = { kind: 'page'; filters: ListFilters; page: Page } | { kind: 'feed'; viewerId: number; page: Page }

let lists: ReturnType<typeof sqliteListPlans> | undefined

serveLane(
  (m: SlowRequest) => (m.kind === 'page' ? lists!.planPage(m.filters, m.page) : lists!.planFeed(m.viewerId, m.page)).run(),
  (path: string) => {
    const db = openDatabase(path)
    db.run('PRAGMA query_only = ON')
    lists = sqliteListPlans(db)
  },
)
