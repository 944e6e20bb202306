import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { type ErrorLike, reason } from '../errors.ts'

/** What the network tells of a failure to listen, and of a host name. */

/** Bun.serve's bind failures carry `syscall: "listen"` and the errno's code. */
export const isListenError = (e: ErrorLike) => e?.syscall === 'listen'

const HOST_HINT = 'use an address of this machine with --host or HOST (0.0.0.0 for all of them)'

export async function listenFailure(e: ErrorLike, host: string, port: number): Promise<string> {
  const where = `cannot listen on ${host.includes(':') ? `[${host}]` : host}:${port}`
  // Bun reports a host name that does not resolve as EADDRINUSE ("Is port N in
  // use?"): a name is looked up (briefly) before the port gets the blame.
  const named = isIP(host) === 0 ? await resolves(host) : true
  if (named === false) return `${where}: the host name ${host} does not resolve; ${HOST_HINT}`
  switch (e.code) {
    case 'EADDRINUSE':
      return named === true
        ? `${where}: the port is already in use; stop the other server or choose another port with --port or PORT`
        : `${where}: the port is in use or the host name ${host} does not resolve; check --host/HOST and --port/PORT`
    case 'EADDRNOTAVAIL':
      return `${where}: ${host} is not an address of this machine; ${HOST_HINT}`
    case 'EACCES':
    case 'EPERM':
      return `${where}: permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE); choose a port from 1024 up with --port or PORT`
    case 'EAFNOSUPPORT':
      return `${where}: this machine does not support that address family; ${HOST_HINT}`
    default:
      return `${where}: ${reason(e)}; check --host/HOST and --port/PORT`
  }
}

/** Whether a host name resolves; 'unknown' when the resolver does not answer within 2 s. */
export async function resolves(host: string): Promise<boolean | 'unknown'> {
  const timeout = new Promise<'unknown'>((done) => setTimeout(done, 2_000, 'unknown').unref())
  return Promise.race([
    lookup(host).then(
      () => true,
      () => false,
    ),
    timeout,
  ])
}
