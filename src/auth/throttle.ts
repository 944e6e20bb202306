import type { Config } from '../config.ts'
import { HttpError } from '../errors.ts'
import type { LoginGuard } from '../users/routes.ts'

interface Window {
  failures: number
  resetAt: number
}

/** Entries kept per map at most: a flood of made-up emails cannot grow memory without bound. */
const MAX_ENTRIES = 100_000

/**
 * Failed-login throttling, in memory, per instance:
 * - per (account, client address) pair: after `perPair` failures in the
 *   window that pair gets 429 until the window ends — one attacker cannot
 *   keep guessing, and the real owner elsewhere is not locked out;
 * - per account from all addresses (`perAccount`, looser): slows down
 *   guessing distributed over many addresses.
 * Every attempt counts as a failure until it succeeds (then its pair is
 * cleared): a burst of concurrent guesses cannot all slip through while their
 * password checks are still running. Registration is never throttled.
 */
export function loginThrottle(settings: Config['loginThrottle'], now: () => number = Date.now): LoginGuard {
  if (!settings.enabled) return { attempt() {}, succeeded() {} }
  const windowMs = settings.windowSeconds * 1000
  const pairs = new Map<string, Window>()
  const accounts = new Map<string, Window>()
  const pairKey = (email: string, address: string) => `${email}\u0000${address}`

  const current = (map: Map<string, Window>, key: string): Window | undefined => {
    const w = map.get(key)
    if (w && w.resetAt <= now()) {
      map.delete(key)
      return undefined
    }
    return w
  }
  const bump = (map: Map<string, Window>, key: string, by = 1) => {
    const w = current(map, key)
    if (w) {
      w.failures = Math.max(0, w.failures + by)
      return
    }
    if (by < 0) return
    if (map.size >= MAX_ENTRIES) map.delete(map.keys().next().value!) // oldest first (insertion order)
    map.set(key, { failures: 1, resetAt: now() + windowMs })
  }
  const refuse = (w: Window) => {
    const retryAfter = Math.max(1, Math.ceil((w.resetAt - now()) / 1000))
    return new HttpError(429, { login: ['too many failed attempts; try again later'] }, { 'retry-after': String(retryAfter) })
  }

  return {
    attempt(email, address) {
      const key = pairKey(email, address)
      const pair = current(pairs, key)
      if (pair && pair.failures >= settings.perPair) throw refuse(pair)
      const account = current(accounts, email)
      if (account && account.failures >= settings.perAccount) throw refuse(account)
      bump(pairs, key)
      bump(accounts, email)
    },
    succeeded(email, address) {
      pairs.delete(pairKey(email, address))
      bump(accounts, email, -1)
    },
  }
}
