import { flat } from '../cache/cache.ts'
import type { AuthorRow } from './store.ts'

/**
 * A profile as JSON up to its `following` value, the same for every viewer:
 * `{"username":…,"bio":…,"image":…,"following":` — the viewer's flag and the
 * closing brace are added per request.
 */
export const profileHead = (u: Pick<AuthorRow, 'username' | 'bio' | 'image'>) =>
  flat(`{"username":${JSON.stringify(u.username)},"bio":${JSON.stringify(u.bio)},"image":${JSON.stringify(u.image)},"following":`)

export const profileJson = (head: string, following: boolean) => `${head}${following}}`

/** What follows an author's profile head inside an article or a comment: the viewer's flag, the profile's brace and its holder's. */
export const authorEnd = (following: boolean): string => (following ? 'true}}' : 'false}}')
