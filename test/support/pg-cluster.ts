import { chmodSync, chownSync, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort, run, tempDir } from '../e2e/support.ts'

/**
 * A PostgreSQL server of its own for a test file, for what the shared one
 * cannot show without changing its configuration: password authentication
 * (scram-sha-256) and a pg_hba.conf that admits clients over TLS only
 * (hostssl, a self-signed certificate for 127.0.0.1). Debian's server
 * programs (initdb, pg_ctl) on a free port, its data in a temp directory,
 * fsync off; stopped and removed by stop().
 *
 * initdb refuses to run as root: root runs it as the `postgres` user.
 */
export interface Cluster {
  port: number
  /** the certificate the server presents (its own CA) */
  certificate: string
  /** postgres://ROLE:PASSWORD@127.0.0.1:PORT/DATABASE?PARAMS */
  url(o: { password?: string; database?: string; params?: Record<string, string> }): string
  stop(): Promise<void>
}

export const CLUSTER_PASSWORD = 'cluster-secret-Xq7'

const serverBin = (): string | undefined => {
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin/initdb'))) : []
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0]
  return newest ? join(root, newest, 'bin') : undefined
}

const isRoot = process.getuid?.() === 0

/** uid and gid of the postgres user, for root (initdb will not run as root). */
async function postgresUser(): Promise<{ uid: number; gid: number } | undefined> {
  const uid = await run(['id', '-u', 'postgres'], { timeoutMs: 5_000 }).catch(() => undefined)
  const gid = await run(['id', '-g', 'postgres'], { timeoutMs: 5_000 }).catch(() => undefined)
  if (uid?.code !== 0 || gid?.code !== 0) return undefined
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) }
}

/** Why a private cluster cannot run here, or false when it can (for skipIf). */
export async function clusterMissing(): Promise<string | false> {
  if (!serverBin()) return 'PostgreSQL server programs missing (initdb, /usr/lib/postgresql/*/bin)'
  if (!Bun.which('openssl')) return 'openssl missing (the private cluster needs a certificate)'
  if (isRoot && !(await postgresUser())) return 'as root with no postgres user to run initdb'
  return false
}

export async function startCluster(): Promise<Cluster> {
  const bin = serverBin()!
  const dir = tempDir('conduit-pg-')
  const owner = isRoot ? await postgresUser() : undefined
  const as = owner ? ['setpriv', `--reuid=${owner.uid}`, `--regid=${owner.gid}`, '--clear-groups'] : []
  const data = join(dir, 'data')
  const pwfile = join(dir, 'pw')
  writeFileSync(pwfile, CLUSTER_PASSWORD)
  if (owner) {
    chownSync(dir, owner.uid, owner.gid)
    chownSync(pwfile, owner.uid, owner.gid)
  }
  const step = async (what: string, cmd: string[], timeoutMs = 60_000) => {
    const r = await run([...as, ...cmd], { cwd: dir, timeoutMs, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C' } })
    if (r.code !== 0) throw new Error(`private PostgreSQL cluster: ${what} failed (${r.code}): ${r.stderr}${r.stdout}`)
  }
  await step('initdb', [join(bin, 'initdb'), '-D', data, '-U', 'postgres', '-A', 'scram-sha-256', `--pwfile=${pwfile}`, '--no-sync'])
  const certificate = join(data, 'server.crt')
  await step('openssl', [
    'openssl',
    'req',
    '-new',
    '-x509',
    '-days',
    '2',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    join(data, 'server.key'),
    '-out',
    certificate,
  ])
  chmodSync(join(data, 'server.key'), 0o600)
  // TLS only over TCP, a password always
  writeFileSync(join(data, 'pg_hba.conf'), 'local all all scram-sha-256\nhostssl all all 127.0.0.1/32 scram-sha-256\n')
  if (owner) chownSync(join(data, 'pg_hba.conf'), owner.uid, owner.gid)
  const port = freePort()
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c ssl=on -c fsync=off -c max_connections=20`
  await step('start', [join(bin, 'pg_ctl'), '-D', data, '-l', join(dir, 'log'), '-w', '-t', '30', '-o', options, 'start'])
  return {
    port,
    certificate,
    url({ password, database = 'postgres', params = {} }) {
      const u = new URL(`postgres://127.0.0.1:${port}/${database}`)
      u.username = 'postgres'
      if (password !== undefined) u.password = password
      for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v)
      return u.toString()
    },
    async stop() {
      await step('stop', [join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop'], 30_000).catch(() => {})
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
