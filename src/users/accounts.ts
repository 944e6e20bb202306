import type { Account, AccountCounts, AccountSearch } from './store.ts'
import { usernameKey } from '../names.ts'

/**
 * Accounts as the operator sees them (`conduit admin users list|show`): what
 * a search looks for, and the JSON of `--json`, in the API's spelling
 * (camelCase, ISO 8601 times). Never a password hash or a token version.
 */

/** The search text as usernames and emails are stored: it finds either whatever its ASCII case or Unicode spelling. */
export function accountSearch(text: string): AccountSearch {
  const t = text.trim()
  return { nameKey: usernameKey(t), email: t.toLowerCase() }
}

const iso = (ms: number) => new Date(ms).toISOString()

export function accountJson(a: Account) {
  return {
    id: a.id,
    username: a.username,
    email: a.email,
    bio: a.bio,
    image: a.image,
    createdAt: iso(a.created_at),
    locked: a.locked_at !== null,
    lockedAt: a.locked_at === null ? null : iso(a.locked_at),
  }
}

export function accountDetailsJson(a: Account & AccountCounts) {
  const { articles, comments, favorites, followers, following } = a
  return { ...accountJson(a), articles, comments, favorites, followers, following }
}
