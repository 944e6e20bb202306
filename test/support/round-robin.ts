/**
 * A small round-robin HTTP proxy, as a plain load balancer would be: each
 * request goes to the next backend in turn, so a client's write and its next
 * read land on different instances. It remembers which backend served each
 * request (`served`), so a test can check that they really alternated.
 */
export interface RoundRobin {
  url: string
  served: string[]
  stop(): void
}

export function roundRobin(backends: string[]): RoundRobin {
  let next = 0
  const served: string[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const backend = backends[next++ % backends.length]!
      served.push(backend)
      const url = new URL(request.url)
      const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer()
      const headers = new Headers(request.headers)
      headers.delete('host')
      const res = await fetch(`${backend}${url.pathname}${url.search}`, { method: request.method, headers, body, redirect: 'manual' })
      return new Response(await res.arrayBuffer(), { status: res.status, headers: res.headers })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, served, stop: () => server.stop(true) }
}
