/**
 * bun bench/bare-server.ts MODE PORT: a bare `Bun.serve` that answers every
 * request as the request entry answers a kept body (src/http/entry.ts): 5,000
 * bytes under the shared Headers object of a cached API answer, after looking
 * at the Authorization header. MODE adds one thing to each answer (see
 * bench/bare.ts, which runs two of these against each other).
 */
import { requestIds } from '../src/http/request-id.ts'

export const MODES = {
  plain: 'nothing more',
  id: 'a request id, as the entry makes and sets it (src/http/request-id.ts)',
  'same-id': 'the same id set on every answer (setting a header, without a new string)',
  'id-header': 'an id header present from the start (one header more, nothing set per answer)',
  'new-string': 'a new id string per answer, not sent',
  url: 'reading request.url (what every request needs for its path)',
} as const
export type Mode = keyof typeof MODES

/** Serves MODE on PORT (run as a script; bench/bare.ts only reads MODES). */
function serve(mode: Mode, port: number): void {
  const BODY = new Uint8Array(5_000).fill(0x61)
  const base: Record<string, string> = {
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-resource-policy': 'cross-origin',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    'content-type': 'application/json; charset=utf-8',
    'access-control-allow-origin': '*',
    'access-control-expose-headers': 'X-Request-Id',
  }
  if (mode === 'id-header') base['x-request-id'] = '3f1c9a0b7e2d4c55-1a2b3'
  const headers = new Headers(base)
  const ids = requestIds()
  // what the checks below found, printed at the end: their results are used, so no JIT may drop them
  let seen = 0
  process.on('SIGTERM', () => {
    console.log(`seen ${seen}`)
    process.exit(0)
  })

  Bun.serve({
    port,
    hostname: '127.0.0.1',
    fetch(request) {
      // what the entry reads of every request (a token's header); the result only has to be used
      if (request.headers.get('authorization') === 'x') seen++
      if (mode === 'id') headers.set('x-request-id', ids(request))
      else if (mode === 'same-id') headers.set('x-request-id', '3f1c9a0b7e2d4c55-1a2b3')
      else if (mode === 'new-string') {
        if (ids(request).charCodeAt(3) === 0) seen++
      } else if (mode === 'url') {
        if (request.url.length === 0) seen++
      }
      return new Response(BODY, { headers })
    },
  })
}

if (import.meta.main) {
  const [mode, port] = [process.argv[2] as Mode, Number(process.argv[3])]
  if (!(mode in MODES) || !port) throw new Error(`usage: bun bench/bare-server.ts ${Object.keys(MODES).join('|')} PORT`)
  serve(mode, port)
}
