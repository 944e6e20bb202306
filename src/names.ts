/**
 * How usernames compare (docs/API.md, "Validation"): the spelling stored, and
 * the key uniqueness and every lookup use. A leaf: the users feature checks
 * names by these, the other features find users by them, and SQLite's
 * migration 002 filled the keys of earlier accounts with them.
 */

/** The stored spelling: NFKC. */
export const normalizeUsername = (name: string): string => name.normalize('NFKC')

/** The form uniqueness and lookups use: NFKC with ASCII letters lower-cased. */
export function usernameKey(name: string): string {
  const n = name.normalize('NFKC')
  return /[A-Z]/.test(n) ? n.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : n
}
