import { describe, expect, test } from 'bun:test'
import { SERVER_RUNTIME, serves } from '../../src/cli/runtime.ts'

/** Which command lines start the server, and so run with SERVER_RUNTIME (src/cli/runtime.ts). */
describe('the runtime settings are for the server only', () => {
  test('no command, or serve, with any flags, starts the server', () => {
    for (const args of [[], ['serve'], ['--port', '3000'], ['serve', '--db', 'x.db', '--workers', '2'], ['--db', 'serve'], ['--debug']])
      expect([args, serves(args)]).toEqual([args, true])
  })

  test('other commands, --help and --version do not', () => {
    for (const args of [
      ['migrate'],
      ['admin', 'users', 'list'],
      ['seed', '--articles', '10'],
      ['--help'],
      ['serve', '-h'],
      ['-v'],
      ['version'],
      ['healthcheck'],
    ])
      expect([args, serves(args)]).toEqual([args, false])
  })

  test('it turns FTL off (the measured reason is in the module)', () => {
    expect(SERVER_RUNTIME).toEqual({ BUN_JSC_useFTLJIT: '0' })
  })
})
