/**
 * The runtime settings the server runs with. JavaScriptCore reads its options once, as the
 * process starts, from BUN_JSC_* variables, so a server started without them execs itself
 * again with them (the same pid): main.ts imports relaunch.ts, which calls `relaunchForServer`,
 * before anything else. A variable the operator set is kept as set, and its group is not added;
 * the other commands are never relaunched.
 *
 * - FTL off: its compilations of the request path held the server's core longer than its faster
 *   code gave back.
 * - The concurrent collector off: beside a server on one core it only let the heap overshoot.
 * - LEAN_MEMORY's three settings go together (a ratio near 50 % with a 2x heap would make every
 *   other collection a full one), so an operator who sets any of them gets none of the others.
 * - With little memory per serving process (the cgroup's limit or the RAM, over `--workers`), the
 *   lean collector under 384 MiB and `CACHE_MB=30` under 320 MiB: below them the defaults came
 *   near the limit or sat at it.
 *
 * The measurements: docs/PERFORMANCE.md ("The tail", "Memory"), docs/DEPLOYING.md.
 */
import { parseArgs } from 'node:util'
import { booleanWord, memoryLimit } from '../config.ts'
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

/** Below this much memory per serving process, the lean collector by default. */
export const LEAN_BELOW_BYTES = 384 * 2 ** 20
/** Below this much, also the smaller caches (`SMALL_CACHE_MB`). */
export const SMALL_CACHE_BELOW_BYTES = 320 * 2 ** 20
export const SMALL_CACHE_MB = '30'

/**
 * The settings to add to `env`: each group it calls for and sets none of the variables of. An
 * unreadable LEAN_MEMORY adds nothing here: loading the configuration refuses it in one line.
 * `perProcessBytes`: the memory one serving process may count on (absent: plenty).
 */
export function runtimeFor(env: Readonly<Record<string, string | undefined>>, perProcessBytes = Infinity): Record<string, string> {
  const add: Record<string, string> = {}
  const unset = (group: Readonly<Record<string, string>>) => Object.keys(group).every((k) => env[k] === undefined)
  for (const group of [FTL_OFF, CONCURRENT_GC_OFF]) if (unset(group)) Object.assign(add, group)
  if (env.LEAN_MEMORY !== undefined) {
    if (booleanWord(env.LEAN_MEMORY) && unset(LEAN_COLLECTOR)) Object.assign(add, LEAN_COLLECTOR)
  } else if (perProcessBytes < LEAN_BELOW_BYTES && unset(LEAN_COLLECTOR)) {
    // said in the environment as well, so that the configuration and /proc show what it runs with
    Object.assign(add, LEAN_COLLECTOR, { LEAN_MEMORY: 'true' })
  }
  if (env.CACHE_MB === undefined && perProcessBytes < SMALL_CACHE_BELOW_BYTES) add.CACHE_MB = SMALL_CACHE_MB
  return add
}

/**
 * The serving processes these arguments and `env` start: 0 for anything but the server (a
 * command, --help, --version, or arguments main refuses and reports); else `--workers`, else
 * WORKERS, else 1 (a bad value counts as 1: the configuration refuses it).
 */
export function servingProcesses(args: readonly string[], env: Readonly<Record<string, string | undefined>>): number {
  const parsed = parsedOrNot(args)
  if (!parsed || parsed.values.help || parsed.values.version) return 0
  if (parsed.positionals.length > 0 && parsed.positionals[0] !== 'serve') return 0
  const flag = parsed.values.workers
  const n = Number((typeof flag === 'string' ? flag : undefined) ?? env.WORKERS ?? 1)
  return Number.isSafeInteger(n) && n >= 1 ? n : 1
}

/** The arguments as main would read them, or undefined where it will refuse them. */
function parsedOrNot(args: readonly string[]) {
  try {
    return parseArgs({ args: [...args], options: FLAGS, allowPositionals: true, strict: false })
  } catch {
    return undefined
  }
}

/** Execs this program again with the settings `runtimeFor` adds when it starts the server and adds any; else returns. */
export function relaunchForServer(): void {
  const env = process.env
  const args = process.argv.slice(2)
  const processes = servingProcesses(args, env)
  if (processes === 0) return
  const add = runtimeFor(env, memoryLimit() / processes)
  if (Object.keys(add).length === 0) return
  // a compiled binary is its own script; `bun src/main.ts` needs its runtime flags and script again
  const compiled = process.argv[1]?.startsWith('/$bunfs/') ?? false
  const argv = compiled ? args : [...process.execArgv, process.argv[1]!, ...args]
  try {
    process.execve!(process.execPath, [process.execPath, ...argv], { ...env, ...add })
  } catch {
    // no execve here (Windows) or the file is gone: serve as started
  }
}
