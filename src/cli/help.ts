import type { Command } from './command.ts'
import { UsageError } from './errors.ts'

/** At least this many spaces between two columns, however long the first. */
const GAP = 2
/** A first column longer than this puts its description on the lines below (else every description would start far right). */
const WIDEST_FIRST = 46
const INDENT = '  '

/** One entry of a two-column list: what to type, and the lines that say what it does. */
export type Row = readonly [first: string, description: readonly string[]]

/**
 * Rows as two columns: the descriptions start where the longest first
 * column (up to WIDEST_FIRST) ends, GAP spaces on; a longer first column
 * stands on its own line, its description on the next.
 */
export function columns(rows: readonly Row[]): string[] {
  const fitting = rows.map(([first]) => first.length).filter((n) => n <= WIDEST_FIRST)
  const at = Math.max(0, ...fitting) + GAP
  const pad = ' '.repeat(at)
  return rows.flatMap(([first, [line = '', ...more]]) => [
    ...(first.length + GAP <= at ? [`${INDENT}${first.padEnd(at)}${line}`] : [`${INDENT}${first}`, `${INDENT}${pad}${line}`]),
    ...more.map((m) => `${INDENT}${pad}${m}`),
  ])
}

/** How --help names a command: `serve` may be left out. */
export const usageOf = (c: Command): string => `conduit ${c.name === 'serve' ? '[serve]' : c.name} ${c.usage}`

/** A command given the wrong arguments: its usage, and where to read more (exit status 2). */
export const usageError = (c: Command): UsageError => new UsageError(`usage: ${usageOf(c)}; see conduit --help`)

/** The two lists of --help: the commands (with the two aliases) and the environment variables. */
export function helpRows(commands: readonly Command[], environment: Readonly<Record<string, string>>): { usage: Row[]; variables: Row[] } {
  return {
    usage: [
      ...commands.map((c): Row => [usageOf(c), c.summary]),
      ['conduit version | --version', ['print the version']],
      ['conduit help | --help', ['print this help']],
    ],
    variables: Object.entries(environment).map(([name, what]): Row => [name, [what]]),
  }
}

/**
 * `conduit <words> --help` and `conduit help <words>`: the usage of the commands whose names
 * begin with those words (`admin` lists every admin command); words that begin none: a usage error.
 */
export function commandHelp(commands: readonly Command[], words: readonly string[]): string {
  const named = commands.filter((c) => {
    const name = c.name.split(' ')
    return words.every((w, i) => i >= name.length || name[i] === w)
  })
  // `version` and `help` are words of main.ts, not commands: `conduit version --help` asks all the same
  if (!named.length && words.length === 1 && words[0] === 'version')
    return 'Usage:\n  conduit version  print the version, one line (also --version, -v)'
  if (!named.length && words.length === 1 && words[0] === 'help')
    return 'Usage:\n  conduit help [COMMAND]  what the commands do (also --help, -h)'
  if (!named.length) throw new UsageError(`unknown command "${words.join(' ')}"; see conduit --help`)
  return `Usage:
${columns(named.map((c): Row => [usageOf(c), c.summary])).join('\n')}

Flags override the environment; conduit --help lists every command and variable.`
}

/** The whole of `conduit --help`. */
export function helpText(commands: readonly Command[], environment: Readonly<Record<string, string>>, version: string): string {
  const rows = helpRows(commands, environment)
  const usage = columns(rows.usage)
  const variables = columns(rows.variables)
  return `conduit ${version} — the RealWorld "Conduit" site and API in one binary

Usage:
${usage.join('\n')}

Any command also takes --debug: log at the debug level and, should it fail, print
the stack after the one-line explanation (LOG_LEVEL=debug does the same).

Flags override the environment. Environment:
${variables.join('\n')}

The site is served at /, the API at /api, Swagger UI at /swagger, the OpenAPI
document at /swagger/json.`
}
