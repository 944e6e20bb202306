import { version } from '../../package.json'
import type { Caches } from '../cache/caches.ts'
import type { ChangeStats } from '../db/store.ts'
import type { Backend } from '../db/types.ts'
import { dbStats } from '../db/stats.ts'
import { type Family, family, labelValue, render } from './exposition.ts'
import { HttpMetrics } from './http.ts'
import { LagProbe, processFamilies } from './process.ts'

interface Sources {
  backend: Backend
  /** PostgreSQL connections per process */
  poolMax: number
  caches: Caches
  changes: ChangeStats
  /** each throttle's attempts answered 429 (src/users/throttle.ts) */
  throttles: { login: { refused: number }; registration: { refused: number } }
}

/** What the other workers of `serve --workers N` reported for a scrape (see workers.ts). */
export interface Peers {
  families: Family[][]
  /** workers that did not answer in time (NaN: the supervisor did not) */
  missing: number
}

/**
 * The metrics of one app: HTTP figures counted as answers leave (exit.ts),
 * everything else read from its sources at scrape time. Under `serve
 * --workers N`, server.ts sets `worker` (every sample then carries
 * `worker="N"`) and `peers`, which fetches the other workers' families.
 */
export class ServiceMetrics {
  readonly http = new HttpMetrics()
  readonly lag = new LagProbe()
  worker: string | undefined
  peers: (() => Promise<Peers>) | undefined

  constructor(private readonly sources: Sources) {}

  /** This process's families. */
  families(): Family[] {
    const base = this.worker === undefined ? '' : `worker="${labelValue(this.worker)}"`
    const s = this.sources
    const caches: readonly (readonly [string, CacheFigures])[] = s.caches.all()
    const perCache = (get: (c: CacheFigures) => number) => caches.map(([name, c]) => [`cache="${name}"`, get(c)] as const)
    const changes = s.changes
    return [
      family('conduit_build_info', 'gauge', 'The running build: always 1, its version as a label.', base, [
        [`version="${labelValue(version)}",backend="${s.backend}"`, 1],
      ]),
      ...this.http.families(base),
      family(
        'conduit_cache_hits_total',
        'counter',
        'Lookups that found a valid value, per cache.',
        base,
        perCache((c) => c.hits),
      ),
      family(
        'conduit_cache_misses_total',
        'counter',
        'Lookups that found nothing, or a value no longer valid, per cache.',
        base,
        perCache((c) => c.misses),
      ),
      family(
        'conduit_cache_bytes',
        'gauge',
        'Bytes a cache holds, keys and bookkeeping included.',
        base,
        perCache((c) => c.weight),
      ),
      family(
        'conduit_cache_budget_bytes',
        'gauge',
        'Bytes a cache may hold (CACHE_MB shares it out).',
        base,
        perCache((c) => c.budget),
      ),
      family(
        'conduit_cache_entries',
        'gauge',
        'Values a cache holds.',
        base,
        perCache((c) => c.size),
      ),
      family(
        'conduit_db_operations_total',
        'counter',
        'Database work run: PostgreSQL reads and write transactions; SQLite write transactions (its reads are not counted).',
        base,
        [
          ['kind="read"', dbStats.reads],
          ['kind="write"', dbStats.writes],
        ],
      ),
      family(
        'conduit_db_operations_in_flight',
        'gauge',
        'PostgreSQL: reads and writes running or waiting for a pooled connection (Bun has no pool statistics); 0 on SQLite.',
        base,
        [['', dbStats.inFlight]],
      ),
      family('conduit_db_pool_max_connections', 'gauge', 'PostgreSQL connections this process may open (DATABASE_POOL_MAX).', base, [
        ['', s.backend === 'postgres' ? s.poolMax : 0],
      ]),
      family('conduit_db_errors_total', 'counter', 'Database work that failed, by why (answered 503, or 500 for `other`).', base, [
        ['reason="unavailable"', dbStats.unavailable],
        ['reason="timeout"', dbStats.timeouts],
        ['reason="conflict"', dbStats.conflicts],
        ['reason="busy"', dbStats.busy],
        ['reason="other"', dbStats.errors],
      ]),
      family('conduit_changes_reads_total', 'counter', 'Reads of the change log (what other processes and instances wrote).', base, [
        ['', changes.reads],
      ]),
      family('conduit_changes_rows_total', 'counter', 'Change-log rows read.', base, [['', changes.rows]]),
      family(
        'conduit_changes_resets_total',
        'counter',
        'Times every cached value was dropped: rows missed, a long pause, an edit by hand, a failed read.',
        base,
        [['', changes.resets]],
      ),
      family(
        'conduit_changes_behind_seconds',
        'gauge',
        'Seconds since this process last knew it had read every change committed (it reads again before a cached answer; grows while idle).',
        base,
        [['', changes.upToDateAt === 0 ? Number.NaN : Math.max(0, Date.now() - changes.upToDateAt) / 1000]],
      ),
      family('conduit_throttle_refusals_total', 'counter', 'Attempts answered 429 by a throttle.', base, [
        ['throttle="login"', s.throttles.login.refused],
        ['throttle="registration"', s.throttles.registration.refused],
      ]),
      ...this.lag.families(base),
      ...processFamilies(base),
    ]
  }

  /** The exposition: this process's families, and under `--workers` every other worker's that answered in time. */
  async scrape(): Promise<string> {
    const own = this.families()
    if (this.peers === undefined) return render([own])
    const peers = await this.peers()
    // no worker label: the figure is the scrape's, and one labelled by whichever worker answered would flap between series
    const gathered = family(
      'conduit_metrics_workers_missing',
      'gauge',
      'Workers whose figures are missing from this scrape: they did not answer in time (NaN: the supervisor did not).',
      '',
      [['', peers.missing]],
    )
    return render([[...own, gathered], ...peers.families])
  }
}

interface CacheFigures {
  hits: number
  misses: number
  weight: number
  budget: number
  size: number
}
