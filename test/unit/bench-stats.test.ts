import { describe, expect, test } from 'bun:test'
import { median, medianInterval, withInterval } from '../../bench/stats.ts'

describe('bench statistics (bench/stats.ts)', () => {
  test('median: the middle value, the upper middle for an even count', () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 3, 2])).toBe(3)
    expect(() => median([])).toThrow()
  })

  test('the interval of identical values is that value', () => {
    expect(medianInterval([1.02, 1.02, 1.02, 1.02])).toEqual([1.02, 1.02])
  })

  test('the interval holds the median, lies within the values, and is the same for the same figures', () => {
    const xs = [0.83, 0.91, 0.95, 0.97, 0.99, 1.0, 1.01, 1.03, 1.08, 1.35]
    const [low, high] = medianInterval(xs)
    expect(low).toBeLessThanOrEqual(median(xs))
    expect(high).toBeGreaterThanOrEqual(median(xs))
    expect(low).toBeGreaterThanOrEqual(0.83)
    expect(high).toBeLessThanOrEqual(1.35)
    expect(low).toBeLessThan(high)
    expect(medianInterval(xs)).toEqual([low, high])
  })

  test('more rounds of the same spread give a narrower interval', () => {
    const spread = [0.9, 0.95, 1.0, 1.05, 1.1]
    const few = medianInterval(spread)
    const many = medianInterval(Array.from({ length: 8 }, () => spread).flat())
    expect(many[1] - many[0]).toBeLessThan(few[1] - few[0])
  })

  test('a run wholly below a bound has its interval below it', () => {
    const [, high] = medianInterval([0.9, 0.91, 0.92, 0.93, 0.94, 0.95, 0.92, 0.93])
    expect(high).toBeLessThan(0.97)
    expect(withInterval([1, 1, 1])).toBe('1.000 [90 % interval 1.000-1.000]')
  })
})
