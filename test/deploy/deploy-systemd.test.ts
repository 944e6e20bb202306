import { expect, test } from 'bun:test'
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { hardDeadlineMs } from '../../src/cluster.ts'
import { defaults, environment, loadConfig } from '../../src/config.ts'
import { api, register, startServer, tempDir, useBinary } from '../e2e/support.ts'
import { skipIf, why } from '../support/skip.ts'

/**
 * deploy/conduit.service, the systemd unit for the binary. No systemd runs
 * here (a container), so the unit is checked by systemd's own tools where
 * they are installed (`systemd-analyze verify` and `security`), read for
 * what it must say, and its command line and environment are run: the
 * binary must start with them and stop on SIGTERM well within TimeoutStopSec.
 */
const ROOT = join(import.meta.dir, '../..')
const UNIT = join(ROOT, 'deploy/conduit.service')
const text = readFileSync(UNIT, 'utf8')
const analyze = Bun.which('systemd-analyze')
const noAnalyze = !analyze && 'systemd-analyze missing (the systemd package)'
const SYSTEM_UNITS = '/usr/lib/systemd/system'
const binary = useBinary()

/** The unit's settings: section -> key -> every value given, in order (systemd allows repeating a key). */
function parseUnit(source: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>()
  let current: Map<string, string[]> | undefined
  for (const raw of source.split('\n')) {
    const line = raw.trim()
    if (!line || line.startsWith('#') || line.startsWith(';')) continue
    const section = /^\[(.+)\]$/.exec(line)
    if (section) {
      current = new Map()
      sections.set(section[1]!, current)
      continue
    }
    const eq = line.indexOf('=')
    if (!current || eq < 0) throw new Error(`not a setting: ${line}`)
    const key = line.slice(0, eq)
    current.set(key, [...(current.get(key) ?? []), line.slice(eq + 1)])
  }
  return sections
}

const unit = parseUnit(text)
const service = unit.get('Service')!
const one = (key: string) => {
  const values = service.get(key)
  expect({ key, count: values?.length }).toEqual({ key, count: 1 })
  return values![0]!
}
/** Environment= as variables (KEY=value words; the unit quotes none). */
const unitEnv = (): Record<string, string> =>
  Object.fromEntries(
    (service.get('Environment') ?? [])
      .flatMap((line) => line.split(/\s+/))
      .map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]),
  )
const seconds = (value: string) => {
  const m = /^(\d+)(s|min)?$/.exec(value)
  if (!m) throw new Error(`not a duration this test reads: ${value}`)
  return Number(m[1]) * (m[2] === 'min' ? 60 : 1)
}

