import { describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { binaryDatabase } from '../support/backend.ts'
import { skipIf } from '../support/skip.ts'
import { api, freePort, register, type Server, startServer, tempDir, twoInstances, useBinary, withTimeout } from './support.ts'

/**
 * /metrics of the compiled binary as Prometheus sees it: Debian's
 * `prometheus` scraping it for real (as whatever user runs the suite, its
 * storage in a temporary directory), `promtool check metrics` on what it
 * serves, and `serve --workers 2`, where a scrape reaches one worker and must
 * still carry every worker's figures.
 */

const TOKEN = 'e2e-metrics-token'
const prometheus = Bun.which('prometheus')
const promtool = Bun.which('promtool')
const binary = useBinary()

const scrape = async (server: Server) => {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
  expect(res.status).toBe(200)
  return res.text()
}

/** Each on a connection of its own: the kernel spreads connections, not requests, over the workers. */
async function getTags(server: Server, times: number) {
  for (let i = 0; i < times; i++) {
    const res = await fetch(`${server.url}/api/tags`, { headers: { connection: 'close' } })
    expect(res.status).toBe(200)
    await res.arrayBuffer()
  }
}

/** Every sample of a family with its labels. */
const samples = (text: string, name: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`))
    .map((l) => ({ labels: l.slice(name.length, l.lastIndexOf(' ')), value: Number(l.slice(l.lastIndexOf(' ') + 1)) }))

async function startConduit(args: string[] = []) {
  const db = await binaryDatabase()
  return startServer(binary(), { args, env: { HOST: '127.0.0.1', LOG_LEVEL: 'warn', METRICS_TOKEN: TOKEN, ...db.env } })
}

skipIf(!promtool && 'promtool missing').test(
  'promtool check metrics passes on what the binary serves, under --workers 2 too',
  async () => {
    for (const args of [[], ['serve', '--workers', '2']]) {
      const server = await startConduit(args)
      try {
        await getTags(server, 10)
        expect((await fetch(`${server.url}/api/articles/nope`)).status).toBe(404)
        const text = await scrape(server)
        const check = Bun.spawn({ cmd: [promtool!, 'check', 'metrics'], stdin: new Blob([text]), stdout: 'pipe', stderr: 'pipe' })
        const out = `${await new Response(check.stdout).text()}${await new Response(check.stderr).text()}`
        expect([args.join(' '), out.trim(), await check.exited]).toEqual([args.join(' '), '', 0])
      } finally {
        await server.stop()
      }
    }
  },
  60_000,
)

test('two instances on one database: what one writes, the other reads from the change log, and counts', async () => {
  const { a, b } = await twoInstances(binary(), { METRICS_TOKEN: TOKEN })
  try {
    const value = (text: string, name: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${name} `))
      return line === undefined ? Number.NaN : Number(line.slice(line.lastIndexOf(' ') + 1))
    }
    const user = await register(a.url)
    expect((await api(b.url, 'GET', '/api/articles')).status).toBe(200)
    const before = await scrape(b)
    for (const title of ['One', 'Two', 'Three'])
      expect(
        (await api(a.url, 'POST', '/api/articles', { token: user.token, body: { article: { title, description: 'd', body: 'b' } } }))
          .status,
      ).toBe(201)
    const list = await api(b.url, 'GET', '/api/articles')
    expect(list.body.articlesCount).toBe(3)
    const after = await scrape(b)
    expect(value(after, 'conduit_changes_reads_total') - value(before, 'conduit_changes_reads_total')).toBeGreaterThanOrEqual(1)
    // each creation is one row of the log, read by b
    expect(value(after, 'conduit_changes_rows_total') - value(before, 'conduit_changes_rows_total')).toBe(3)
    expect(value(after, 'conduit_changes_resets_total')).toBe(value(before, 'conduit_changes_resets_total'))
    expect(value(after, 'conduit_changes_behind_seconds')).toBeLessThan(5)
  } finally {
    await a.stop()
    await b.stop()
  }
}, 60_000)

