import type { Family } from './exposition.ts'
import { API_PREFIX, HEALTH_PATH, METRICS_PATH, READY_PATH } from '../http/url.ts'

/** Route labels that are not a declaration's template. */
export const ROUTE = {
  unmatched: 'unmatched',
  preflight: 'preflight',
  health: HEALTH_PATH,
  /** the pages that say what the server is (src/http/home.ts) */
  home: '/',
  apiRoot: API_PREFIX,
  ready: READY_PATH,
  metrics: METRICS_PATH,
  docs: 'docs',
} as const

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'other'] as const
/** A method's column: any method outside the list is `other` (a label's values stay few, whatever clients send). */
function methodIndex(method: string): number {
  switch (method) {
    case 'GET':
      return 0
    case 'HEAD':
      return 1
    case 'POST':
      return 2
    case 'PUT':
      return 3
    case 'DELETE':
      return 4
    case 'PATCH':
      return 5
    case 'OPTIONS':
      return 6
    default:
      return 7
  }
}

/** Upper bounds of the request-duration buckets, in seconds. */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5] as const

/** Route labels at most: the declarations, the fixed labels above, and room to spare. */
const MAX_ROUTES = 64
/** Distinct statuses counted per route and method; any further one counts as `other`. */
const STATUSES = 24

/**
 * The HTTP figures of one process: requests by method, route and status, and
 * durations by route. Every route label is interned at start-up (`route`),
 * so counting a request is a few increments of preallocated numbers at
 * indexes computed from small integers: no string is built and no map is
 * looked up per request.
 */
export class HttpMetrics {
  private readonly labels: string[] = []
  private readonly byLabel = new Map<string, number>()
  /** status code -> its column (-1: not seen yet), and each column's status */
  private readonly statusColumn = new Int8Array(600).fill(-1)
  private readonly statuses: string[] = []
  private readonly counts = new Float64Array(MAX_ROUTES * METHODS.length * STATUSES)
  /** per route: each bucket's own count (not cumulative), then the count above the last bound */
  private readonly buckets = new Float64Array(MAX_ROUTES * (DURATION_BUCKETS.length + 1))
  private readonly sums = new Float64Array(MAX_ROUTES)

  constructor() {
    for (const label of Object.values(ROUTE)) this.route(label)
  }

  /** The index of a route label, made on first use: called at start-up for every template. */
  route(label: string): number {
    let i = this.byLabel.get(label)
    if (i === undefined) {
      if (this.labels.length >= MAX_ROUTES) throw new Error(`more than ${MAX_ROUTES} route labels`)
      i = this.labels.push(label) - 1
      this.byLabel.set(label, i)
    }
    return i
  }

  /** The index of a label interned before, else `unmatched` (never adds one: a label is never made from a request). */
  known(label: string | undefined | null): number {
    return label ? (this.byLabel.get(label) ?? 0) : 0
  }

  /** Counts a path template under another label (the docs' several paths as `docs`). */
  alias(template: string, label: string): void {
    this.byLabel.set(template, this.route(label))
  }

  observe(route: number, method: string, status: number, seconds: number): void {
    let column = status >= 0 && status < 600 ? this.statusColumn[status]! : STATUSES - 1
    if (column < 0) column = this.newStatus(status)
    this.counts[(route * METHODS.length + methodIndex(method)) * STATUSES + column]!++
    let b = 0
    while (b < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[b]!) b++
    this.buckets[route * (DURATION_BUCKETS.length + 1) + b]!++
    this.sums[route]! += seconds
  }

  private newStatus(status: number): number {
    const column = this.statuses.length < STATUSES - 1 ? this.statuses.push(String(status)) - 1 : STATUSES - 1
    this.statusColumn[status] = column
    return column
  }

  /** The figures as metric families; `base`: labels every sample carries (`worker="2"`), or ''. */
  families(base: string): Family[] {
    const sep = base ? `${base},` : ''
    const requests: string[] = []
    for (let r = 0; r < this.labels.length; r++) {
      for (let m = 0; m < METHODS.length; m++) {
        for (let s = 0; s < STATUSES; s++) {
          const n = this.counts[(r * METHODS.length + m) * STATUSES + s]!
          if (n === 0) continue
          const status = s < this.statuses.length ? this.statuses[s] : 'other'
          requests.push(`conduit_http_requests_total{${sep}method="${METHODS[m]}",route="${this.labels[r]}",status="${status}"} ${n}`)
        }
      }
    }
    const durations: string[] = []
    const width = DURATION_BUCKETS.length + 1
    for (let r = 0; r < this.labels.length; r++) {
      let total = 0
      for (let b = 0; b < width; b++) total += this.buckets[r * width + b]!
      if (total === 0) continue
      const labels = `${sep}route="${this.labels[r]}"`
      let cumulative = 0
      for (let b = 0; b < DURATION_BUCKETS.length; b++) {
        cumulative += this.buckets[r * width + b]!
        durations.push(`conduit_http_request_duration_seconds_bucket{${labels},le="${DURATION_BUCKETS[b]}"} ${cumulative}`)
      }
      durations.push(`conduit_http_request_duration_seconds_bucket{${labels},le="+Inf"} ${total}`)
      durations.push(`conduit_http_request_duration_seconds_sum{${labels}} ${this.sums[r]}`)
      durations.push(`conduit_http_request_duration_seconds_count{${labels}} ${total}`)
    }
    return [
      {
        name: 'conduit_http_requests_total',
        help: 'Requests answered, by method, route template (never the raw path) and status.',
        type: 'counter',
        samples: requests,
      },
      {
        name: 'conduit_http_request_duration_seconds',
        help: 'Time from a request reaching the service to its answer being ready, by route template.',
        type: 'histogram',
        samples: durations,
      },
    ]
  }
}
