import { JSON_CONTENT_TYPE } from '../errors.ts'

/**
 * A response from JSON already serialised (a kept answer, a read's composed
 * body, a handler's reply), carrying the headers hooks have set (CORS, security).
 */
export function rawJson(json: string | Uint8Array, set: { headers: unknown; status?: unknown }, status = 200): Response {
  const headers = set.headers as Record<string, string>
  headers['content-type'] = JSON_CONTENT_TYPE
  return new Response(json, { status, headers })
}

/** The body bytes that still fit uWS's cork buffer (16 KiB) beside a page's or an answer's headers. */
const CORK_ROOM = 14 * 1024

/**
 * The body of an answer completed after the process waited on I/O (the change
 * log's read, a database read). Past the request handler's synchronous part the
 * socket is no longer corked, and Bun then sends a response whose body does not
 * fit the cork buffer as one send() per header line (oven-sh/bun#41341): several
 * times the CPU of one under it. As one chunk of a stream, it leaves with its
 * headers in one send(), chunked. Inside the handler a plain body is cheaper.
 */
export function lateBody(body: string | Uint8Array): string | Uint8Array | ReadableStream<Uint8Array | string> {
  const large = typeof body === 'string' ? body.length * 3 > CORK_ROOM && Buffer.byteLength(body) > CORK_ROOM : body.byteLength > CORK_ROOM
  if (!large) return body
  return new ReadableStream({
    start(c) {
      c.enqueue(body)
      c.close()
    },
  })
}
