import { type Family, family } from './exposition.ts'

/** How often the event loop's lag is sampled. */
const LAG_EVERY_MS = 500
export const LAG_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const

/**
 * The event loop's lag: an unref'd timer due every LAG_EVERY_MS notes how
 * late it fires (what a request arriving then would have waited before its
 * first line ran), as a histogram and as the latest value.
 */
export class LagProbe {
  private readonly buckets = new Float64Array(LAG_BUCKETS.length + 1)
  private sum = 0
  private latest = 0

  /** Starts sampling; returns what stops it. */
  start(): () => void {
    let due = performance.now() + LAG_EVERY_MS
    const timer = setInterval(() => {
      const now = performance.now()
      this.note(Math.max(0, now - due) / 1000)
      due = now + LAG_EVERY_MS
    }, LAG_EVERY_MS)
    timer.unref()
    return () => clearInterval(timer)
  }

  note(seconds: number): void {
    let b = 0
    while (b < LAG_BUCKETS.length && seconds > LAG_BUCKETS[b]!) b++
    this.buckets[b]!++
    this.sum += seconds
    this.latest = seconds
  }

  families(base: string): Family[] {
    const sep = base ? `${base},` : ''
    const samples: string[] = []
    let cumulative = 0
    for (let b = 0; b < LAG_BUCKETS.length; b++) {
      cumulative += this.buckets[b]!
      samples.push(`conduit_event_loop_lag_seconds_bucket{${sep}le="${LAG_BUCKETS[b]}"} ${cumulative}`)
    }
    const count = cumulative + this.buckets[LAG_BUCKETS.length]!
    const labels = base ? `{${base}}` : ''
    samples.push(`conduit_event_loop_lag_seconds_bucket{${sep}le="+Inf"} ${count}`)
    samples.push(`conduit_event_loop_lag_seconds_sum${labels} ${this.sum}`)
    samples.push(`conduit_event_loop_lag_seconds_count${labels} ${count}`)
    return [
      {
        name: 'conduit_event_loop_lag_seconds',
        help: `How late a timer due every ${LAG_EVERY_MS} ms fired: the event loop's lag.`,
        type: 'histogram',
        samples,
      },
      family('conduit_event_loop_lag_latest_seconds', 'gauge', "The event loop's lag at the latest sample.", base, [['', this.latest]]),
    ]
  }
}

const startedAt = Date.now() / 1000 - process.uptime()

/** The process's own figures, under the names Prometheus's client libraries use for the process_ ones. */
export function processFamilies(base: string): Family[] {
  const cpu = process.cpuUsage()
  const memory = process.memoryUsage()
  return [
    family('process_cpu_seconds_total', 'counter', 'User and system CPU time spent, in seconds.', base, [
      ['', (cpu.user + cpu.system) / 1e6],
    ]),
    family('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.', base, [['', memory.rss]]),
    family('process_start_time_seconds', 'gauge', 'Start time of the process since the Unix epoch, in seconds.', base, [['', startedAt]]),
    // (Bun's heapUsed is JavaScriptCore's heap size; its heapTotal is no capacity, and bun:jsc's heapStats walks every object)
    family('conduit_js_heap_size_bytes', 'gauge', "Bytes of JavaScriptCore's heap: objects not yet collected.", base, [
      ['', memory.heapUsed],
    ]),
    family('conduit_js_external_bytes', 'gauge', 'Bytes held outside the heap by JavaScript objects (buffers).', base, [
      ['', memory.external],
    ]),
  ]
}
