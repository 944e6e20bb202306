import { describe, expect, test } from 'bun:test'
import type { Awaitable } from '../../src/db/types.ts'
import { runAsync, runSync, type Steps, wait } from '../../src/db/steps.ts'

/** Steps that add what two operations answer, recording the order things happened in. */
function* sum(log: string[], a: () => Awaitable<number>, b: () => Awaitable<number>): Steps<number> {
  log.push('start')
  const x = yield* wait(a())
  log.push(`a=${x}`)
  const y = yield* wait(b())
  log.push(`b=${y}`)
  return x + y
}

describe('runSync', () => {
  test('hands each answer back to the steps and returns their result, all before it returns', () => {
    const log: string[] = []
    expect(
      runSync(
        sum(
          log,
          () => 2,
          () => 3,
        ),
      ),
    ).toBe(5)
    expect(log).toEqual(['start', 'a=2', 'b=3'])
  })

  test('an operation that throws unwinds the steps through their own catch and finally', () => {
    const log: string[] = []
    const steps = function* (): Steps<string> {
      try {
        yield* wait(1)
        yield* wait<number>(
          (() => {
            throw new Error('constraint')
          })(),
        )
        return 'not reached'
      } catch (e) {
        log.push(`caught ${(e as Error).message}`)
        return 'recovered'
      } finally {
        log.push('finally')
      }
    }
    expect(runSync(steps())).toBe('recovered')
    expect(log).toEqual(['caught constraint', 'finally'])
  })

  test('a promise is a bug: thrown into the steps (their finally runs), never awaited', () => {
    const log: string[] = []
    const steps = function* (): Steps<number> {
      try {
        return yield* wait(Promise.resolve(1))
      } finally {
        log.push('finally')
      }
    }
    expect(() => runSync(steps())).toThrow('SQLite steps must answer synchronously')
    expect(log).toEqual(['finally'])
  })

  test('a rejected promise among the steps does not surface as an unhandled rejection', () => {
    // in a process of its own: the test runner keeps unhandled rejections from process.on
    const script = `
      const { runSync, wait } = await import(${JSON.stringify(`${import.meta.dir}/../../src/db/steps.ts`)})
      process.on('unhandledRejection', (e) => console.log('unhandled', String(e)))
      try { runSync(wait(Promise.reject(new Error('late')))) } catch (e) { console.log('thrown') }
      await Bun.sleep(20)`
    const run = Bun.spawnSync({ cmd: [process.execPath, '--eval', script], stdout: 'pipe', stderr: 'pipe' })
    expect(`${run.stdout}${run.stderr}`.trim()).toBe('thrown')
  })

  test('steps that return at once run without a yield', () => {
    // biome-ignore lint/correctness/useYield: steps without an operation
    const none = function* (): Steps<string> {
      return 'done'
    }
    expect(runSync(none())).toBe('done')
  })
})

describe('runAsync', () => {
  test('awaits each operation before the next step runs', async () => {
    const log: string[] = []
    const later = (v: number) => new Promise<number>((resolve) => setTimeout(() => resolve(v), 5))
    const result = runAsync(
      sum(
        log,
        () => later(2),
        () => later(3),
      ),
    )
    // the first step ran synchronously; the rest waits for the operations
    expect(log).toEqual(['start'])
    expect(await result).toBe(5)
    expect(log).toEqual(['start', 'a=2', 'b=3'])
  })

  test('takes plain values too (the same steps as on SQLite)', async () => {
    const log: string[] = []
    expect(
      await runAsync(
        sum(
          log,
          () => 2,
          () => Promise.resolve(3),
        ),
      ),
    ).toBe(5)
    expect(log).toEqual(['start', 'a=2', 'b=3'])
  })

  test('throws a rejection into the steps where they wait: they may catch it and go on', async () => {
    const log: string[] = []
    const steps = function* (): Steps<string> {
      try {
        yield* wait(Promise.reject(new Error('deadlock')))
        log.push('not reached')
      } catch (e) {
        log.push(`caught ${(e as Error).message}`)
      }
      const v = yield* wait(Promise.resolve('after'))
      return v
    }
    expect(await runAsync(steps())).toBe('after')
    expect(log).toEqual(['caught deadlock'])
  })

  test('a rejection the steps do not catch rejects the run, after their finally', async () => {
    const log: string[] = []
    const steps = function* (): Steps<number> {
      try {
        return yield* wait<number>(Promise.reject(new Error('unique')))
      } finally {
        log.push('finally')
      }
    }
    await expect(runAsync(steps())).rejects.toThrow('unique')
    expect(log).toEqual(['finally'])
  })

  test('an error thrown by the steps themselves rejects the run', async () => {
    const steps = function* (): Steps<number> {
      yield* wait(Promise.resolve(1))
      throw new Error('forbidden')
    }
    await expect(runAsync(steps())).rejects.toThrow('forbidden')
  })
})
