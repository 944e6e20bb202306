/**
 * How the command line fails. Every failure, expected or not, ends as ONE
 * line on stderr, `conduit: <what failed>: <why>; <how to fix it>` (report.ts
 * writes it; diagnose/ finds out what failed), naming the
 * path, port or address involved. Exit status 2 for a usage or configuration
 * error, 1 for anything that went wrong while running. Each kind of mistake
 * (a missing directory, a database that cannot be reached...) has one
 * wording whatever the command (docs/DEPLOYING.md lists them; test/e2e/
 * mistakes.test.ts runs every command with each). With --debug (or
 * LOG_LEVEL=debug) the stack of the underlying error follows that line.
 *
 * Never `console.error(error)`: in the compiled binary Bun prints the
 * offending line of the minified bundle with it, kilobytes of source code.
 */
export const EXIT_FAILURE = 1
export const EXIT_USAGE = 2

/** A failure already explained in one line. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
    options?: ErrorOptions,
  ) {
    super(message, options)
  }
}

/** A bad command line, or a command refusing its arguments: exit status 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT_USAGE)
  }
}

/** What every usage error ends with. */
export const HELP_HINT = 'see conduit --help'

/** What the failures below read of an error (any thrown value). */
export interface ErrorLike {
  name?: string
  message?: string
  code?: string
  errno?: number
  syscall?: string
  stack?: string
  cause?: unknown
}

/** The message of an error on one line: Bun's and SQLite's messages sometimes span several. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim()
}

/** An error's message and code, on one line. */
export function reason(e: ErrorLike): string {
  if (e === null || e === undefined) return 'unknown error'
  if (typeof e !== 'object') return oneLine(String(e))
  const message = oneLine(String(e.message || e.name || 'unknown error'))
  return e.code && !message.includes(e.code) ? `${message} (${e.code})` : message
}
