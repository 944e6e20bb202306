#!/usr/bin/env bun
import { parseArgs } from 'node:util'
import { version } from '../package.json'
import { type Command, FLAGS, NUMERIC } from './cli/command.ts'
import { adminContentCommands } from './cli/commands/admin-content.ts'
import { adminUserCommands } from './cli/commands/admin-users.ts'
import { backupCommand } from './cli/commands/backup.ts'
import { copyCommand } from './cli/commands/copy.ts'
import { healthcheckCommand } from './cli/commands/healthcheck.ts'
import { migrateCommand } from './cli/commands/migrate.ts'
import { seedCommand } from './cli/commands/seed.ts'
import { serveCommand } from './cli/commands/serve.ts'
import { type FailureContext, joinNegativeNumbers, report, UsageError, usageFromParseArgs } from './cli/errors.ts'
import { environment, integer, loadConfig, redactUrl, setDatabase } from './config.ts'

/** The commands, in the order --help lists them; `serve` is the default. A name of several words is a command of a group (`admin users lock`). */
const COMMANDS: readonly Command[] = [
  serveCommand,
  migrateCommand,
  backupCommand,
  copyCommand,
  healthcheckCommand,
  seedCommand,
  ...adminUserCommands,
  ...adminContentCommands,
]

const startsWith = (words: readonly string[], prefix: readonly string[]) => prefix.every((w, i) => words[i] === w)

/** The command the positionals name (its name's words first), with the arguments after them. */
function commandOf(positionals: readonly string[]): { command: Command; args: string[] } {
  if (positionals.length === 0) return { command: serveCommand, args: [] }
  const command = COMMANDS.find((c) => startsWith(positionals, c.name.split(' ')))
  if (command) return { command, args: positionals.slice(command.name.split(' ').length) }
  // a group's name without (or with an unknown) command of it: name the ones it has
  let given: string[] = []
  for (let n = 1; n <= positionals.length; n++) {
    if (COMMANDS.some((c) => startsWith(c.name.split(' '), positionals.slice(0, n)))) given = positionals.slice(0, n)
  }
  if (!given.length) throw new UsageError(`unknown command "${positionals[0]}"; see conduit --help`)
  const rest = COMMANDS.filter((c) => startsWith(c.name.split(' '), given)).map((c) => c.name.split(' ').slice(given.length).join(' '))
  const what = positionals.length > given.length ? `unknown command "${positionals.join(' ')}"` : `${given.join(' ')} needs a command`
  throw new UsageError(`${what}: conduit ${given.join(' ')} ${rest.join(' | ')}; see conduit --help`)
}

const COLUMN = 57
function usageLines(c: Command): string {
  const head = `  conduit ${c.name === 'serve' ? '[serve]' : c.name} ${c.usage}`
  const [first = '', ...more] = c.summary
  const lines = head.length < COLUMN - 1 ? [`${head.padEnd(COLUMN)}${first}`] : [head, `${''.padEnd(COLUMN)}${first}`]
  return [...lines, ...more.map((m) => `${''.padEnd(COLUMN)}${m}`)].join('\n')
}

const HELP = `conduit ${version} — the RealWorld "Conduit" API in one binary

Usage:
${COMMANDS.map(usageLines).join('\n')}
  conduit --version                                      print the version
  conduit --help                                         print this help

Any command also takes --debug: log at the debug level and, should it fail, print
the stack after the one-line explanation (LOG_LEVEL=debug does the same).

Flags override the environment. Environment:
${Object.entries(environment)
  .map(([k, v]) => `  ${k.padEnd(31)}${v}`)
  .join('\n')}

Swagger UI is served at /swagger, the OpenAPI document at /swagger/json.`

/** What a failure message can name, filled in as main learns it. */
const context: FailureContext = {}
/** Whether a failure also prints its stack (--debug or LOG_LEVEL=debug). */
let debug = false

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof FLAGS; allowPositionals: true; strict: true }>>
  try {
    parsed = parseArgs({ args: joinNegativeNumbers(argv, NUMERIC), options: FLAGS, allowPositionals: true, strict: true })
  } catch (e) {
    throw usageFromParseArgs(e)
  }
  const { values: flags, positionals } = parsed
  debug = flags.debug === true
  if (flags.help) return print(HELP)
  if (flags.version) return print(version)

  const { command, args } = commandOf(positionals)
  context.command = command.name
  const config = loadConfig()
  if (flags.debug) config.logLevel = 'debug'
  debug = config.logLevel === 'debug'
  if (flags.port !== undefined) config.port = integer('--port', flags.port, 0, 65535)
  if (flags.host !== undefined) config.host = flags.host
  if (flags.db !== undefined) setDatabase(config, flags.db)
  if (flags.workers !== undefined) config.workers = integer('--workers', flags.workers, 1, 256)
  Object.assign(context, {
    databasePath: config.databaseUrl ? undefined : config.databasePath,
    databaseUrl: config.databaseUrl && redactUrl(config.databaseUrl),
    host: config.host,
    port: config.port,
  })
  if (args.length !== command.args) throw new UsageError(`usage: conduit ${command.name} ${command.usage}`)
  return command.run({ name: command.name, config, flags, args, context })
}

function print(text: string): number {
  console.log(text)
  return 0
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  // one line on stderr, never the minified source Bun prints with an error (src/cli/errors.ts)
  async (e) => process.exit(await report(e, context, debug)),
)
