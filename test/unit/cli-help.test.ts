import { describe, expect, test } from 'bun:test'
import { version } from '../../package.json'
import { columns, commandHelp, helpRows, helpText, type Row } from '../../src/cli/help.ts'
import { COMMANDS } from '../../src/cli/registry.ts'
import { environment } from '../../src/config.ts'
import { skipIf, why } from '../support/skip.ts'

/** Every two-column entry of --help: the commands (and the two aliases) and the environment variables. */
const { usage: usageRows, variables: variableRows } = helpRows(COMMANDS, environment)

/**
 * What is wrong with the columns of `rows` in `text`: a row whose first
 * column runs into its description (fewer than two spaces between), or
 * whose description does not start where the others of its list do.
 */
function columnProblems(text: string, rows: readonly Row[]): string[] {
  const lines = text.split('\n')
  const problems: string[] = []
  const starts = new Set<number>()
  for (const [first, [description = '', ...more]] of rows) {
    // (a name may begin another, longer one: REGISTRATION_THROTTLE)
    const at = lines.findIndex((l) => l.startsWith(`  ${first}`) && [description, ''].includes(l.slice(first.length + 2).trim()))
    if (at < 0) {
      problems.push(`${first}: no line holds it and its description apart`)
      continue
    }
    const rest = lines[at]!.slice(first.length + 2)
    // the description on the row's own line, or alone on the next
    const own = rest.trim() !== ''
    const below = lines[at + 1] ?? ''
    if (own) {
      const gap = rest.length - rest.trimStart().length
      if (gap < 2) problems.push(`${first}: ${gap} space(s) before its description`)
      starts.add(first.length + 2 + gap)
    } else {
      if (below.trim() !== description) problems.push(`${first}: its description is not on the line below`)
      starts.add(below.length - below.trimStart().length)
    }
    more.forEach((m, i) => {
      const next = lines[at + (own ? 1 : 2) + i] ?? ''
      if (next.trim() !== m) problems.push(`${first}: line ${i + 2} of its description is missing`)
      starts.add(next.length - next.trimStart().length)
    })
  }
  if (starts.size > 1) problems.push(`descriptions start at ${[...starts].join(', ')}`)
  return problems
}

skipIf(why.sqlitePass).describe('conduit --help', () => {
  const help = helpText(COMMANDS, environment, version)

  test('every command and every variable stands two spaces or more from its description, all descriptions of a list aligned', () => {
    expect(columnProblems(help, usageRows)).toEqual([])
    expect(columnProblems(help, variableRows)).toEqual([])
  })

  test('a first column too long for the list puts its description on the next line', () => {
    expect(
      columns([
        ['short', ['one', 'two']],
        ['a'.repeat(60), ['three']],
      ]),
    ).toEqual(['  short  one', '         two', `  ${'a'.repeat(60)}`, '         three'])
  })

  test('the check finds columns that touch (the old fixed width of 31 for the variables)', () => {
    const old = Object.entries(environment)
      .map(([k, v]) => `  ${k.padEnd(31)}${v}`)
      .join('\n')
    expect(columnProblems(old, variableRows)).toEqual([
      'REGISTRATION_THROTTLE_PER_ADDRESS: 0 space(s) before its description',
      'REGISTRATION_THROTTLE_WINDOW_SECONDS: 0 space(s) before its description',
      expect.stringMatching(/^descriptions start at/),
    ])
  })
})

describe('conduit COMMAND --help, conduit help COMMAND', () => {
  const usages = (words: string[]) => commandHelp(COMMANDS, words).match(/^ {2}conduit .*$/gm)

  test('a group lists its commands, a command itself, and nothing else', () => {
    const admin = usages(['admin'])
    expect(admin).toHaveLength(COMMANDS.filter((c) => c.name.startsWith('admin ')).length)
    expect(admin!.every((u) => u.startsWith('  conduit admin '))).toBe(true)
    expect(usages(['admin', 'users', 'lock'])).toEqual(['  conduit admin users lock USERNAME [--json] [--db FILE|URL]'])
    // arguments after the command's name do not hide it
    expect(usages(['backup', 'file.db'])).toEqual([
      expect.stringMatching(/^ {2}conduit backup <file> \[--db FILE\] {2}write a consistent copy/),
    ])
  })

  test('version and help, words of their own, have a help too', () => {
    expect(commandHelp(COMMANDS, ['version'])).toBe('Usage:\n  conduit version  print the version, one line (also --version, -v)')
    expect(commandHelp(COMMANDS, ['help'])).toBe('Usage:\n  conduit help [COMMAND]  what the commands do (also --help, -h)')
  })

  test('words that name no command are a usage error', () => {
    expect(() => commandHelp(COMMANDS, ['nope'])).toThrow('unknown command "nope"; see conduit --help')
    expect(() => commandHelp(COMMANDS, ['admin', 'nope'])).toThrow('unknown command "admin nope"; see conduit --help')
  })
})
