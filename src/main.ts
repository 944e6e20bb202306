#!/usr/bin/env bun
// first: the server execs itself again with its runtime settings before anything else loads
import './cli/relaunch.ts'
import { parseArgs } from 'node:util'
import { version } from '../package.json'
import { FLAGS, NUMERIC } from './cli/command.ts'
import { checkOptions, joinNegativeNumbers, usageFromParseArgs } from './cli/argv.ts'
import { HELP_HINT, UsageError } from './cli/errors.ts'
import { type FailureContext, report } from './cli/report.ts'
import { commandHelp, helpText, usageError } from './cli/help.ts'
import { COMMANDS, commandOf } from './cli/registry.ts'
import { ConfigError, environment, hostAddress, inMemory, integer, loadConfig, redactUrl, setDatabase } from './config.ts'

const HELP = helpText(COMMANDS, environment, version)
/** The options that take a value, as typed: what follows one is its value, even `-1`. */
const VALUED = Object.entries(FLAGS).flatMap(([name, f]) => (f.type === 'string' ? [`--${name}`] : []))

/** What a failure message can name, filled in as main learns it. */
const context: FailureContext = {}
/** Whether a failure also prints its stack (--debug or LOG_LEVEL=debug). */
let debug = false

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof FLAGS; allowPositionals: true; strict: true }>>
  try {
    parsed = parseArgs({ args: joinNegativeNumbers(argv, NUMERIC, VALUED), options: FLAGS, allowPositionals: true, strict: true })
  } catch (e) {
    throw usageFromParseArgs(e)
  }
  const { values: flags, positionals } = parsed
  debug = flags.debug === true
  // `conduit version` and `conduit help [COMMAND]`: what people type first (help whatever else is given)
  const [first, ...rest] = positionals
  if (flags.help || first === 'help') {
    const words = flags.help ? positionals : rest
    return print(words.length ? commandHelp(COMMANDS, words) : HELP)
  }
  if (flags.version || first === 'version') {
    checkOptions(flags, 'version', [], HELP_HINT)
    if (!flags.version && rest.length) throw new UsageError('usage: conduit version; see conduit --help')
    return print(version)
  }

  const { command, args } = commandOf(positionals)
  context.command = command.name
  // before the environment is read: a mistake on the command line is the first thing said
  checkOptions(flags, command.name, command.options)
  const config = loadConfig()
  if (flags.debug) config.logLevel = 'debug'
  debug = config.logLevel === 'debug'
  if (flags.port !== undefined) config.port = integer('--port', flags.port, 0, 65535)
  if (flags.host !== undefined) config.host = hostAddress('--host', flags.host)
  if (flags.db !== undefined) setDatabase(config, flags.db)
  if (flags.workers !== undefined) config.workers = integer('--workers', flags.workers, 1, 256)
  // only a server has a use for a database that lives and dies with it
  if (inMemory(config) && command.name !== 'serve' && command.options.includes('db'))
    throw new ConfigError(
      `${command.name}: :memory: is a database inside one serving process, empty when it starts and gone when it stops; give a file or a postgres:// URL`,
    )
  Object.assign(context, {
    databasePath: config.databaseUrl ? undefined : config.databasePath,
    databaseUrl: config.databaseUrl && redactUrl(config.databaseUrl),
    host: config.host,
    port: config.port,
  })
  if (args.length !== command.args) throw usageError(command)
  // `backup "$FILE"` with FILE unset
  const empty = args.indexOf('')
  if (empty >= 0)
    throw new UsageError(`${command.name}: ${command.usage.split(' ')[empty]} must not be empty; see conduit ${command.name} --help`)
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
