import type { Logger } from '../../log.ts'

/**
 * WAL checkpoints off the request path. A checkpoint copies committed pages
 * from the WAL into the database file and fsyncs it (synchronous=NORMAL); run
 * by the writing connection, every ~80th write paid several milliseconds for
 * it. Here a worker thread with its own connection runs passive checkpoints
 * (they never block readers or the writer) every `intervalMs`. The writer's
 * own auto-checkpoint stays on at a larger size, as a fallback should the
 * worker stop. Durability is unchanged: a commit is in the WAL before it is
 * acknowledged, whichever connection later copies it.
 */
const WORKER = `
import { Database } from 'bun:sqlite'
let db
let timer
self.onmessage = (e) => {
  if (e.data.type === 'start') {
    db = new Database(e.data.path)
    db.run('PRAGMA busy_timeout = 1000')
    const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)')
    // told once when checkpoints start failing (or fail otherwise), once when they work again
    let failing
    timer = setInterval(() => {
      try {
        checkpoint.get()
        if (failing !== undefined) postMessage({ type: 'recovered', failures: failing.count })
        failing = undefined
      } catch (err) {
        const message = String(err)
        if (failing?.message === message) failing.count++
        else {
          failing = { message, count: 1 }
          postMessage({ type: 'error', message })
        }
      }
    }, e.data.intervalMs)
  } else if (e.data.type === 'stop') {
    clearInterval(timer)
    db?.close()
    postMessage({ type: 'stopped' })
  }
}
`

export interface Checkpointer {
  stop(): Promise<void>
}

/** The writer connection's own fallback: checkpoint itself only past this many WAL pages. */
export const FALLBACK_AUTOCHECKPOINT_PAGES = 20_000

export function startCheckpointer(
  path: string,
  logger: Logger,
  { intervalMs = 200, delayMs = 0 }: { intervalMs?: number; delayMs?: number } = {},
): Checkpointer {
  let url: string | undefined
  let worker: Worker | undefined
  // created a moment later: its thread and connection are not needed for the first answers
  const start = setTimeout(() => {
    url = URL.createObjectURL(new Blob([WORKER], { type: 'text/javascript' }))
    const w = new Worker(url)
    w.onmessage = (e: MessageEvent) => {
      // one line when checkpoints start failing, one when they work again: not one per tick (a full disk fails every one)
      if (e.data?.type === 'error') logger.warn('background checkpoint failed; retrying quietly', { error: e.data.message, database: path })
      else if (e.data?.type === 'recovered') logger.info('background checkpoint works again', { failures: e.data.failures, database: path })
    }
    w.onerror = (e) => logger.warn('checkpoint worker failed', { error: String(e.message) })
    w.postMessage({ type: 'start', path, intervalMs })
    // the worker must not keep the process alive on its own
    w.unref()
    worker = w
  }, delayMs)

  return {
    stop() {
      clearTimeout(start)
      const w = worker
      if (!w) return Promise.resolve()
      return new Promise<void>((resolve) => {
        const done = () => {
          w.terminate()
          if (url) URL.revokeObjectURL(url)
          resolve()
        }
        const timeout = setTimeout(done, 1000)
        w.onmessage = (e: MessageEvent) => {
          if (e.data?.type === 'stopped') {
            clearTimeout(timeout)
            done()
          }
        }
        w.postMessage({ type: 'stop' })
      })
    },
  }
}
