/**
 * Where the slowest requests spend their time, for a benchmark run
 * (`TAIL_TRACE=<file>`; `bun bench/tail.ts` starts the server so and reads
 * the file). Off, each call site costs one branch. On, it keeps in
 * preallocated arrays the event loop's synchronous slices whose cause the
 * service knows (a request's work on arrival, its work after a wait, a
 * SQLite write, reading what other processes changed), and each request's
 * times: sent by the client (its `x-trace-sent` header, epoch microseconds),
 * reached JavaScript, answer ready. The file is written when the server
 * stops. docs/PERFORMANCE.md, "The tail", says how it is read.
 */

/** What a slice of the event loop was doing. */
export const SLICE = { arrival: 0, resumed: 1, write: 2, changes: 3 } as const
export const SLICE_NAMES = ['requests on arrival', 'requests after a wait', 'SQLite writes', "reading others' changes"] as const

/** What a traced request was: a read, or which write (the mixed traffic's kinds apart). */
export const REQUEST_KINDS = ['read', 'favorite', 'unfavorite', 'comment', 'new article', 'other write'] as const

/** The index in REQUEST_KINDS of a request with this method and path. */
export function requestKind(method: string, path: string): number {
  if (method === 'GET' || method === 'HEAD') return 0
  if (path.endsWith('/favorite')) return method === 'POST' ? 1 : method === 'DELETE' ? 2 : 5
  if (method === 'POST' && path.endsWith('/comments')) return 3
  if (method === 'POST' && path.endsWith('/api/articles')) return 4
  return 5
}

/** The request header that carries when the client sent it, in microseconds since the epoch. */
export const SENT_HEADER = 'x-trace-sent'

const SLICE_FIELDS = 3
const REQUEST_FIELDS = 5

class TailTrace {
  on = false
  private slices = new Float64Array(0)
  private sliceCount = 0
  private requests = new Float64Array(0)
  private requestCount = 0

  start(maxSlices = 4_000_000, maxRequests = 2_000_000): void {
    this.slices = new Float64Array(maxSlices * SLICE_FIELDS)
    this.requests = new Float64Array(maxRequests * REQUEST_FIELDS)
    this.on = true
  }

  /** Ends a slice that began at `start` (performance.now()); returns its length in ms. */
  slice(start: number, kind: number): number {
    const end = performance.now()
    const i = this.sliceCount * SLICE_FIELDS
    if (i < this.slices.length) {
      this.slices[i] = start
      this.slices[i + 1] = end
      this.slices[i + 2] = kind
      this.sliceCount++
    }
    return end - start
  }

  /** A request: sent (epoch µs, NaN when unknown), reached JavaScript and answered (performance.now()), its arrival slice's length, its kind (requestKind). */
  request(sentUs: number, arrived: number, done: number, own: number, kind: number): void {
    const i = this.requestCount * REQUEST_FIELDS
    if (i >= this.requests.length) return
    this.requests[i] = sentUs / 1000 - performance.timeOrigin
    this.requests[i + 1] = arrived
    this.requests[i + 2] = done
    this.requests[i + 3] = own
    this.requests[i + 4] = kind
    this.requestCount++
  }

  /**
   * The file bench/tail.ts reads: float64s [slice count, request count, the
   * process's start (epoch ms), slices..., requests...], times in ms from the start.
   */
  async save(path: string): Promise<void> {
    const head = new Float64Array([this.sliceCount, this.requestCount, performance.timeOrigin])
    await Bun.write(
      path,
      new Blob([
        head,
        this.slices.subarray(0, this.sliceCount * SLICE_FIELDS),
        this.requests.subarray(0, this.requestCount * REQUEST_FIELDS),
      ]),
    )
  }
}

export const trace = new TailTrace()
