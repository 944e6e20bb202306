import type { Config } from '../config.ts'

/** argon2id with the configured cost (OWASP: 19 MiB, 2 passes). Always async: never block the event loop. */
export function passwordHasher(cost: Config['passwordHash']) {
  const options = { algorithm: 'argon2id' as const, memoryCost: cost.memoryCost, timeCost: cost.timeCost }
  // Compared against when the email is unknown, so a login costs the same
  // whether or not the account exists (no user enumeration by timing).
  let dummy: Promise<string> | undefined
  return {
    hash: (password: string) => Bun.password.hash(password, options),
    verify: (password: string, hash: string) => Bun.password.verify(password, hash),
    async burn(password: string): Promise<false> {
      dummy ??= Bun.password.hash('not a real password', options)
      await Bun.password.verify(password, await dummy)
      return false
    },
  }
}
export type PasswordHasher = ReturnType<typeof passwordHasher>
