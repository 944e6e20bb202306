import type { ListFilters, Page, PageIds } from './list-store.ts'
import type { SlowRequest } from './list-worker.ts'

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never
type Pending = { resolve(r: PageIds): void; reject(e: unknown): void }

/**
 * The main thread's side of the slow lane (list-worker.ts): requests go to
 * one worker thread, started on first use, and answer in the order it reads
 * them. If the worker dies, what was pending fails (500) and the next request
 * starts a new one.
 */
export class SlowLane {
  private worker: Worker | undefined
  private readonly pending = new Map<number, Pending>()
  private next = 0

  constructor(private readonly path: string) {}

  page(filters: ListFilters, page: Page): Promise<PageIds> {
    return this.send({ kind: 'page', filters, page })
  }

  feed(viewerId: number, page: Page): Promise<PageIds> {
    return this.send({ kind: 'feed', viewerId, page })
  }

  close(): void {
    this.worker?.terminate()
    this.fail(new Error('the slow lane was closed'))
    this.worker = undefined
  }

  private send(request: DistributiveOmit<SlowRequest, 'id'>): Promise<PageIds> {
    const id = ++this.next
    return new Promise<PageIds>((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.start().postMessage({ ...request, id })
    })
  }

  private start(): Worker {
    if (this.worker) return this.worker
    const w = new Worker(new URL('./list-worker.ts', import.meta.url).href)
    w.onmessage = (e: MessageEvent) => {
      const { id, result, error } = e.data as { id: number; result?: PageIds; error?: string }
      const p = this.pending.get(id)
      this.pending.delete(id)
      if (error !== undefined) p?.reject(new Error(error))
      else p?.resolve(result!)
    }
    w.onerror = (e) => {
      this.fail(e)
      this.worker = undefined
    }
    // the worker must not keep the process alive on its own
    w.unref()
    w.postMessage({ type: 'open', path: this.path })
    this.worker = w
    return w
  }

  private fail(e: unknown): void {
    for (const p of this.pending.values()) p.reject(e)
    this.pending.clear()
  }
}
