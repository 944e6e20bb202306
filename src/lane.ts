/**
 * A lane: a worker thread that does work too long for the event loop, one request after another,
 * so that no other request waits behind it. The worker is started on first use and never keeps
 * the process alive; if it dies, what was pending fails (the requests answer 500) and the next
 * request starts a new one. The worker's side is `serveLane`.
 */
export class Lane<Req, Res> {
  private worker: Worker | undefined
  private readonly pending = new Map<number, { resolve(r: Res): void; reject(e: unknown): void }>()
  private next = 0

  /** `module`: the worker's (workerModule); `setup`: its first message */
  constructor(
    private readonly module: string,
    private readonly setup?: unknown,
  ) {}

  ask(request: Req): Promise<Res> {
    const id = ++this.next
    return new Promise<Res>((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.start().postMessage({ id, request })
    })
  }

  close(): void {
    this.worker?.terminate()
    this.fail(new Error('the lane was closed'))
    this.worker = undefined
  }

  private start(): Worker {
    if (this.worker) return this.worker
    const w = new Worker(this.module)
    w.onmessage = (e: MessageEvent) => {
      const { id, result, error } = e.data as { id: number; result?: Res; error?: string }
      const p = this.pending.get(id)
      this.pending.delete(id)
      if (error !== undefined) p?.reject(new Error(error))
      else p?.resolve(result!)
    }
    w.onerror = (e) => {
      this.fail(new Error(`the worker stopped: ${e.message}`))
      this.worker = undefined
    }
    w.unref()
    if (this.setup !== undefined) w.postMessage({ setup: this.setup })
    this.worker = w
    return w
  }

  private fail(e: unknown): void {
    for (const p of this.pending.values()) p.reject(e)
    this.pending.clear()
  }
}

/** Where the modules are: src/, this file's folder. */
const SRC = new URL('./', import.meta.url)

/**
 * The module a lane's worker runs, by its path under src/ (`articles/list-worker.ts`). In the
 * compiled binary `import.meta.url` still names the source file the build read, absent from a
 * user's machine: there the worker is the binary's own entry point of that path (package.json's
 * build names each), which Bun finds by the path from the build's root, src/.
 */
export const workerModule = (path: string): string => (Bun.main.startsWith('/$bunfs/') ? `./${path}` : new URL(path, SRC).href)

/** The worker's side of a Lane: `setUp` takes the lane's `setup`, `handle` answers each request in turn. */
export function serveLane<Req, Res>(handle: (request: Req) => Res, setUp?: (setup: never) => void): void {
  // a worker's global scope is its side of the channel
  const worker = globalThis as unknown as Worker
  worker.onmessage = (e: MessageEvent) => {
    const m = e.data as { setup: never } | { id: number; request: Req }
    if ('setup' in m) return setUp?.(m.setup)
    try {
      worker.postMessage({ id: m.id, result: handle(m.request) })
    } catch (err) {
      worker.postMessage({ id: m.id, error: String(err) })
    }
  }
}
