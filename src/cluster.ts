import { readFileSync } from 'node:fs'
import type { Server, Subprocess } from 'bun'
import type { Config } from './config.ts'
import { openStore } from './db/open.ts'
import { startingAnswers } from './http/starting.ts'
import { serverOrigin } from './http/url.ts'
import type { Logger } from './log.ts'
import { metricsRelay } from './metrics/workers.ts'

/** Set in a worker's environment: its number (1..N). Worker 1 also runs the SQLite checkpointer. */
export const WORKER_ENV = 'CONDUIT_WORKER'
/** What a worker tells the supervisor once it listens: the supervisor's own answers on the port can stop. */
export const LISTENING = 'conduit:listening'

/** A worker that dies sooner than this after starting counts as failing to start. */
const STARTUP_MS = 5_000
/** Consecutive failed starts after which the supervisor gives up. */
const MAX_FAILED_STARTS = 5
/** After a worker's drain grace: time to checkpoint and close the database and exit. */
const CLOSE_MARGIN_MS = 3_000

/**
 * How long the supervisor waits, after passing SIGTERM on, before it kills
 * the workers that are still running: the whole of a worker's own shutdown
 * (readiness 503 for the shutdown delay while it keeps serving, then at most
 * the grace to finish what is in flight, then closing), plus a margin. Only a
 * worker that is stuck is ever killed; one that drains exits on its own.
 */
export function hardDeadlineMs(config: Pick<Config, 'shutdownDelayMs' | 'shutdownGraceMs'>): number {
  return config.shutdownDelayMs + config.shutdownGraceMs + CLOSE_MARGIN_MS
}

/**
 * `conduit serve --workers N`: N processes of this same binary serving one
 * port (SO_REUSEPORT: the kernel spreads connections over them) and one
 * database. They behave as one service: every write is in the change log,
 * each worker reads what the others changed before it answers from its
 * caches, and the login throttle lives in the database.
 *
 * This process only supervises: it checks that the port can be bound (one
 * clear line if not), applies migrations once, starts the workers, replaces one
 * that dies, and on SIGTERM/SIGINT passes the signal on and waits for all of
 * them to drain (each answers /ready 503 and keeps serving for
 * SHUTDOWN_DELAY_SECONDS, then stops accepting, finishes what is in flight,
 * closes). A worker still running past hardDeadlineMs is killed, and the
 * supervisor then exits 1.
 */
export async function supervise(config: Config, logger: Logger): Promise<number> {
  // the port, bound once here and first: a taken port fails now, in one line, before a database
  // file is made (as without workers); port 0 becomes one port for all
  const probe = Bun.listen({ hostname: config.host, port: config.port, socket: { data() {} } })
  const port = probe.port
  probe.stop(true)
  // Until a worker listens, this process answers on the port as a single process does while it
  // starts (/health 200 "starting", the rest 503): a liveness probe must not kill the service
  // while it waits for the database or another instance's migration
  let early: Server<unknown> | undefined = Bun.serve({
    hostname: config.host,
    port,
    reusePort: true,
    fetch: startingAnswers(config).answer,
  })
  const quiet = () => {
    early?.stop()
    early = undefined
  }

  try {
    const { store, applied } = await openStore(config, logger)
    if (applied.length) logger.info('database migrated', { database: store.location, versions: applied.join(',') })
    await store.close()
  } catch (e) {
    quiet()
    throw e
  }

  const self = Bun.main.startsWith('/$bunfs') ? [process.execPath] : [process.execPath, Bun.main]
  const workers = new Map<number, { proc: Subprocess; startedAt: number }>()
  let failedStarts = 0
  let stopping = false
  /** workers that had to be killed at the hard deadline */
  let killed = 0
  let resolveDone: (code: number) => void = () => {}
  const done = new Promise<number>((r) => (resolveDone = r))
  // with metrics on, a scraped worker gathers its siblings' figures through this process (metrics/workers.ts)
  const relay = config.metricsToken
    ? metricsRelay(
        (id, message) => workers.get(id)?.proc.send(message),
        () => [...workers.keys()],
      )
    : undefined

  const start = (id: number) => {
    // a replacement scheduled before SIGTERM arrived: never started, it would outlive the stop
    if (stopping) return
    const proc = Bun.spawn({
      cmd: [...self, 'serve'],
      env: {
        ...process.env,
        [WORKER_ENV]: String(id),
        PORT: String(port),
        HOST: config.host,
        DATABASE_URL: config.databaseUrl ?? config.databasePath,
        LOG_LEVEL: config.logLevel,
        // the delay the hard deadline below allows for
        SHUTDOWN_DELAY_SECONDS: String(config.shutdownDelayMs / 1000),
      },
      stdin: 'ignore',
      stdout: 'inherit',
      stderr: 'inherit',
      ipc: (message: unknown) => (message === LISTENING ? quiet() : relay?.(id, message)),
    })
    workers.set(id, { proc, startedAt: Date.now() })
    void proc.exited.then((code) => {
      const w = workers.get(id)
      if (w?.proc !== proc) return
      workers.delete(id)
      if (stopping) {
        if (workers.size === 0) resolveDone(0)
        return
      }
      const quick = Date.now() - (w?.startedAt ?? 0) < STARTUP_MS
      failedStarts = quick ? failedStarts + 1 : 0
      logger.warn('worker exited; starting a new one', { worker: id, code: code ?? proc.signalCode ?? 'unknown' })
      if (failedStarts >= MAX_FAILED_STARTS) {
        logger.error('workers keep failing at start-up; stopping', { failedStarts })
        stop('workers failing')
        return
      }
      setTimeout(() => start(id), quick ? 1000 : 0)
    })
  }

  const stop = (reason: string) => {
    if (stopping) {
      // a second signal: passed on, so each worker cuts its shutdown delay short (it still drains)
      for (const { proc } of workers.values()) proc.kill('SIGTERM')
      return
    }
    stopping = true
    quiet()
    logger.info('stopping workers', { reason, workers: workers.size })
    if (workers.size === 0) resolveDone(failedStarts ? 1 : 0)
    for (const { proc } of workers.values()) proc.kill('SIGTERM')
    // each worker keeps serving for the shutdown delay, then drains within its grace time and
    // exits; one that is still running well past that is stuck, and is made to stop
    const deadlineMs = hardDeadlineMs(config)
    setTimeout(() => {
      if (workers.size === 0) return
      killed = workers.size
      logger.error('workers did not stop in time; killing them', { workers: killed, deadlineMs })
      for (const { proc } of workers.values()) proc.kill('SIGKILL')
    }, deadlineMs).unref()
  }

  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
  onHangup(stop)
  for (let id = 1; id <= config.workers; id++) start(id)
  logger.info('supervising workers', { workers: config.workers, url: `${serverOrigin(config.host, port)}/` })
  const code = await done
  return failedStarts >= MAX_FAILED_STARTS || killed > 0 ? 1 : code
}

/**
 * A closed terminal or SSH session (SIGHUP) stops the server as SIGTERM does,
 * logged and drained, rather than killing it without a word; unless it was
 * started to ignore that (nohup), a choice kept. Where that cannot be read
 * (no /proc), the signal's default is left alone.
 */
export function onHangup(stop: (signal: string) => void): void {
  let ignored: boolean
  try {
    const mask = /^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]
    if (mask === undefined) return
    ignored = (BigInt(`0x${mask}`) & 1n) === 1n // bit 0: signal 1, SIGHUP
  } catch {
    return
  }
  if (!ignored) process.on('SIGHUP', () => stop('SIGHUP'))
}
