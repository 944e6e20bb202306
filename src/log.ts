import type { LogFormat, LogLevel } from './config.ts'

const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

export type Fields = Record<string, string | number | boolean | undefined>

export interface Logger {
  enabled(level: Exclude<LogLevel, 'silent'>): boolean
  debug(message: string, fields?: Fields): void
  info(message: string, fields?: Fields): void
  warn(message: string, fields?: Fields): void
  error(message: string, fields?: Fields, error?: unknown): void
}

/**
 * One line per event on stdout, as text or JSON. Callers pass only what may be
 * logged: never a token, a password or a request body.
 */
export function createLogger(format: LogFormat, level: LogLevel, write: (line: string) => void = defaultWrite): Logger {
  const min = LEVELS[level]
  const emit = (lvl: Exclude<LogLevel, 'silent'>, message: string, fields: Fields = {}, error?: unknown) => {
    if (LEVELS[lvl] < min) return
    const err = error === undefined ? undefined : error instanceof Error ? (error.stack ?? error.message) : String(error)
    if (format === 'json') {
      write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg: message, ...fields, ...(err ? { error: err } : {}) }))
    } else {
      const kv = Object.entries(fields)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${k}=${typeof v === 'string' && /\s/.test(v) ? JSON.stringify(v) : v}`)
        .join(' ')
      // the stack too stays on the line (escaped): journald and line-based collectors take a line as an event
      write(`${new Date().toISOString()} ${lvl.toUpperCase()} ${message}${kv ? ` ${kv}` : ''}${err ? ` error=${JSON.stringify(err)}` : ''}`)
    }
  }
  return {
    enabled: (lvl) => LEVELS[lvl] >= min,
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f, e) => emit('error', m, f, e),
  }
}

let dropsFailures = false
/**
 * A line that cannot be written is dropped: the reader of a pipe gone (`| head`), a full disk.
 * Logging must not stop the service; a pipe's failure comes back thrown, a file's as an event.
 */
function defaultWrite(line: string) {
  if (!dropsFailures) {
    dropsFailures = true
    process.stdout.on('error', () => {})
  }
  try {
    process.stdout.write(`${line}\n`)
  } catch {}
}

export const silentLogger: Logger = createLogger('text', 'silent', () => {})
