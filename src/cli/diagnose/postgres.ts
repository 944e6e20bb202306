import { isIP } from 'node:net'
import type { ConnectProblem } from '../../db/postgres/client.ts'
import { oneLine } from '../errors.ts'
import { resolves } from './network.ts'

/** What to run or change when PostgreSQL refuses a connection at start-up. */

/** What names the PostgreSQL URL, unless a command says otherwise (FailureContext.urlOption). */
export const URL_OPTION = 'DATABASE_URL or --db'

/**
 * A PostgreSQL connection refused at start-up, as one line naming the URL
 * (its password hidden) and what to run or change. `url` is already redacted.
 */
export async function postgresFailure(problem: ConnectProblem, url: string, option = URL_OPTION): Promise<string> {
  const u = new URL(url)
  const host = u.hostname || 'localhost'
  const port = u.port || '5432'
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`
  const { role, database } = named(u)
  const use = `cannot use the PostgreSQL database ${url}`
  const reach = `cannot reach the PostgreSQL database ${url}`
  switch (problem.kind) {
    case 'no-database': {
      const name = problem.database || database
      // a database to copy from must be there already: an empty one made now is no answer
      if (option === '--from') return `${use}: database "${name}" does not exist on ${where}; check its name in --from`
      return `${use}: database "${name}" does not exist on ${where}; create it (as a role that may create databases): createdb -h ${host} -p ${port} -O ${role} ${shellWord(name)}, or in psql: CREATE DATABASE ${sqlName(name)} OWNER ${sqlName(role)};`
    }
    case 'no-role': {
      const name = problem.role || role
      return `${use}: role "${name}" does not exist on ${where}; create it: createuser -h ${host} -p ${port} --pwprompt ${shellWord(name)}, or in psql: CREATE ROLE ${sqlName(name)} LOGIN PASSWORD '...'; (or name another role in ${option})`
    }
    case 'no-login':
      return `${use}: role "${problem.role || role}" may not log in; allow it in psql: ALTER ROLE ${sqlName(problem.role || role)} LOGIN; (or name another role in ${option})`
    case 'password':
      return `${use}: password authentication failed for role "${problem.role || role}"; check the password in ${option} (URL-encode any @ : / ? # %), or the role's password on the server (ALTER ROLE ... PASSWORD) and its pg_hba.conf method`
    case 'tls-required':
      return `${use}: the server's pg_hba.conf admits role "${problem.role || role}" from this host only over TLS (hostssl); set sslmode=require in the URL (${option}; verify-full, with sslrootcert=CA-FILE, also checks the server's certificate)`
    case 'no-hba-entry':
      return `${use}: the server's pg_hba.conf has no line for role "${problem.role || role}", database "${problem.database || database}" from ${problem.client || 'this host'}; add one on the server (and reload it), or connect as a role it admits`
    case 'tls-unavailable':
      return `${use}: the URL asks for TLS (sslmode) but the server on ${where} does not offer it; set sslmode=disable (or prefer) in the URL (${option}), or turn ssl on in the server's postgresql.conf`
    case 'certificate':
      return `${use}: the server's TLS certificate did not verify (${oneLine(problem.reason)}); name the CA that signed it with sslrootcert=/path/to/ca.crt in ${option}, or use sslmode=require to encrypt without verifying`
    case 'too-many-connections':
      return `${use}: the server on ${where} has no connection left (too many clients); raise its max_connections or lower DATABASE_POOL_MAX`
    case 'refused':
    case 'timeout': {
      if (isIP(host) === 0 && (await resolves(host)) === false) {
        return `${reach}: the host name ${host} does not resolve; check the host in ${option}`
      }
      const what = problem.kind === 'refused' ? 'the connection was refused' : 'no answer within 5 s'
      return `${reach}: ${what}; is PostgreSQL running at ${where} (and listening there: listen_addresses, port, a firewall)? Check the host and port in ${option}`
    }
  }
}

/**
 * What a role refused a privilege needs (SQLSTATE 42501): since PostgreSQL 15 only a database's
 * owner may create tables in its `public` schema, and the migrations create them.
 */
export function privilegeHint(url: string): string {
  const { role, database } = named(new URL(url))
  return `only the database's owner may create its tables (PostgreSQL 15+): in psql as a superuser, ALTER DATABASE ${sqlName(database)} OWNER TO ${sqlName(role)};`
}

/** The role and database a URL names, with libpq's defaults (postgres; the role's name). */
function named(u: URL): { role: string; database: string } {
  const role = decodeURIComponent(u.username) || 'postgres'
  return { role, database: decodeURIComponent(u.pathname.slice(1)) || role }
}

/** A name as psql takes it: bare when it is a plain lower-case identifier, else double-quoted. */
const sqlName = (name: string) => (/^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`)
/** A word as a shell takes it. */
const shellWord = (word: string) => (/^[\w.@%+=:,/-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)

/** An error the PostgreSQL server answered (wrong password, no such database, ...). */
export function isPostgresError(e: unknown): boolean {
  return (e as { name?: unknown } | null)?.name === 'PostgresError'
}
