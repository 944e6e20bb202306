/**
 * The runtime settings the server runs with. JavaScriptCore reads its options once, as the
 * process starts, from BUN_JSC_* variables, so a server started without them execs itself
 * again with them (the same pid; ~50 ms more to the first answer): main.ts imports
 * relaunch.ts, which calls `relaunchForServer`, before anything else. A variable the operator
 * set is kept as set, and then nothing is relaunched; nor are the other commands.
 *
 * - `BUN_JSC_useFTLJIT=0`: no FTL, JavaScriptCore's last tier. Its compilations of the request
 *   path took up to 85 ms of a core each (113 of them in a 20 s run), on threads that share the
 *   server's core when it has one; without it p99 under writes fell 14-23 % on SQLite and the CPU
 *   per request did not rise, even after a 30 s warm-up (docs/PERFORMANCE.md, "The tail").
 */
import { parseArgs } from 'node:util'
import { FLAGS } from './command.ts'

export const SERVER_RUNTIME: Readonly<Record<string, string>> = { BUN_JSC_useFTLJIT: '0' }

/** Whether these arguments start the server: no command, or `serve`, and neither --help nor --version. */
export function serves(args: readonly string[]): boolean {
  try {
    const { values, positionals } = parseArgs({ args: [...args], options: FLAGS, allowPositionals: true, strict: false })
    if (values.help || values.version) return false
    return positionals.length === 0 || positionals[0] === 'serve'
  } catch {
    return false // main reports it
  }
}

/** Execs this program again with SERVER_RUNTIME when it starts the server and none of it is set; else returns. */
export function relaunchForServer(): void {
  const env = process.env
  if (Object.keys(SERVER_RUNTIME).some((k) => env[k] !== undefined)) return
  const args = process.argv.slice(2)
  if (!serves(args)) return
  // a compiled binary is its own script; `bun src/main.ts` needs its runtime flags and script again
  const compiled = process.argv[1]?.startsWith('/$bunfs/') ?? false
  const argv = compiled ? args : [...process.execArgv, process.argv[1]!, ...args]
  try {
    process.execve!(process.execPath, [process.execPath, ...argv], { ...env, ...SERVER_RUNTIME })
  } catch {
    // no execve here (Windows) or the file is gone: serve as started
  }
}