skipIf(why.sqlitePass).describe('deploy/conduit.service', () => {
  test('runs the installed binary as its own user, the SQLite database in its state directory, restarted whenever it stops', () => {
    expect(one('ExecStart')).toBe('/usr/local/bin/conduit serve')
    const user = service.get('DynamicUser')?.[0] === 'yes' ? 'dynamic' : one('User')
    expect(['root', '0', '']).not.toContain(user)
    expect(one('StateDirectory')).toBe('conduit')
    expect(unitEnv().DATABASE_PATH).toBe('/var/lib/conduit/conduit.db')
    expect(one('WorkingDirectory')).toBe('/var/lib/conduit')
    // a clean stop on SIGHUP exits 0, and a database down at boot fails every start for a while
    expect(one('Restart')).toBe('always')
    // a mistake in the settings (status 2) is not restarted for ever: the unit fails
    expect(one('RestartPreventExitStatus')).toBe('2')
    expect(unit.get('Unit')!.get('StartLimitIntervalSec')).toEqual(['0'])
    expect(one('EnvironmentFile')).toBe('-/etc/conduit/conduit.env')
    // every variable it sets is one the binary reads, with a value it accepts
    for (const key of Object.keys(unitEnv())) expect(Object.keys(environment)).toContain(key)
    expect(() => loadConfig(unitEnv())).not.toThrow()
  })

  test('gives a graceful stop the time it takes: TimeoutStopSec above the delay, the drain and the close, up to a 10 s delay', () => {
    expect(one('KillSignal')).toBe('SIGTERM')
    expect(one('KillMode')).toBe('mixed') // `serve --workers N`: the first process passes SIGTERM on
    const stopMs = seconds(one('TimeoutStopSec')) * 1000
    for (const delay of [Number(unitEnv().SHUTDOWN_DELAY_SECONDS ?? 0), 10]) {
      const needed = hardDeadlineMs({ shutdownDelayMs: delay * 1000, shutdownGraceMs: defaults.shutdownGraceMs })
      expect({ delay, fits: needed < stopMs }).toEqual({ delay, fits: true })
    }
  })

  test('is hardened: no privileges, a read-only system, no home, no devices, its own /tmp, few address families and system calls', () => {
    const expected: Record<string, string> = {
      NoNewPrivileges: 'yes',
      CapabilityBoundingSet: '',
      ProtectSystem: 'strict',
      ProtectHome: 'yes',
      PrivateTmp: 'yes',
      PrivateDevices: 'yes',
      ProtectKernelTunables: 'yes',
      ProtectKernelModules: 'yes',
      ProtectKernelLogs: 'yes',
      ProtectControlGroups: 'yes',
      RestrictAddressFamilies: 'AF_INET AF_INET6 AF_UNIX',
      RestrictNamespaces: 'yes',
      RestrictSUIDSGID: 'yes',
      LockPersonality: 'yes',
    }
    for (const [key, value] of Object.entries(expected)) expect({ key, value: one(key) }).toEqual({ key, value })
    expect(service.get('SystemCallFilter')).toContain('@system-service')
    // JavaScriptCore's JIT writes machine code and runs it: W^X memory would stop the service at start
    expect(service.has('MemoryDenyWriteExecute')).toBe(false)
    expect(text).toMatch(/MemoryDenyWriteExecute[\s\S]*needs memory both writable and\s*(#\s*)?executable/)
  })

  skipIf(noAnalyze).test('systemd-analyze verify finds nothing to say about it', () => {
    // verify wants the unit among the system's and its ExecStart present: a scratch root holds both
    const root = tempDir('conduit-systemd-')
    mkdirSync(join(root, 'etc/systemd/system'), { recursive: true })
    mkdirSync(join(root, 'usr/local/bin'), { recursive: true })
    mkdirSync(join(root, 'usr/lib/systemd'), { recursive: true })
    if (existsSync(SYSTEM_UNITS)) cpSync(SYSTEM_UNITS, join(root, 'usr/lib/systemd/system'), { recursive: true })
    writeFileSync(join(root, 'usr/local/bin/conduit'), '#!/bin/sh\n')
    chmodSync(join(root, 'usr/local/bin/conduit'), 0o755)
    const installed = join(root, 'etc/systemd/system/conduit.service')
    writeFileSync(installed, text)
    const r = Bun.spawnSync({ cmd: [analyze!, 'verify', `--root=${root}`, '--man=no', installed], stdout: 'pipe', stderr: 'pipe' })
    expect({ code: r.exitCode, out: `${r.stdout}${r.stderr}`.trim() }).toEqual({ code: 0, out: '' })
  })

  skipIf(noAnalyze).test('systemd-analyze security rates its exposure OK (2.0 or less of 10)', () => {
    const r = Bun.spawnSync({ cmd: [analyze!, 'security', '--offline=yes', '--no-pager', UNIT], stdout: 'pipe', stderr: 'pipe' })
    const level = /Overall exposure level for conduit\.service: ([\d.]+)/.exec(r.stdout.toString())
    expect({ code: r.exitCode, found: Boolean(level) }).toEqual({ code: 0, found: true })
    expect(Number(level![1])).toBeLessThanOrEqual(2)
  })

  test('its command line and environment start the binary, which serves and stops on SIGTERM within TimeoutStopSec', async () => {
    const [, ...args] = one('ExecStart').split(/\s+/)
    const state = tempDir('conduit-state-')
    const env = {
      ...unitEnv(),
      DATABASE_PATH: join(state, 'conduit.db'),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'error',
      PATH: process.env.PATH ?? '/usr/bin:/bin',
    }
    const server = await startServer(binary(), { exactEnv: env, args })
    expect((await api(server.url, 'GET', '/api/tags')).status).toBe(200)
    await register(server.url)
    const stopped = await server.stop('SIGTERM', seconds(one('TimeoutStopSec')) * 1000)
    expect(stopped).toMatchObject({ code: 0, timedOut: false })
    expect(readdirSync(state)).toContain('conduit.db')
  }, 60_000)
})
