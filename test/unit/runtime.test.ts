import { describe, expect, test } from 'bun:test'
import { CONCURRENT_GC_OFF, FTL_OFF, LEAN_COLLECTOR, runtimeFor, servingProcesses } from '../../src/cli/runtime.ts'

/** Which command lines start the server, and so run with the settings runtimeFor adds (src/cli/runtime.ts). */
describe('the runtime settings are for the server only', () => {
  test('no command, or serve, with any flags, starts the server', () => {
    for (const args of [[], ['serve'], ['--port', '3000'], ['serve', '--db', 'x.db', '--workers', '2'], ['--db', 'serve'], ['--debug']])
      expect([args, servingProcesses(args, {}) > 0]).toEqual([args, true])
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
      expect([args, servingProcesses(args, { WORKERS: '2' })]).toEqual([args, 0])
  })

  test('it turns FTL and the concurrent collector off, and sets the lean collector only when asked (the measured reasons are in docs/PERFORMANCE.md)', () => {
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

describe('a host or container with little memory per serving process', () => {
  const MiB = 2 ** 20
  const always = { ...FTL_OFF, ...CONCURRENT_GC_OFF }
  const lean = { ...LEAN_COLLECTOR, LEAN_MEMORY: 'true' }

  test('under 384 MiB the lean collector, said in LEAN_MEMORY too; under 320 MiB also CACHE_MB=30; from 384 MiB nothing more', () => {
    expect(runtimeFor({}, 256 * MiB)).toEqual({ ...always, ...lean, CACHE_MB: '30' })
    expect(runtimeFor({}, 319 * MiB)).toEqual({ ...always, ...lean, CACHE_MB: '30' })
    expect(runtimeFor({}, 320 * MiB)).toEqual({ ...always, ...lean })
    expect(runtimeFor({}, 383 * MiB)).toEqual({ ...always, ...lean })
    expect(runtimeFor({}, 384 * MiB)).toEqual(always)
    expect(runtimeFor({}, 512 * MiB)).toEqual(always)
    expect(runtimeFor({}, 24 * 1024 * MiB)).toEqual(always)
  })

  test("the operator's LEAN_MEMORY, CACHE_MB or collector variables are kept, each on its own", () => {
    expect(runtimeFor({ LEAN_MEMORY: 'false' }, 256 * MiB)).toEqual({ ...always, CACHE_MB: '30' })
    expect(runtimeFor({ LEAN_MEMORY: 'true' }, 256 * MiB)).toEqual({ ...always, ...LEAN_COLLECTOR, CACHE_MB: '30' })
    expect(runtimeFor({ CACHE_MB: '90' }, 256 * MiB)).toEqual({ ...always, ...lean })
    // one of the collector's variables set: the lean group is left out, and LEAN_MEMORY is not claimed
    expect(runtimeFor({ BUN_JSC_smallHeapGrowthFactor: '3' }, 400 * MiB)).toEqual(always)
  })

  test('the serving processes are --workers, else WORKERS, else 1; a value that is not a count counts as 1', () => {
    expect(servingProcesses([], {})).toBe(1)
    expect(servingProcesses(['serve', '--workers', '4'], {})).toBe(4)
    expect(servingProcesses(['--workers=3'], { WORKERS: '2' })).toBe(3)
    expect(servingProcesses(['serve'], { WORKERS: '2' })).toBe(2)
    for (const bad of ['0', '-1', 'two', '1.5', '']) expect([bad, servingProcesses(['serve', '--workers', bad], {})]).toEqual([bad, 1])
  })
})
