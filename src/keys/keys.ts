/**
 * Dependency keys: the names under which writes announce what they changed
 * and cached values record what they were built from (see versions.ts).
 * Each write's keys are written to the change log in its own transaction, so
 * every instance (and every worker process) drops exactly what the write
 * changed. Keys are numbers (no string per key in memory, cheap to compare):
 * a kind and an id, or a kind and the hash of a tag or a normalised username.
 *
 * Which write changes what:
 * - favorite / unfavorite: the article (its count), the favoriter's
 *   favorites (their `favorited` flags, not their feed), the favoriter's
 *   `favorited=` lists;
 * - follow / unfollow: the viewer's follows (`following` flags and feed);
 * - comment added / deleted: that article's comment list;
 * - profile edit: that user (profiles, author parts, tokens); a new username
 *   also the author and favorited lists under both names;
 * - new article: the newest-first list, its author's followers' feeds, its
 *   author's and its tags' lists, the tag list;
 * - article edit: the article; a new slug also its address; changed tags
 *   also those tags' lists and the tag list;
 * - article deleted: the article, its address, its comments, every list
 *   (it may sit in anyone's `favorited=` list) and the tag list.
 * No write changes another article's content.
 */
/** A key is a number: its kind times 2^32, plus an id, or plus a 32-bit hash of a name. */
export type Key = number
const KIND = 2 ** 32
const id =
  (kind: number) =>
  (n: number): Key =>
    kind * KIND + n
// a hash collision only ever drops more than needed, never less
const named =
  (kind: number) =>
  (name: string): Key =>
    kind * KIND + Bun.hash.crc32(name)

export const keys = {
  /** an article's content and counts (its text, tags, favoritesCount) */
  article: id(1),
  /**
   * an article's address: that it exists at its slug. What only needs the
   * article found at a URL (the slug's id, its comment list) depends on this,
   * not on `article`: a favorite, which changes the count, leaves it be.
   */
  slugOf: id(13),
  user: id(2),
  /** a viewer's follows: the `following` flags they see, their feed */
  viewer: id(3),
  /** a viewer's favorites: the `favorited` flags they see */
  favoritesOf: id(12),
  comments: id(4),
  /** the articles of one author (by id): the feeds of their followers */
  articlesBy: id(5),
  byTag: named(6),
  byAuthor: named(7),
  favoritedBy: named(8),
  /** the newest-first list of all articles */
  newest: 9 * KIND,
  /** every list of articles (a deletion may touch any of them) */
  anyList: 10 * KIND,
  tags: 11 * KIND,
} as const

/**
 * The last key of every change-log row this version writes: its writer bumps
 * `slugOf` itself. A row without it comes from an earlier version (during a
 * rolling upgrade), which bumped `article` for an article's address too (a
 * deletion, a new slug): each of its articles' addresses is bumped with it.
 */
const ADDRESSES_MARKED = 14 * KIND
const ARTICLE = keys.article(0)

/** A write's keys as its change-log row holds them. */
export const logRow = (changed: readonly Key[]): string => `${changed.join(' ')} ${ADDRESSES_MARKED}`

/** The keys a change-log row changed (see ADDRESSES_MARKED). */
export function fromLog(row: string): Key[] {
  const out = row.split(' ').map(Number)
  if (out[out.length - 1] === ADDRESSES_MARKED) {
    out.pop()
    return out
  }
  for (let i = 0, n = out.length; i < n; i++) {
    const k = out[i]!
    if (k >= ARTICLE && k < ARTICLE + KIND) out.push(keys.slugOf(k - ARTICLE))
  }
  return out
}

/** The keys a new article changes. */
export function articleCreated(author: { id: number; usernameKey: string }, tags: readonly string[]): Key[] {
  return [keys.newest, keys.articlesBy(author.id), keys.byAuthor(author.usernameKey), keys.tags, ...tags.map(keys.byTag)]
}

/** The keys an article edit changes; `moved`: it has a new slug; `tagsChanged`: tags removed or added. */
export function articleEdited(id: number, moved: boolean, tagsChanged: readonly string[]): Key[] {
  const out: Key[] = [keys.article(id)]
  if (moved) out.push(keys.slugOf(id))
  if (tagsChanged.length) out.push(keys.tags, ...tagsChanged.map(keys.byTag))
  return out
}

export function articleDeleted(id: number): Key[] {
  return [keys.article(id), keys.slugOf(id), keys.comments(id), keys.anyList, keys.newest, keys.tags]
}

export function favoriteChanged(articleId: number, userId: number, userKey: string): Key[] {
  return [keys.article(articleId), keys.favoritesOf(userId), keys.favoritedBy(userKey)]
}

export function userChanged(id: number, renamed?: { from: string; to: string }): Key[] {
  const out: Key[] = [keys.user(id)]
  if (renamed) {
    for (const name of [renamed.from, renamed.to]) out.push(keys.byAuthor(name), keys.favoritedBy(name))
  }
  return out
}

/** The symmetric difference of two tag sets: the tags whose lists an edit changed. */
export function tagsDiff(before: readonly string[], after: readonly string[]): string[] {
  const a = new Set(before)
  const b = new Set(after)
  return [...before.filter((t) => !b.has(t)), ...after.filter((t) => !a.has(t))]
}