describe('serve --workers 2', () => {
  test("one scrape carries every worker's figures, each labelled with its worker", async () => {
    const server = await startConduit(['serve', '--workers', '2'])
    try {
      const count = (text: string) => samples(text, 'conduit_http_requests_total').filter((s) => s.labels.includes('route="/api/tags"'))
      const before = count(await scrape(server)).reduce((n, s) => n + s.value, 0)
      await getTags(server, 40)
      const text = await scrape(server)
      const tags = count(text)
      // both workers answered some (40 connections spread by the kernel), and the scrape, whichever worker it reached, has them all
      expect(tags.map((s) => s.labels.match(/worker="(\d+)"/)?.[1]).sort()).toEqual(['1', '2'])
      expect(tags.every((s) => s.value > 0)).toBe(true)
      expect(tags.reduce((n, s) => n + s.value, 0) - before).toBe(40)
      expect(samples(text, 'process_resident_memory_bytes').map((s) => s.labels)).toEqual(
        expect.arrayContaining(['{worker="1"}', '{worker="2"}']),
      )
      expect(text).toMatch(/^conduit_metrics_workers_missing 0$/m)
    } finally {
      await server.stop()
    }
  }, 60_000)
})

skipIf(!prometheus && 'prometheus missing').describe('a real Prometheus', () => {
  test('scrapes the binary with the bearer token: up is 1 and conduit_http_requests_total has series', async () => {
    const server = await startConduit()
    const dir = tempDir('conduit-prometheus-')
    const port = freePort()
    const config = join(dir, 'prometheus.yml')
    writeFileSync(
      config,
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'scrape_configs:',
        '  - job_name: conduit',
        '    scrape_timeout: 900ms',
        '    authorization:',
        `      credentials: ${TOKEN}`,
        '    static_configs:',
        `      - targets: ['127.0.0.1:${server.port}']`,
        '',
      ].join('\n'),
    )
    let proc: Subprocess<'ignore', 'pipe', 'pipe'> | undefined
    try {
      await getTags(server, 3)
      proc = Bun.spawn({
        cmd: [
          prometheus!,
          `--config.file=${config}`,
          `--storage.tsdb.path=${join(dir, 'data')}`,
          `--web.listen-address=127.0.0.1:${port}`,
          '--log.level=warn',
        ],
        cwd: dir,
        stdin: 'ignore',
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const query = async (q: string) => {
        try {
          const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`)
          const body = (await res.json()) as { data?: { result?: { metric: Record<string, string>; value: [number, string] }[] } }
          return body.data?.result ?? []
        } catch {
          return [] // not listening yet
        }
      }
      const until = Date.now() + 30_000
      let up: Awaited<ReturnType<typeof query>> = []
      let requests: Awaited<ReturnType<typeof query>> = []
      while (Date.now() < until) {
        if (proc.exitCode !== null) break
        up = await query('up{job="conduit"}')
        requests = await query('conduit_http_requests_total{route="/api/tags",method="GET",status="200"}')
        if (up[0]?.value[1] === '1' && requests.length) break
        await Bun.sleep(250)
      }
      const stderr = proc.exitCode === null ? '' : await new Response(proc.stderr).text()
      expect([up[0]?.value[1], stderr]).toEqual(['1', ''])
      expect(requests.map((r) => [r.metric.route, Number(r.value[1]) >= 3])).toEqual([['/api/tags', true]])
      // the server has run for seconds: the event loop's lag was sampled (every 500 ms)
      const lag = await query('conduit_event_loop_lag_seconds_count{job="conduit"}')
      expect(Number(lag[0]?.value[1] ?? 0)).toBeGreaterThan(0)
    } finally {
      if (proc && proc.exitCode === null) {
        proc.kill('SIGTERM')
        await withTimeout(proc.exited, 10_000, 'prometheus exit').catch(() => proc?.kill('SIGKILL'))
      }
      await server.stop()
    }
  }, 60_000)
})
