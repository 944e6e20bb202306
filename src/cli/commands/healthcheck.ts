import { serverOrigin } from '../../http/url.ts'
import type { Command } from '../command.ts'
import { CliError } from '../errors.ts'

const TIMEOUT_MS = 3000

export const healthcheckCommand: Command = {
  name: 'healthcheck',
  usage: '[--port N] [--host ADDR]',
  summary: ['print ok and exit 0 when the local server answers /health', '(starting, while it waits for its database)'],
  args: 0,
  options: ['port', 'host'],
  async run({ config }) {
    // a server bound to every address answers on the loopback one
    const url = `${serverOrigin(config.host, config.port, '127.0.0.1')}/health`
    let status: number
    let body: string
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) })
      body = await res.text()
      status = res.status
    } catch (e) {
      // the port answers but the process does not: not a wrong port
      if ((e as { name?: string }).name === 'TimeoutError')
        throw new CliError(
          `the server ${url} did not answer within ${TIMEOUT_MS / 1000} s: it is stuck or very busy; one migrating a SQLite database answers nothing until done (see its log)`,
        )
      throw new CliError(
        `cannot reach the server ${url}: ${why(e)}; is conduit running there? Check the port and host in --port/PORT and --host/HOST`,
      )
    }
    if (status !== 200) throw new CliError(`the server ${url} answered ${status}; it is running but not well: see its log`)
    // one line for whoever ran it by hand (Docker's HEALTHCHECK keeps it in the container's health log);
    // alive while it waits for the database too, and says so
    console.log(`${body.includes('"starting"') ? 'starting' : 'ok'} ${url}`)
    return 0
  },
}

/** Why a request got no answer, in words rather than fetch's message. */
function why(e: unknown): string {
  const { code, message } = e as { code?: string; message?: string }
  if (code === 'ECONNREFUSED' || code === 'ConnectionRefused') return 'the connection was refused'
  if (code === 'ENOTFOUND') return 'the host name does not resolve'
  return String(message ?? e)
}
