/**
 * The upper bound: a minimal Bun.serve that answers every request with one
 * fixed response — the status, headers and body bytes the real server gave
 * for the endpoint being measured. The harness sets that response before each
 * measurement with PUT /__bench/response {status, headers, body (base64)}.
 *
 *   bun bench/bound.ts <port>
 */
const port = Number(process.argv[2] ?? 0)

let status = 200
let headers = new Headers()
let body = new Uint8Array(0)

interface Canned {
  status: number
  headers: [string, string][]
  body: string
}

const server = Bun.serve({
  port,
  hostname: '127.0.0.1',
  routes: {
    '/__bench/response': {
      PUT: async (req) => {
        const c = (await req.json()) as Canned
        status = c.status
        headers = new Headers(c.headers)
        body = new Uint8Array(Buffer.from(c.body, 'base64'))
        return new Response(null, { status: 204 })
      },
    },
  },
  fetch: () => new Response(body, { status, headers }),
})

console.log(`bound listening on ${server.url}`)
process.on('SIGTERM', () => {
  void server.stop(true).then(() => process.exit(0))
})
