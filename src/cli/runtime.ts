/**
 * The runtime settings the server runs with. JavaScriptCore reads its options once, as the
 * process starts, from BUN_JSC_* variables, so a server started without them execs itself
 * again with them (the same pid; ~50 ms more to the first answer): main.ts imports
 * relaunch.ts, which calls `relaunchForServer`, before anything else. A variable the operator
 * set is kept as set, and its group is not added; the other commands are never relaunched.
 *
 * - `BUN_JSC_useFTLJIT=0`: no FTL, JavaScriptCore's last tier. Its compilations of the request
 *   path took up to 85 ms of a core each (113 of them in a 20 s run), on threads that share the
 *   server's core when it has one; without it p99 under writes fell 14-23 % on SQLite and the CPU
 *   per request did not rise, even after a 30 s warm-up (docs/PERFORMANCE.md, "The tail").
 * - `BUN_JSC_useConcurrentGC=0`: the collector marks while the server waits, not beside it. A
 *   concurrent collection lets the server allocate on while it marks, so the heap overshot each
 *   trigger (full collections came at 200-219 MB of heap, without it at 164-175); with the
 *   server on one core the marker only shared that core. Peak RSS -12 %, CPU per request,
 *   throughput and p99 unchanged (docs/PERFORMANCE.md, "Memory").
 * - With LEAN_MEMORY=true, a leaner collector, the same on every host: the heap may grow to 2x
 *   what a full collection left (JavaScriptCore allows 3x on hosts of 16 GiB or more), and a full
 *   collection comes once eden's room falls under 40 % of the heap, not 33 %, so the garbage that
 *   outlives an eden collection (replaced cache entries, answers in flight) does not pile up for
 *   long first. Costs and figures: docs/PERFORMANCE.md, "Memory". The three go together (a
 *   ratio near 50 % with a 2x heap would make every other collection a full one), so an operator
 *   who sets any of them gets none of the others.
 */
import { parseArgs } from 'node:util'
import { booleanWord } from '../config.ts'
import { FLAGS } from './command.ts'

/** Always: no FTL. */
export const FTL_OFF: Readonly<Record<string, string>> = { BUN_JSC_useFTLJIT: '0' }
/** Always: collections in pauses, without a concurrent marker. */
export const CONCURRENT_GC_OFF: Readonly<Record<string, string>> = { BUN_JSC_useConcurrentGC: '0' }
/** With LEAN_MEMORY=true. */
export const LEAN_COLLECTOR: Readonly<Record<string, string>> = {
  // above any RAM: the flat growth factor below, whatever the host
  BUN_JSC_heapGrowthFunctionThresholdInMB: '1073741',
  BUN_JSC_smallHeapGrowthFactor: '2',
  BUN_JSC_minEdenToOldGenerationRatio: '0.4',
}

/**
 * The settings to add to `env`: each group it calls for and sets none of the variables of. An
 * unreadable LEAN_MEMORY adds nothing here: loading the configuration refuses it in one line.
 */
export function runtimeFor(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const always = [FTL_OFF, CONCURRENT_GC_OFF]
  const groups = env.LEAN_MEMORY !== undefined && booleanWord(env.LEAN_MEMORY) ? [...always, LEAN_COLLECTOR] : always
  const add: Record<string, string> = {}
  for (const group of groups) if (Object.keys(group).every((k) => env[k] === undefined)) Object.assign(add, group)
  return add
}

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

/** Execs this program again with the settings `runtimeFor` adds when it starts the server and adds any; else returns. */
export function relaunchForServer(): void {
  const env = process.env
  const add = runtimeFor(env)
  if (Object.keys(add).length === 0) return
  const args = process.argv.slice(2)
  if (!serves(args)) return
  // a compiled binary is its own script; `bun src/main.ts` needs its runtime flags and script again
  const compiled = process.argv[1]?.startsWith('/$bunfs/') ?? false
  const argv = compiled ? args : [...process.execArgv, process.argv[1]!, ...args]
  try {
    process.execve!(process.execPath, [process.execPath, ...argv], { ...env, ...add })
  } catch {
    // no execve here (Windows) or the file is gone: serve as started
  }
}
