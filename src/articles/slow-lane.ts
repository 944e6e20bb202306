import { Lane, workerModule } from '../lane.ts'
import type { ListFilters, Page, PageIds } from './list-store.ts'
import type { SlowRequest } from './list-worker.ts'

/**
 * The main thread's side of the slow lane (list-worker.ts): list pages that
 * may read many rows, read by one worker thread with its own connection to
 * the SQLite file, in the order they come (see src/lane.ts).
 */
export class SlowLane {
  private readonly lane: Lane<SlowRequest, PageIds>

  constructor(path: string) {
    this.lane = new Lane(workerModule('articles/list-worker.ts'), path)
  }

  page(filters: ListFilters, page: Page): Promise<PageIds> {
    return this.lane.ask({ kind: 'page', filters, page })
  }

  feed(viewerId: number, page: Page): Promise<PageIds> {
    return this.lane.ask({ kind: 'feed', viewerId, page })
  }

  close(): void {
    this.lane.close()
  }
}
