import { createHash } from 'node:crypto'
import type { Config } from '../config.ts'
import type { Awaitable } from '../db/types.ts'
import { HttpError } from '../errors.ts'

/** One window's state after a hit. */
export interface WindowState {
  hits: number
  resetAt: number
}

/**
 * Throttling windows kept in the database, so every process and instance
 * shares one budget. A window starts at its first hit and lasts `windowMs`;
 * keys are fixed-size digests (never an email or an address).
 */
export interface ThrottleStore {
  /** Counts one hit in each key's window, atomically; the states after counting, in order. */
  hit(keys: readonly string[], windowMs: number, now: number): Awaitable<WindowState[]>
  /** Ends a window (a successful login clears its pair). */
  reset(key: string): Awaitable<void>
  /** Takes one hit back (a successful login lowers its account's count). */
  undo(key: string): Awaitable<void>
  /** Deletes expired windows, then, beyond `maxRows`, those with the fewest hits first (see OVERFLOW_ORDER). */
  purge(now: number, maxRows: number): Awaitable<void>
}

/** Windows kept at most: a flood of made-up emails or addresses cannot grow the table without bound. */
export const MAX_THROTTLE_ROWS = 100_000

/**
 * Which windows go first when there are too many: the fewest hits, then the
 * soonest to end. A flood of made-up keys makes windows of one hit each, so
 * it pushes out its own windows, never a lockout (which took many hits).
 */
export const OVERFLOW_ORDER = 'ORDER BY hits, reset_at'

/** 128 bits of SHA-256, base64url: the same size whatever the input. */
export const digest = (kind: string, ...parts: string[]) =>
  `${kind}:${createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 22)}`

const refuse = (key: string, message: string, resetAt: number, now: number) => {
  const retryAfter = Math.max(1, Math.ceil((resetAt - now) / 1000))
  return new HttpError(429, { [key]: [message] }, { 'retry-after': String(retryAfter) })
}
const LOGIN = 'too many failed attempts; try again later'
export const REGISTRATION_REFUSED = 'too many attempts from this address; try again later'

/** A throttle's figures, for /metrics. */
export interface ThrottleStats {
  /** attempts answered 429 */
  refused: number
}

export interface LoginGuard {
  /** Counts an attempt as failed until it succeeds; throws a 429 when this (account, address) may not try now. */
  attempt(email: string, address: string): Promise<void>
  succeeded(email: string, address: string): Promise<void>
  readonly stats: ThrottleStats
}

/**
 * Failed-login throttling:
 * - per (account, client address) pair: after `perPair` failures in the
 *   window that pair gets 429 until the window ends — one attacker cannot
 *   keep guessing, and the real owner elsewhere is not locked out;
 * - per account from all addresses (`perAccount`, looser): slows down
 *   guessing distributed over many addresses.
 * Every attempt counts as a failure until it succeeds (then its pair is
 * cleared): a burst of concurrent guesses cannot all slip through while their
 * password checks are still running.
 */
export function loginThrottle(settings: Config['loginThrottle'], store: ThrottleStore, now: () => number = Date.now): LoginGuard {
  const stats: ThrottleStats = { refused: 0 }
  if (!settings.enabled) return { async attempt() {}, async succeeded() {}, stats }
  const windowMs = settings.windowSeconds * 1000
  const keysOf = (email: string, address: string) => [digest('pair', email, address), digest('account', email)] as const
  return {
    stats,
    async attempt(email, address) {
      const t = now()
      const [pair, account] = await store.hit(keysOf(email, address), windowMs, t)
      const over = pair!.hits > settings.perPair ? pair! : account!.hits > settings.perAccount ? account! : undefined
      if (over) {
        stats.refused++
        throw refuse('login', LOGIN, over.resetAt, t)
      }
    },
    async succeeded(email, address) {
      const [pair, account] = keysOf(email, address)
      await store.reset(pair)
      await store.undo(account)
    },
  }
}

export interface RegistrationGuard {
  /** Counts a registration attempt from `address`; throws a 429 past the limit. */
  attempt(address: string): Promise<void>
  readonly stats: ThrottleStats
}

/** Registrations per client address and window (every attempt counts, taken email or not). */
export function registrationThrottle(
  settings: Config['registrationThrottle'],
  store: ThrottleStore,
  now: () => number = Date.now,
): RegistrationGuard {
  const stats: ThrottleStats = { refused: 0 }
  if (!settings.enabled) return { async attempt() {}, stats }
  const windowMs = settings.windowSeconds * 1000
  return {
    stats,
    async attempt(address) {
      const t = now()
      const [w] = await store.hit([digest('register', address)], windowMs, t)
      if (w!.hits > settings.perAddress) {
        stats.refused++
        throw refuse('registration', REGISTRATION_REFUSED, w!.resetAt, t)
      }
    },
  }
}
