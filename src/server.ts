import type { Server } from 'bun'
import { type App, createApp } from './app.ts'
import { LISTENING, WORKER_ENV } from './cluster.ts'
import { type Config, defaults, memoryLimit, misspelledVariables } from './config.ts'
import { openStore } from './db/open.ts'
import type { Store } from './db/store.ts'
import { dbStats } from './db/stats.ts'
import { DatabaseUnavailable } from './db/types.ts'
import { DOCS_PAGE } from './http/docs.ts'
import { errorAnswer } from './http/error-envelope.ts'
import { startingAnswers } from './http/starting.ts'
import { serverOrigin } from './http/url.ts'
import type { Logger } from './log.ts'
import { linkWorker } from './metrics/workers.ts'
import { trace } from './trace.ts'

export interface Running {
  url: string
  store: Store
  app: App
  /** Marks the service not ready, stops accepting, lets in-flight requests finish (bounded), closes the database. */
  shutdown(reason: string): Promise<void>
}

const MAINTENANCE_MS = 60_000

/** The answer with `Connection: close`: the server ends the connection once it is sent. */
function lastOnConnection(answer: Response | Promise<Response>): Response | Promise<Response> {
  if (answer instanceof Promise) return answer.then(lastOnConnection)
  const headers = new Headers(answer.headers)
  headers.set('connection', 'close')
  return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers })
}
/** (Bun's error handler is not given the request: its answer gets a new id) */
const EMPTY = new Request('http://localhost/')
/**
 * Binds the configured address first (a taken port fails before anything
 * else happens, and leaves no database file behind), answering 503 until the
 * database is open and migrated (but /health: 200 "starting"); then serves
 * the app. A worker of `serve
 * --workers N` binds only once it can serve: the supervisor has checked the
 * port, and a worker bound early would be handed connections (SO_REUSEPORT)
 * only to answer them 503 while it starts, as a replacement for a dead one
 * would beside its siblings.
 */
