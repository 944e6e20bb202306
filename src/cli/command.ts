import type { parseArgs } from 'node:util'
import type { Config } from '../config.ts'
import type { FailureContext } from './report.ts'

/** Every flag of the command line; each command declares the ones it takes (Command.options), main.ts refuses the others. */
export const FLAGS = {
  port: { type: 'string' },
  host: { type: 'string' },
  db: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
  users: { type: 'string' },
  articles: { type: 'string' },
  seed: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  workers: { type: 'string' },
  debug: { type: 'boolean' },
  json: { type: 'boolean' },
  search: { type: 'string' },
  limit: { type: 'string' },
  'with-content': { type: 'boolean' },
} as const
/** The options that take a number: `--articles -5` reaches the range check instead of confusing parseArgs. */
export const NUMERIC = ['--port', '--users', '--articles', '--seed', '--workers', '--limit']

/** What every command takes besides its own options: --help and --version print and exit, --debug is a log level. */
export const EVERY_COMMAND = ['help', 'version', 'debug'] as const
/** An option of a command's own: the name of its flag, without `--`. */
export type OptionName = Exclude<keyof typeof FLAGS, (typeof EVERY_COMMAND)[number]>

export type Flags = ReturnType<typeof parseArgs<{ options: typeof FLAGS; allowPositionals: true; strict: true }>>['values']

/** What a command gets: the configuration (environment, then flags), its flags and its arguments. */
export interface CommandInput {
  /** the command's name (`admin users lock`), as its messages begin */
  name: string
  config: Config
  flags: Flags
  args: string[]
  /** what a failure message may name; a command adds what it learns */
  context: FailureContext
}

export interface Command {
  name: string
  /** the arguments after the name, as --help shows them */
  usage: string
  /** what it does, one or more lines of --help */
  summary: string[]
  /** how many arguments it takes (after its name and flags) */
  args: number
  /** the options it takes, as its usage names them; any other is refused before anything runs */
  options: readonly OptionName[]
  run(input: CommandInput): Promise<number> | number
}

/** The commands that migrate, seed or copy run statements as long as they need (DATABASE_TIMEOUT_SECONDS is for requests). */
export const untimed = (config: Config): Config => ({ ...config, databaseTimeoutMs: 0 })
