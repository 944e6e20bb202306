/**
 * Parts of a request URL, found without parsing the whole URL (every request
 * needs them; `new URL` costs more than the answer of a cached GET).
 */

/** Where the path starts: after `scheme://host`. */
const pathStart = (url: string): number => url.indexOf('/', url.indexOf('//') + 2)

/** The path and query (`/api/articles?tag=x`): what a cached answer is kept under (the Host header names no other content). */
export function pathAndQuery(url: string): string {
  const start = pathStart(url)
  return start < 0 ? '/' : url.slice(start)
}

/** The path, without the query. */
export function pathOf(url: string): string {
  const start = pathStart(url)
  if (start < 0) return '/'
  const query = url.indexOf('?', start)
  return url.slice(start, query < 0 ? undefined : query)
}

/** The query, without `?` ('' when there is none). */
export function searchOf(url: string): string {
  const q = url.indexOf('?', Math.max(0, pathStart(url)))
  return q < 0 ? '' : url.slice(q + 1)
}

/**
 * The origin of a server bound to `host`, as one opens it: a wildcard address
 * (0.0.0.0 or ::, which no browser opens) as `wildcard`, an IPv6 address in
 * brackets.
 */
export function serverOrigin(host: string, port: number, wildcard = 'localhost'): string {
  const name = host === '0.0.0.0' || host === '::' || host === '' ? wildcard : host
  return `http://${name.includes(':') ? `[${name}]` : name}:${port}`
}

/** Where the API's routes are. */
export const API_PREFIX = '/api'
/** The probes: liveness (answers while the process runs) and readiness (while it may take traffic). */
export const HEALTH_PATH = '/health'
export const READY_PATH = '/ready'
/** Where Prometheus scrapes (src/metrics/endpoint.ts). */
export const METRICS_PATH = '/metrics'

/** Whether `s` has the path `path` at `at`: the whole path, or followed by `/` or a query. */
export function hasPathAt(s: string, path: string, at = 0): boolean {
  const end = at + path.length
  return s.startsWith(path, at) && (s.length === end || s[end] === '/' || s[end] === '?')
}

/**
 * Whether the request is for the API: a path under API_PREFIX, but not the
 * API's root itself (`/api`, `/api/`), a page about the API (home.ts) that
 * answers without the database, as `/health` does.
 */
export function isApi(url: string): boolean {
  const start = pathStart(url)
  const after = start + API_PREFIX.length
  return hasPathAt(url, API_PREFIX, start) && url[after] === '/' && after + 1 < url.length && url[after + 1] !== '?'
}

/**
 * The router finds the path after the 11th character of the URL (past
 * `http://` and a 4-character host); a shorter Host header (`Host: a`)
 * would make it route one path while the log and the security headers see
 * another, and a request without any Host header (HTTP/1.0, as some health
 * checkers send) has a bare path for a URL. Such a request is answered for
 * the path it names, under a canonical host.
 */
export function canonicalRequest(request: Request): Request {
  const url = request.url
  const scheme = url.indexOf('://')
  const start = scheme < 0 ? 0 : url.indexOf('/', scheme + 3)
  // repeated slashes in the path are one (as nginx merges them): a client whose API URL ends in `/` sends `/api//tags`
  const doubled = start < 0 ? -1 : url.indexOf('//', start)
  const query = doubled < 0 ? -1 : url.indexOf('?', start)
  const merge = doubled >= 0 && (query < 0 || doubled < query)
  if (start >= 11 && !merge) return request
  const rest = start < 0 ? '/' : merge ? mergeSlashes(url.slice(start)) : url.slice(start)
  return new Request(`${start >= 11 ? url.slice(0, start) : 'http://localhost'}${rest}`, request)
}

/** The path's runs of `/` as one; the query as it is. */
function mergeSlashes(pathAndQuery: string): string {
  const q = pathAndQuery.indexOf('?')
  const path = q < 0 ? pathAndQuery : pathAndQuery.slice(0, q)
  return path.replace(/\/{2,}/g, '/') + (q < 0 ? '' : pathAndQuery.slice(q))
}
