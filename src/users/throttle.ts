import { createHash } from 'node:crypto'
import type { Config } from '../config.ts'
import type { Awaitable } from '../db/types.ts'
import { HttpError } from '../errors.ts'
import { type Logger, silentLogger } from '../log.ts'

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
  /** Whether the key has a window that has not ended. */
  open(key: string, now: number): Awaitable<boolean>
  /** Opens the key's window, or moves its end, to `now + windowMs` (a known client, see loginThrottle). */
  renew(key: string, windowMs: number, now: number): Awaitable<void>
  /**
   * Deletes expired windows, then, beyond `maxRows`, those with the fewest
   * hits first (see OVERFLOW_ORDER); the known clients' windows (KNOWN) are
   * kept apart, at most `maxRows` of them too, the soonest to end going first.
   */
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

/**
 * The prefix of a known client's key. Those windows are apart from the
 * others when there are too many: made only by a right password, they are
 * never pushed out by a flood of failures (which would end the exemption
 * they give).
 */
export const KNOWN = 'known'

/**
 * The client a throttle counts: an IPv4 address as it is, also one carried in
 * IPv6 (mapped, NAT64, ...: an address ending in a.b.c.d), and an IPv6
 * address by its /64, which one host commonly holds whole: counted by
 * address, one machine would have 2^64 budgets. A port or brackets a proxy
 * may add are dropped; what does not parse as an address counts as itself.
 */
