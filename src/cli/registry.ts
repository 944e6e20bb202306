import type { Command } from './command.ts'
import { adminContentCommands } from './commands/admin-content.ts'
import { adminUserCommands } from './commands/admin-users.ts'
import { backupCommand } from './commands/backup.ts'
import { copyCommand } from './commands/copy.ts'
import { healthcheckCommand } from './commands/healthcheck.ts'
import { migrateCommand } from './commands/migrate.ts'
import { seedCommand } from './commands/seed.ts'
import { serveCommand } from './commands/serve.ts'
import { UsageError } from './errors.ts'

/** The commands, in the order --help lists them; `serve` is the default. A name of several words is a command of a group (`admin users lock`). */
export const COMMANDS: readonly Command[] = [
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
export function commandOf(positionals: readonly string[]): { command: Command; args: string[] } {
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
