import { serverOrigin } from '../../http/url.ts'
import type { Command } from '../command.ts'

export const healthcheckCommand: Command = {
  name: 'healthcheck',
  usage: '[--port N] [--host ADDR]',
  summary: ['exit 0 when the local server answers /health'],
  args: 0,
  async run({ config }) {
    // a server bound to every address answers on the loopback one
    const url = `${serverOrigin(config.host, config.port, '127.0.0.1')}/health`
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(3000) })
      if (res.ok) return 0
      console.error(`healthcheck: ${url} answered ${res.status}`)
    } catch (e) {
      console.error(`healthcheck: ${url} unreachable (${(e as Error).message})`)
    }
    return 1
  },
}
