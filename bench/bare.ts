/**
 * bun bench/bare.ts --a MODE --b MODE [--rounds 4] [--duration 4] [--warmup 2] [--connections 16]
 *
 * What one thing done to every answer costs, apart from the service: two
 * bare `Bun.serve` processes (bench/bare-server.ts) answer at once, both
 * pinned to core 0, each driven by a wrk of its own on core 1, and their CPU
 * time per request is compared round by round (B/A above 1: B costs more).
 * Both processes live through every round, and nothing in them varies from
 * one process to the next (no JIT decisions driven by a mix, no caches), so
 * the same mode against itself stays within about half a percent: fine
 * enough for the costs of a header or a string per answer, which the
 * service's own runs (bench/ab.ts) cannot resolve. Modes: see MODES in
 * bench/bare-server.ts.
 */
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { MODES, type Mode } from './bare-server.ts'
import { freePort, installCleanup, processCpuUs, runCleanups, spawn, stop, waitForAnswer } from './proc.ts'
import { median, withInterval } from './stats.ts'
import { ensureWrk, requireTaskset, runWrk } from './wrk.ts'

const { values } = parseArgs({
  options: {
    a: { type: 'string', default: 'plain' },
    b: { type: 'string', default: 'id' },
    rounds: { type: 'string', default: '4' },
    duration: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '16' },
  },
})
for (const m of [values.a, values.b]) {
  if (!(m in MODES)) throw new Error(`unknown mode ${m}: one of ${Object.keys(MODES).join(', ')}`)
}
const ROOT = resolve(import.meta.dir, '..')
const TMP = join(ROOT, 'bench/tmp', `bare-${process.pid}`)

installCleanup()
requireTaskset()
await ensureWrk()

const servers = await Promise.all(
  (['A', 'B'] as const).map(async (which) => {
    const mode = (which === 'A' ? values.a : values.b) as Mode
    const port = await freePort()
    const t0 = performance.now()
    const child = spawn(['bun', join(ROOT, 'bench/bare-server.ts'), mode, String(port)], { core: 0, stdout: 'ignore' })
    const base = `http://127.0.0.1:${port}`
    await waitForAnswer(`${base}/`, t0, child)
    return { child, base }
  }),
)
const load = (base: string, durationS: number, phase: 'w' | 'm') =>
  runWrk({
    base,
    script: { kind: 'fixed', method: 'GET', path: '/api/articles?limit=20', headers: {} },
    connections: Number(values.connections),
    core: 1,
    tmpDir: TMP,
    durationS,
    phase,
  })

try {
  await Promise.all(servers.map((s) => load(s.base, Number(values.warmup), 'w')))
  const us = { A: [] as number[], B: [] as number[] }
  const ratios: number[] = []
  for (let round = 0; round < Number(values.rounds); round++) {
    const cpu0 = servers.map((s) => processCpuUs(s.child.pid))
    const runs = await Promise.all(servers.map((s) => load(s.base, Number(values.duration), 'm')))
    const perRequest = servers.map((s, i) => (processCpuUs(s.child.pid) - cpu0[i]!) / Math.max(1, runs[i]!.requests))
    us.A.push(perRequest[0]!)
    us.B.push(perRequest[1]!)
    ratios.push(perRequest[1]! / perRequest[0]!)
    console.log(
      `round ${round + 1}: A ${perRequest[0]!.toFixed(2)} µs/request, B ${perRequest[1]!.toFixed(2)} µs/request, B/A ${ratios[round]!.toFixed(3)}, errors ${runs[0]!.errorCount + runs[1]!.errorCount}`,
    )
  }
  console.log(`\nA ${values.a} (${MODES[values.a as Mode]}): median ${median(us.A).toFixed(2)} µs of CPU per request`)
  console.log(`B ${values.b} (${MODES[values.b as Mode]}): median ${median(us.B).toFixed(2)} µs of CPU per request`)
  console.log(
    `B/A CPU per request: median ${withInterval(ratios)}; B - A: ${((median(us.B) - median(us.A)) * 1000).toFixed(0)} ns per request`,
  )
} finally {
  for (const s of servers) await stop(s.child)
  await runCleanups()
}
