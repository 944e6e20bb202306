import { onHangup, supervise, WORKER_ENV } from '../../cluster.ts'
import { type Config, ConfigError, inMemory } from '../../config.ts'
import { createLogger } from '../../log.ts'
import { serve } from '../../server.ts'
import type { Command } from '../command.ts'

export const serveCommand: Command = {
  name: 'serve',
  usage: '[--port N] [--host ADDR] [--db FILE|URL] [--workers N]',
  summary: ['serve the site and the API (the default command)'],
  args: 0,
  options: ['port', 'host', 'db', 'workers'],
  run: ({ config }) => {
    // it skips reading what other processes changed: with workers, their caches would go stale
    if (config.workers > 1 && config.singleInstance)
      throw new ConfigError(
        `SINGLE_INSTANCE=true means one process, and --workers ${config.workers} runs ${config.workers}: leave it unset`,
      )
    if (config.workers > 1 && inMemory(config))
      throw new ConfigError(
        `:memory: is a database inside one process, and --workers ${config.workers} runs ${config.workers}, each with an empty one of its own: use a file`,
      )
    return config.workers > 1 && !process.env[WORKER_ENV]
      ? supervise(config, createLogger(config.logFormat, config.logLevel))
      : runServer(config)
  },
}

async function runServer(config: Config): Promise<number> {
  const logger = createLogger(config.logFormat, config.logLevel)
  if (inMemory(config)) logger.warn('the database is in memory: whatever is written is lost when the server stops')
  const running = await serve(config, logger)
  const stop = (signal: string) => {
    running.shutdown(signal).then(
      () => process.exit(0),
      (e) => {
        logger.error('shutdown failed', {}, e)
        process.exit(1)
      },
    )
  }
  // a second signal cuts the shutdown delay short (server.ts). A worker hears its supervisor only:
  // a terminal's Ctrl-C reaches the whole process group, and would count twice in a worker
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', process.env[WORKER_ENV] ? () => {} : () => stop('SIGINT'))
  if (process.env[WORKER_ENV]) process.on('SIGHUP', () => {})
  else onHangup(stop)
  if (process.env[WORKER_ENV]) {
    // a supervisor killed outright (SIGKILL, a crash) sends no signal: its workers would go on
    // holding the port. Reparented, a worker stops as if told to.
    const supervisor = process.ppid
    const watch = setInterval(() => {
      if (process.ppid === supervisor) return
      clearInterval(watch)
      logger.warn('supervisor gone; stopping', { supervisor })
      stop('supervisor gone')
    }, 1000)
    watch.unref()
  }
  return new Promise<number>(() => {}) // serves until a signal
}
