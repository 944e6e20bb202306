import { EVERY_COMMAND, type Flags } from './command.ts'
import { type ErrorLike, HELP_HINT, oneLine, reason, UsageError } from './errors.ts'

/** The command line as node:util's parseArgs reads it, and its refusals as one line each. */

const PARSE_ARGS_CODES = new Set([
  'ERR_PARSE_ARGS_UNKNOWN_OPTION',
  'ERR_PARSE_ARGS_INVALID_OPTION_VALUE',
  'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL',
])

/**
 * node:util parseArgs's messages span lines and talk about its own syntax
 * ("To specify a positional argument starting with a '-' ..."); this is the
 * one line a user needs.
 */
export function usageFromParseArgs(error: unknown): UsageError {
  const e = error as ErrorLike
  if (!PARSE_ARGS_CODES.has(String(e?.code))) return new UsageError(`${oneLine(reason(e))}; ${HELP_HINT}`)
  const message = String(e.message)
  const quoted = /'([^']+)'/.exec(message)?.[1] ?? ''
  // "Option '-h, --help' does not take ..." and "Option '--port <value>' ..." name the flag among other words
  const flag = quoted.split(/[\s,]+/).find((w) => w.startsWith('--')) ?? (quoted.startsWith('-') ? quoted : `-${quoted}`)
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return new UsageError(`unknown option ${flag}; ${HELP_HINT}`)
  if (/does not take an argument/.test(message)) return new UsageError(`option ${flag} takes no value; ${HELP_HINT}`)
  if (/ambiguous/.test(message)) {
    return new UsageError(`option ${flag} needs a value (write ${flag}=VALUE for a value that starts with "-"); ${HELP_HINT}`)
  }
  if (/missing/.test(message)) return new UsageError(`option ${flag} needs a value; ${HELP_HINT}`)
  return new UsageError(`${oneLine(message)}; ${HELP_HINT}`)
}

/**
 * parseArgs takes the `-5` of `--articles -5` for a flag and refuses it as
 * "ambiguous"; for the numeric options a negative number is joined to its
 * option (`--articles=-5`), so the range check can say what is wrong with it.
 * A negative number that is no option's value (`admin comments delete -1`)
 * is an argument: it goes after `--`, where parseArgs reads arguments only,
 * so the command can say what is wrong with it (no command takes two).
 * `valued`: the other options that take a value, whose value parseArgs judges.
 */
export function joinNegativeNumbers(argv: readonly string[], numeric: readonly string[], valued: readonly string[]): string[] {
  const out: string[] = []
  const negatives: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const next = argv[i + 1]
    if (arg === '--') {
      out.push(arg, ...negatives.splice(0), ...argv.slice(i + 1))
      break
    }
    if (numeric.includes(arg) && next !== undefined && /^-\d/.test(next)) {
      out.push(`${arg}=${next}`)
      i++
    } else if (/^-\d/.test(arg) && !valued.includes(argv[i - 1] ?? '')) {
      negatives.push(arg)
    } else {
      out.push(arg)
    }
  }
  return negatives.length ? [...out, '--', ...negatives] : out
}

/**
 * The options a command does not take are refused, never ignored: `backup out.db --from big.db`
 * would back up another database than the one meant. An empty value is refused too: `--db "$DB"`
 * with DB unset would be SQLite's private temporary database, lost at exit (as the environment's
 * empty variables are unset ones). `what` names the command; `hint`, where its options are listed.
 */
export function checkOptions(flags: Flags, what: string, takes: readonly string[], hint = `see conduit ${what} --help`): void {
  for (const [name, value] of Object.entries(flags)) {
    if (value === undefined || (EVERY_COMMAND as readonly string[]).includes(name)) continue
    if (!takes.includes(name)) throw new UsageError(`${what} does not take --${name}; ${hint}`)
    if (value === '') throw new UsageError(`option --${name} needs a value, got ""; ${HELP_HINT}`)
  }
}
