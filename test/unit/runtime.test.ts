import { describe, expect, test } from 'bun:test'
import { CONCURRENT_GC_OFF, FTL_OFF, LEAN_COLLECTOR, runtimeFor, serves } from '../../src/cli/runtime.ts'

/** Which command lines start the server, and so run with the settings runtimeFor adds (src/cli/runtime.ts). */
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

  test('it turns FTL and the concurrent collector off, and sets the lean collector only when asked (the measured reasons are in the module)', () => {
    const always = { BUN_JSC_useFTLJIT: '0', BUN_JSC_useConcurrentGC: '0' }
    expect(runtimeFor({ PATH: '/usr/bin' })).toEqual(always)
    for (const off of ['false', '0', 'no', 'off', 'maybe', '']) expect([off, runtimeFor({ LEAN_MEMORY: off })]).toEqual([off, always])
    for (const on of ['true', '1', 'YES', ' on '])
      expect([on, runtimeFor({ LEAN_MEMORY: on })]).toEqual([
        on,
        {
          BUN_JSC_useFTLJIT: '0',
          BUN_JSC_useConcurrentGC: '0',
          BUN_JSC_heapGrowthFunctionThresholdInMB: '1073741',
          BUN_JSC_smallHeapGrowthFactor: '2',
          BUN_JSC_minEdenToOldGenerationRatio: '0.4',
        },
      ])
  })
})

describe('an operator’s runtime variables', () => {
  const lean = { LEAN_MEMORY: 'true' }

  test('one of a group set: that group is left to the operator, the others are added', () => {
    expect(runtimeFor({ ...lean, BUN_JSC_useFTLJIT: '1' })).toEqual({ ...CONCURRENT_GC_OFF, ...LEAN_COLLECTOR })
    expect(runtimeFor({ BUN_JSC_useConcurrentGC: '1' })).toEqual(FTL_OFF)
    // a growth factor of 1.5 with the 40 % ratio would make every other collection a full one
    expect(runtimeFor({ ...lean, BUN_JSC_smallHeapGrowthFactor: '1.5' })).toEqual({ ...FTL_OFF, ...CONCURRENT_GC_OFF })
    expect(runtimeFor({ ...lean, BUN_JSC_minEdenToOldGenerationRatio: '0.3' })).toEqual({ ...FTL_OFF, ...CONCURRENT_GC_OFF })
  })

  test('all set: nothing is added, so nothing is relaunched', () => {
    expect(runtimeFor({ BUN_JSC_useFTLJIT: '1', BUN_JSC_useConcurrentGC: '1' })).toEqual({})
    expect(
      runtimeFor({ ...lean, ...FTL_OFF, ...CONCURRENT_GC_OFF, ...LEAN_COLLECTOR, BUN_JSC_minEdenToOldGenerationRatio: '0.35' }),
    ).toEqual({})
  })
})
