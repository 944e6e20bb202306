import type { Database } from 'bun:sqlite'
import { type App, createApp } from './app.ts'
import type { Config } from './config.ts'
import { closeDatabase, openDatabase } from './db/database.ts'
import { FALLBACK_AUTOCHECKPOINT_PAGES, startCheckpointer } from './db/checkpointer.ts'
import { migrate } from './db/migrate.ts'
import { securityHeaders } from './http/headers.ts'
import type { Logger } from './log.ts'

export interface Running {
  url: string
  db: Database
  /** Stops accepting, lets in-flight requests finish (bounded), closes the database. */
  shutdown(reason: string): Promise<void>
}

/**
 * Binds the configured address, then opens and migrates the database and
 * serves the app.
 *
 * The port is bound FIRST, before the database file is created or opened: a
 * port that is taken, or an address that is not this machine's, fails here and
 * leaves no new database file behind (no clean-up that could remove a file
 * someone else just created). Until the app exists the listener answers 503
 * `{"errors":{"server":["starting"]}}`; if the database cannot be opened the
 * listener is closed again and the error goes to the caller.
 */
export function serve(config: Config, logger: Logger): Running {
  let app: App | undefined
  const server = Bun.serve({
    port: config.port,
    hostname: config.host,
    // Bun itself would answer an over-limit body with an EMPTY 413. The app
    // enforces the limit (Content-Length first, then while streaming) and
    // answers with the envelope, so Bun's own limit is set far above it.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    idleTimeout: config.requestTimeoutSeconds,
    fetch: (request) => (app ? app.respond(request) : starting()),
    error(error) {
      logger.error('server error', {}, error)
      return new Response('{"errors":{"server":["internal error"]}}', {
        status: 500,
        headers: { ...securityHeaders('/'), 'content-type': 'application/json; charset=utf-8' },
      })
    },
  })
  let db: Database | undefined
  try {
    db = openDatabase(config.databasePath)
    const applied = migrate(db)
    db.run(`PRAGMA wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`)
    if (applied.length) logger.info('database migrated', { path: config.databasePath, versions: applied.join(',') })
    app = createApp({ db, config, logger })
  } catch (e) {
    server.stop(true)
    db?.close()
    throw e
  }
  // started once serving: its thread and connection are not needed for the first answers
  const checkpointer = startCheckpointer(config.databasePath, logger, { delayMs: 100 })
  const url = `http://${config.host}:${server.port}`
  logger.info('listening', { url, database: config.databasePath })

  let stopping: Promise<void> | undefined
  return {
    url,
    db,
    shutdown(reason) {
      stopping ??= (async () => {
        logger.info('shutting down', { reason })
        const drained = server.stop(false).then(() => true)
        const timedOut = Bun.sleep(config.shutdownGraceMs).then(() => false)
        if (!(await Promise.race([drained, timedOut]))) {
          logger.warn('in-flight requests did not finish in time; closing them', { graceMs: config.shutdownGraceMs })
          await server.stop(true)
        }
        await checkpointer.stop()
        closeDatabase(db)
        logger.info('stopped')
      })()
      return stopping
    },
  }
}

/** The answer while the database is being opened. */
function starting(): Response {
  return new Response('{"errors":{"server":["starting"]}}', {
    status: 503,
    headers: { ...securityHeaders('/'), 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' },
  })
}
