#!/usr/bin/env bun
import { parseArgs } from 'node:util'
import { version } from '../package.json'
import { type Command, FLAGS, NUMERIC } from './cli/command.ts'
import { backupCommand } from './cli/commands/backup.ts'
import { copyCommand } from './cli/commands/copy.ts'
import { healthcheckCommand } from './cli/commands/healthcheck.ts'
import { migrateCommand } from './cli/commands/migrate.ts'
import { seedCommand } from './cli/commands/seed.ts'
import { serveCommand } from './cli/commands/serve.ts'
import { type FailureContext, joinNegativeNumbers, report, UsageError, usageFromParseArgs } from './cli/errors.ts'
import { environment, integer, loadConfig, redactUrl, setDatabase } from './config.ts'

/** The commands, in the order --help lists them; `serve` is the default. */
const COMMANDS: readonly Command[] = [serveCommand, migrateCommand, backupCommand, copyCommand, healthcheckCommand, seedCommand]

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

  const [name = 'serve', ...args] = positionals
  context.command = name
  const command = COMMANDS.find((c) => c.name === name)
  if (!command) throw new UsageError(`unknown command "${name}"; see conduit --help`)
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
  return command.run({ config, flags, args, context })
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
