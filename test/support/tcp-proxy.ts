import type { Socket, TCPSocketListener } from 'bun'

/**
 * A TCP proxy to a database server, for outage tests: `down()` closes every
 * connection and refuses new ones (the server looks gone), `stall()` keeps
 * every connection open but passes no byte either way and accepts new ones
 * that never answer (a network gone silent), `up()` accepts and passes bytes
 * again (after a stall, the stalled connections are closed: their streams lost
 * bytes), `cutAtCommit()` lets the next `COMMIT` a client sends reach the
 * server, then breaks that connection before any answer comes back (the
 * server commits; the client cannot know). Bytes are otherwise passed
 * through untouched.
 */
export interface TcpProxy {
  port: number
  down(): void
  stall(): void
  up(): void
  cutAtCommit(): void
  close(): void
}

interface Pair {
  client: Socket<Pair>
  upstream?: Socket<{ client: Socket<Pair> }>
  pending: Uint8Array[]
  /** the server's bytes are no longer passed to the client */
  cut?: boolean
}

const COMMIT = Buffer.from('COMMIT')

export function tcpProxy(targetHost: string, targetPort: number): TcpProxy {
  let listener: TCPSocketListener<Pair> | undefined
  let port = 0
  let stalled = false
  let cutting = false
  const open = new Set<Pair>()

  const listen = () => {
    listener = Bun.listen<Pair>({
      hostname: '127.0.0.1',
      port,
      socket: {
        open(client) {
          const pair: Pair = { client, pending: [] }
          client.data = pair
          open.add(pair)
          if (stalled) return
          void Bun.connect<{ client: Socket<Pair> }>({
            hostname: targetHost,
            port: targetPort,
            data: { client },
            socket: {
              open(up) {
                pair.upstream = up
                for (const chunk of pair.pending) up.write(chunk)
                pair.pending = []
              },
              data(up, chunk) {
                if (!stalled && !pair.cut) up.data.client.write(chunk)
              },
              close(up) {
                up.data.client.end()
              },
              error(up) {
                up.data.client.end()
              },
            },
          }).catch(() => client.end())
        },
        data(client, chunk) {
          const pair = client.data
          if (stalled) return
          if (cutting && pair.upstream && Buffer.from(chunk).includes(COMMIT)) {
            cutting = false
            pair.cut = true
            pair.upstream.write(chunk)
            // the server has it and commits; its answer is dropped, then the connection broken
            setTimeout(() => {
              pair.client.terminate()
              pair.upstream?.end()
            }, 300)
            return
          }
          if (pair.upstream) pair.upstream.write(chunk)
          else pair.pending.push(new Uint8Array(chunk))
        },
        close(client) {
          client.data.upstream?.end()
          open.delete(client.data)
        },
        error(client) {
          client.data.upstream?.end()
          open.delete(client.data)
        },
      },
    })
    port = listener.port
  }
  listen()

  return {
    get port() {
      return port
    },
    down() {
      listener?.stop(true)
      listener = undefined
      for (const pair of open) {
        pair.upstream?.terminate()
        pair.client.terminate()
      }
      open.clear()
    },
    stall() {
      stalled = true
    },
    cutAtCommit() {
      cutting = true
    },
    up() {
      if (stalled) {
        stalled = false
        for (const pair of open) {
          pair.upstream?.terminate()
          pair.client.terminate()
        }
        open.clear()
      }
      if (!listener) listen()
    },
    close() {
      this.down()
    },
  }
}
