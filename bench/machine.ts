/** What the figures were measured on. */
import { readFileSync } from 'node:fs'
import { cpus, release, totalmem } from 'node:os'
import { run } from './proc.ts'

export interface Machine {
  cpu: string
  cores: number
  memoryBytes: number
  kernel: string
  bun: string
  wrk: string
  commit: string
  /** uncommitted changes in the working tree when measured */
  dirty: boolean
  branch: string
}

export async function machineInfo(root: string): Promise<Machine> {
  let cpu = cpus()[0]?.model ?? 'unknown'
  try {
    cpu = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpu
  } catch {}
  const git = async (...args: string[]) => (await run(['git', ...args], { cwd: root, timeoutMs: 10_000 })).stdout.trim()
  const wrk = await run(['wrk', '-v'], { timeoutMs: 5000 })
  return {
    cpu,
    cores: cpus().length,
    memoryBytes: totalmem(),
    kernel: release(),
    bun: Bun.version,
    wrk: /wrk (\S+)/.exec(wrk.stdout + wrk.stderr)?.[1] ?? 'unknown',
    commit: (await git('rev-parse', 'HEAD')) || 'unknown',
    dirty: (await git('status', '--porcelain', '--untracked-files=no')).length > 0,
    branch: (await git('rev-parse', '--abbrev-ref', 'HEAD')) || 'unknown',
  }
}