export async function serve(config: Config, logger: Logger): Promise<Running> {
  const worker = process.env[WORKER_ENV]
  let app: App | undefined
  const { headers: earlyHeaders, answer: earlyAnswer } = startingAnswers(config)
  // what answers a request: the early answer, then the app, then the app closing each connection (see shutdown)
  let handle: (request: Request, server: Server<unknown>) => Response | Promise<Response> = earlyAnswer
  const listen = () =>
    Bun.serve({
      port: config.port,
      hostname: config.host,
      // Bun itself would answer an over-limit body with an EMPTY 413. The app
      // enforces the limit (Content-Length first, then while streaming) and
      // answers with the envelope, so Bun's own limit is set far above it.
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      idleTimeout: config.requestTimeoutSeconds,
      // a worker of `serve --workers N` shares the port with its siblings
      reusePort: worker !== undefined,
      fetch: (request, server) => handle(request, server),
      error(error) {
        // no request here: with an allow-list, the headers of an origin not on it (Vary: Origin)
        return errorAnswer(error, { headers: earlyHeaders(EMPTY), logger })
      },
    })
  const early = worker === undefined ? listen() : undefined
  let store: Store
  try {
    // before the app is made: its request entry is wrapped only when the trace is on
    if (config.tailTrace) trace.start()
    const opened = await openStore(config, logger)
    store = opened.store
    if (opened.applied.length) logger.info('database migrated', { database: store.location, versions: opened.applied.join(',') })
    app = await createApp({ store, config, logger })
    handle = app.respond
  } catch (e) {
    await early?.stop(true)
    throw e
  }
  let server: ReturnType<typeof listen>
  try {
    server = early ?? listen()
  } catch (e) {
    await store.close()
    throw e
  }
  // a worker: its supervisor stops answering on the port for it
  if (worker !== undefined) process.send?.(LISTENING)
  // one process per database keeps it up, and says what the processes run with: the single process, or worker 1
  const first = worker === undefined || worker === '1'
  const checkpoints = first ? store.startCheckpoints(logger) : undefined
  const maintenance = setInterval(() => {
    store.maintain().catch((e) => logger.warn('maintenance failed', { error: String(e) }))
  }, MAINTENANCE_MS)
  maintenance.unref()
  const stopLag = app.metrics?.lag.start()
  if (app.metrics && worker !== undefined && process.send) {
    const metrics = app.metrics
    metrics.worker = worker
    metrics.peers = linkWorker(() => metrics.families())
  }

  const url = `http://${config.host}:${server.port}`
  // where a person goes: the site and its API's documentation
  const site = serverOrigin(config.host, server.port ?? config.port)
  logger.info('listening', { url: `${site}/`, docs: `${site}${DOCS_PAGE}`, database: store.location, tokenSecret: app.tokenSecret, worker })
  // set by the operator, or by `conduit serve` for a host or container with little memory (src/cli/runtime.ts)
  if (first && (config.leanMemory || config.cacheMb !== defaults.cacheMb)) {
    logger.info('memory settings', {
      leanMemory: config.leanMemory,
      cacheMb: config.cacheMb,
      memoryLimitMb: Math.round(memoryLimit() / 2 ** 20),
    })
  }
  if (first)
    for (const [given, meant] of misspelledVariables())
      logger.warn(`${given} is not a variable conduit reads: did you mean ${meant}? (conduit --help lists them)`)

  let stopping: Promise<void> | undefined
  /** ends the shutdown delay early: a second signal (an operator's second Ctrl-C) */
  let hurry: (() => void) | undefined
  return {
    url,
    store,
    app,
    shutdown(reason) {
      if (stopping) {
        hurry?.()
        return stopping
      }
      stopping = (async () => {
        // a field that is undefined (no delay; not a worker) is left out of the line
        logger.info('shutting down', { reason, delaySeconds: config.shutdownDelayMs / 1000 || undefined, worker })
        // readiness answers 503 from now on; behind a load balancer, keep serving while it notices
        app!.drain()
        // each answer from now on ends its keep-alive connection, so clients open a new one (behind a
        // load balancer, to another instance) instead of sending on one the stop below closes
        const serving = handle
        handle = (request, server) => lastOnConnection(serving(request, server))
        clearInterval(maintenance)
        stopLag?.()
        if (config.shutdownDelayMs > 0) {
          await new Promise<void>((done) => {
            const timer = setTimeout(done, config.shutdownDelayMs)
            hurry = () => {
              hurry = undefined
              clearTimeout(timer)
              logger.info('second signal: the delay is cut short', { worker })
              done()
            }
          })
        }
        const graceEnd = performance.now() + config.shutdownGraceMs
        const drained = server.stop(false).then(() => true)
        const timedOut = Bun.sleep(config.shutdownGraceMs).then(() => false)
        if (!(await Promise.race([drained, timedOut]))) {
          logger.warn('in-flight requests did not finish in time; closing them', { graceMs: config.shutdownGraceMs })
          await server.stop(true)
        }
        // A request whose client has gone holds no connection for the server to wait for, but its
        // queries still run: closing the pool under them would fail them ("database unavailable",
        // a write included). They get what is left of the same grace.
        while (dbStats.inFlight > 0 && performance.now() < graceEnd) await Bun.sleep(5)
        await checkpoints?.stop()
        try {
          await store.close()
        } catch (e) {
          if (!(e instanceof DatabaseUnavailable)) throw e
          // SQLite on a full disk (or an I/O error): closed, its last checkpoint not made; nothing committed is lost
          logger.warn('database closed without its final checkpoint; its write-ahead log keeps every write and is read at the next start', {
            database: store.location,
            reason: e.reason,
            worker,
          })
        }
        if (config.tailTrace) await trace.save(config.tailTrace)
        logger.info('stopped', { worker })
      })()
      return stopping
    },
  }
}
