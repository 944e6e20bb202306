import { passwordHasher } from '../auth/password.ts'
import type { Caches } from '../cache/caches.ts'
import type { Config } from '../config.ts'
import type { Logger } from '../log.ts'
import { perBackend, type Store } from '../db/store.ts'
import { userRoutes } from './routes.ts'
import { postgresUserReads, postgresUserSql } from './postgres.ts'
import { sqliteUserReads, sqliteUserSql } from './sqlite.ts'
import { loginThrottle, MAX_THROTTLE_ROWS, registrationThrottle } from './throttle.ts'
import { postgresThrottle } from './throttle-postgres.ts'
import { sqliteThrottle } from './throttle-sqlite.ts'
import { tokens as createTokens } from './tokens.ts'
import { userWrites } from './writes.ts'

/** Accounts on the store's backend: their SQL reads, as the other features' `sql`, and writes (the policies of writes.ts). The admin commands use these alone. */
export function usersOn(store: Store) {
  return perBackend(store.connection, {
    sqlite: (c) => ({ sql: sqliteUserReads(c.db), writes: userWrites(c.writes(sqliteUserSql(c.db))) }),
    postgres: (c) => ({ sql: postgresUserReads(c.sql), writes: userWrites(c.writes(postgresUserSql)) }),
  })
}

/** The login and registration throttles' windows on the store's backend. */
export const throttleOn = (store: Store) =>
  perBackend(store.connection, { sqlite: (c) => sqliteThrottle(c.db), postgres: (c) => postgresThrottle(c.sql) })

interface Deps {
  store: Store
  caches: Caches
  config: Config
  /** the token signing secret (config.jwtSecret, or the one kept in the database) */
  secret: string
  /** the client's address: the socket's peer, or the proxy's word for it (TRUST_PROXY) */
  clientAddress(request: Request): string
  /** where a throttle says it engaged */
  logger: Logger
}

/**
 * Users and authentication: registration, login, the current user, tokens
 * (issued and checked for every route), and the login and registration
 * throttles, whose expired windows the store's housekeeping sweeps.
 */
export function usersFeature({ store, caches, config, secret, clientAddress, logger }: Deps) {
  const { sql, writes } = usersOn(store)
  const throttle = throttleOn(store)
  store.addMaintenance(() => throttle.purge(Date.now(), MAX_THROTTLE_ROWS))
  const tokens = createTokens(secret, config.tokenTtlSeconds, sql, caches)
  const loginGuard = loginThrottle(config.loginThrottle, throttle, logger)
  const registrationGuard = registrationThrottle(config.registrationThrottle, throttle, logger)
  const routes = userRoutes({
    sql,
    writes,
    tokens,
    passwords: passwordHasher(config.passwordHash),
    loginGuard,
    registrationGuard,
    clientAddress,
  })
  return { routes, sql, writes, tokens, throttles: { login: loginGuard.stats, registration: registrationGuard.stats } }
}