export function clientOf(address: string): string {
  let a = address.trim()
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(a)
  if (bracketed) a = bracketed[1]!
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(a)) a = a.slice(0, a.lastIndexOf(':'))
  const v4 = /(?:^|:)(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(a)
  if (v4) return v4[1]!
  if (!a.includes(':')) return a
  const bare = a.split('%')[0]! // a zone (fe80::1%eth0) is the host's own business
  const halves = bare.split('::')
  const groups = (part: string | undefined) => (part ? part.split(':') : [])
  const h = groups(halves[0])
  const t = groups(halves[1])
  const all = halves.length === 1 ? h : [...h, ...Array<string>(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t]
  if (halves.length > 2 || all.length !== 8 || !all.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return a
  return `${all
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`
}

/** 128 bits of SHA-256, base64url: the same size whatever the input. */
export const digest = (kind: string, ...parts: string[]) =>
  `${kind}:${createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 22)}`

const secondsUntil = (resetAt: number, now: number) => Math.max(1, Math.ceil((resetAt - now) / 1000))
const refuse = (key: string, message: string, resetAt: number, now: number) =>
  new HttpError(429, { [key]: [message] }, { 'retry-after': String(secondsUntil(resetAt, now)) })
const LOGIN = 'too many failed attempts; try again later'
export const REGISTRATION_REFUSED = 'too many attempts from this address; try again later'

/** A throttle's figures, for /metrics. */
export interface ThrottleStats {
  /** attempts answered 429 */
  refused: number
}

/**
 * A window just filled: an operator sees who is refused, and until when. The
 * client is an address (or an IPv6 /64), never an email; for `account` it is
 * the client whose attempt filled the account's window.
 */
function engaged(
  logger: Logger,
  throttle: string,
  who: Record<string, string | number>,
  w: WindowState,
  now: number,
  windowSeconds: number,
) {
  logger.warn(`${throttle} throttle engaged: further attempts are refused until the window ends`, {
    ...who,
    windowSeconds,
    retryAfterSeconds: secondsUntil(w.resetAt, now),
  })
}

export interface LoginGuard {
  /** Counts an attempt as failed until it succeeds; throws a 429 when this (account, address) may not try now. */
  attempt(email: string, address: string): Promise<void>
  succeeded(email: string, address: string): Promise<void>
  readonly stats: ThrottleStats
}

/** How long a client that logged in to an account stays known to it after its latest login (see loginThrottle). */
export const KNOWN_CLIENT_MS = 30 * 24 * 3600 * 1000

/**
 * Failed-login throttling:
 * - per (account, client) pair: after `perPair` failures in the window that
 *   pair gets 429 until the window ends — one attacker cannot keep guessing,
 *   and the real owner elsewhere is not locked out;
 * - per account from all clients (`perAccount`, looser): slows down guessing
 *   distributed over many addresses. A client that logged in to the account
 *   within KNOWN_CLIENT_MS is exempt (its pair's limit still holds): without
 *   that, anyone who knows an email could lock its owner out by failing from
 *   a few addresses;
 * - per client over all accounts (`perAddress`): one password tried against
 *   many accounts (spraying), each try an argon2 verification. The accounts
 *   a client logged in to are exempt as above, so a busy NAT's users still
 *   reach their own.
 * Every attempt counts as a failure until it succeeds (then its pair is
 * cleared): a burst of concurrent guesses cannot all slip through while their
 * password checks are still running. A client is an address, or an IPv6 /64
 * (clientOf).
 */
export function loginThrottle(
  settings: Config['loginThrottle'],
  store: ThrottleStore,
  logger: Logger = silentLogger,
  now: () => number = Date.now,
): LoginGuard {
  const stats: ThrottleStats = { refused: 0 }
  if (!settings.enabled) return { async attempt() {}, async succeeded() {}, stats }
  const windowMs = settings.windowSeconds * 1000
  const keysOf = (email: string, address: string) => {
    const client = clientOf(address)
    return [digest('pair', email, client), digest('account', email), digest('client', client)] as const
  }
  const knownKey = (email: string, address: string) => digest(KNOWN, email, clientOf(address))
  const refused = (w: WindowState, t: number) => {
    stats.refused++
    return refuse('login', LOGIN, w.resetAt, t)
  }
  return {
    stats,
    async attempt(email, address) {
      const t = now()
      const [pair, account, client] = await store.hit(keysOf(email, address), windowMs, t)
      const refusing = (scope: string, w: WindowState, limit: number) => {
        // refused by the hit that filled the window (counted once in the database, whatever the
        // instance): one line per window, never for an attempt let through (a known client's)
        if (w.hits === limit + 1) engaged(logger, 'login', { scope, client: clientOf(address), limit }, w, t, settings.windowSeconds)
        return refused(w, t)
      }
      if (pair!.hits > settings.perPair) throw refusing('pair', pair!, settings.perPair)
      for (const [scope, w, limit] of [
        ['account', account!, settings.perAccount],
        ['client', client!, settings.perAddress],
      ] as const)
        if (w.hits > limit && !(await store.open(knownKey(email, address), t))) throw refusing(scope, w, limit)
    },
    async succeeded(email, address) {
      const [pair, account, client] = keysOf(email, address)
      await store.reset(pair)
      await store.undo(account)
      await store.undo(client)
      // 30 days from the latest login, not the first
      await store.renew(knownKey(email, address), KNOWN_CLIENT_MS, now())
    },
  }
}

export interface RegistrationGuard {
  /**
   * Counts a registration attempt from `address`, or an email change that met a taken email:
   * both tell whether an email is taken. Throws a 429 past the limit, naming `field`.
   */
  attempt(address: string, field?: 'registration' | 'email'): Promise<void>
  readonly stats: ThrottleStats
}

/** Registrations per client address and window (every attempt counts, taken email or not). */
export function registrationThrottle(
  settings: Config['registrationThrottle'],
  store: ThrottleStore,
  logger: Logger = silentLogger,
  now: () => number = Date.now,
): RegistrationGuard {
  const stats: ThrottleStats = { refused: 0 }
  if (!settings.enabled) return { async attempt() {}, stats }
  const windowMs = settings.windowSeconds * 1000
  return {
    stats,
    async attempt(address, field = 'registration') {
      const t = now()
      const client = clientOf(address)
      const [w] = await store.hit([digest('register', client)], windowMs, t)
      if (w!.hits === settings.perAddress + 1)
        engaged(logger, 'registration', { client, limit: settings.perAddress }, w!, t, settings.windowSeconds)
      if (w!.hits > settings.perAddress) {
        stats.refused++
        throw refuse(field, REGISTRATION_REFUSED, w!.resetAt, t)
      }
    },
  }
}
