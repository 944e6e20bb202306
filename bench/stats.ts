import { mulberry32 } from '../src/random.ts'

/** The middle value (the upper one of the two middles for an even count), as bench/ab.ts has always reported it. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new Error('median of nothing')
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
}

/**
 * A bootstrap interval for the median of `xs`: the median of `resamples`
 * resamples drawn with replacement, their `level` central share. Seeded, so
 * the same figures give the same interval. It says how far the median of this
 * many rounds moves with the rounds the machine happened to give: a bound
 * inside the interval is within the noise of the run, one outside is not.
 */
export function medianInterval(xs: readonly number[], level = 0.9, resamples = 4000, seed = 1): [number, number] {
  const n = xs.length
  if (n === 0) throw new Error('interval of nothing')
  const random = mulberry32(seed)
  const medians = new Array<number>(resamples)
  const sample = new Array<number>(n)
  for (let r = 0; r < resamples; r++) {
    for (let i = 0; i < n; i++) sample[i] = xs[Math.floor(random() * n)]!
    medians[r] = median(sample)
  }
  medians.sort((a, b) => a - b)
  const tail = (1 - level) / 2
  return [medians[Math.floor(tail * (resamples - 1))]!, medians[Math.ceil((1 - tail) * (resamples - 1))]!]
}

/** `median [low-high]` of ratios, to three places. */
export function withInterval(xs: readonly number[]): string {
  const [low, high] = medianInterval(xs)
  return `${median(xs).toFixed(3)} [90 % interval ${low.toFixed(3)}-${high.toFixed(3)}]`
}
