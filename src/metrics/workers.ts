import type { Family } from './exposition.ts'
import type { Peers } from './service.ts'

/**
 * How every worker's figures reach one scrape under `serve --workers N`. A
 * scrape reaches one worker (the kernel spreads connections); that worker
 * asks the supervisor over Bun's IPC channel, the supervisor asks every other
 * worker for its families, and hands back those that answered within
 * GATHER_MS, with how many did not. The scraped worker then writes them all,
 * each sample labelled with its worker's number.
 *
 *   scraped worker          supervisor               other workers
 *     gather {id}  ───────▶   collect {id'}  ───────▶  (each)
 *                             ◀─────── snapshot {id', families}
 *     ◀── gathered {id, families[], missing}
 */
export const GATHER_MS = 1_000

export type MetricsMessage =
  | { metrics: 'gather'; id: number }
  | { metrics: 'collect'; id: number }
  | { metrics: 'snapshot'; id: number; families: Family[] }
  | { metrics: 'gathered'; id: number; families: Family[][]; missing: number }

const isMessage = (m: unknown): m is MetricsMessage => typeof m === 'object' && m !== null && 'metrics' in m

/**
 * The supervisor's side: `receive` takes every message a worker sends;
 * `send` reaches a worker, `workers` lists those running.
 */
export function metricsRelay(send: (worker: number, message: MetricsMessage) => void, workers: () => number[]) {
  let seq = 0
  const pending = new Map<number, { got: Family[][]; waiting: Set<number>; finish: () => void }>()
  return (from: number, message: unknown): void => {
    if (!isMessage(message)) return
    if (message.metrics === 'snapshot') {
      const p = pending.get(message.id)
      if (p?.waiting.delete(from)) {
        p.got.push(message.families)
        if (p.waiting.size === 0) p.finish()
      }
      return
    }
    if (message.metrics !== 'gather') return
    const id = ++seq
    const waiting = new Set(workers().filter((w) => w !== from))
    const got: Family[][] = []
    const timer = setTimeout(() => finish(), GATHER_MS)
    const finish = () => {
      clearTimeout(timer)
      pending.delete(id)
      try {
        send(from, { metrics: 'gathered', id: message.id, families: got, missing: waiting.size })
      } catch {
        // the worker that asked is gone
      }
    }
    pending.set(id, { got, waiting, finish })
    if (waiting.size === 0) {
      finish()
      return
    }
    for (const w of waiting) {
      try {
        send(w, { metrics: 'collect', id })
      } catch {
        // exiting: it stays missing
      }
    }
  }
}

/**
 * A worker's side: answers the supervisor's `collect` with `families()`, and
 * returns what asks for the other workers' (see ServiceMetrics.peers). No
 * answer from the supervisor a little after GATHER_MS: none, missing NaN.
 */
export function linkWorker(families: () => Family[]): () => Promise<Peers> {
  let seq = 0
  const waiting = new Map<number, (peers: Peers) => void>()
  process.on('message', (message: unknown) => {
    if (!isMessage(message)) return
    if (message.metrics === 'collect')
      process.send?.({ metrics: 'snapshot', id: message.id, families: families() } satisfies MetricsMessage)
    else if (message.metrics === 'gathered') waiting.get(message.id)?.({ families: message.families, missing: message.missing })
  })
  return () =>
    new Promise<Peers>((resolve) => {
      const id = ++seq
      const timer = setTimeout(() => done({ families: [], missing: Number.NaN }), GATHER_MS + 500)
      const done = (peers: Peers) => {
        clearTimeout(timer)
        waiting.delete(id)
        resolve(peers)
      }
      waiting.set(id, done)
      process.send?.({ metrics: 'gather', id } satisfies MetricsMessage)
    })
}
