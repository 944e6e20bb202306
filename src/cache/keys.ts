/**
 * Dependency keys: the names under which writes announce what they changed
 * and cached values record what they were built from (see versions.ts).
 * Each write's keys are written to the change log in its own transaction, so
 * every instance (and every worker process) drops exactly what the write
 * changed. Keys name ids or normalised usernames, never free text longer than
 * a tag (40 characters).
 *
 * Which write changes what:
 * - favorite / unfavorite: the article (its count), the viewer's relations,
 *   the favoriter's `favorited=` lists;
 * - follow / unfollow: the viewer's relations (flags and feed);
 * - comment added / deleted: that article's comment list;
 * - profile edit: that user (profiles, author parts, tokens); a new username
 *   also the author and favorited lists under both names;
 * - new article: the newest-first list, its author's followers' feeds, its
 *   author's and its tags' lists, the tag list;
 * - article edit: the article; changed tags also those tags' lists and the
 *   tag list;
 * - article deleted: the article, its comments, and every list (it may sit in
 *   anyone's `favorited=` list).
 * No write changes another article's content.
 */
export const keys = {
  article: (id: number) => `a${id}`,
  user: (id: number) => `u${id}`,
  /** a viewer's follows and favorites: the flags they see, their feed */
  viewer: (id: number) => `v${id}`,
  comments: (articleId: number) => `c${articleId}`,
  /** the newest-first list of all articles */
  newest: 'l',
  /** the articles of one author (by id): the feeds of their followers */
  articlesBy: (authorId: number) => `f${authorId}`,
  /** every list of articles (a deletion may touch any of them) */
  anyList: 'L',
  byTag: (tag: string) => `lt:${tag}`,
  byAuthor: (usernameKey: string) => `la:${usernameKey}`,
  favoritedBy: (usernameKey: string) => `lf:${usernameKey}`,
  tags: 'T',
} as const

/** The keys a new article changes. */
export function articleCreated(author: { id: number; usernameKey: string }, tags: readonly string[]): string[] {
  return [keys.newest, keys.articlesBy(author.id), keys.byAuthor(author.usernameKey), keys.tags, ...tags.map(keys.byTag)]
}

/** The keys an article edit changes; `tagsChanged`: tags removed or added. */
export function articleEdited(id: number, tagsChanged: readonly string[]): string[] {
  const out = [keys.article(id)]
  if (tagsChanged.length) out.push(keys.tags, ...tagsChanged.map(keys.byTag))
  return out
}

export function articleDeleted(id: number): string[] {
  return [keys.article(id), keys.comments(id), keys.anyList, keys.newest, keys.tags]
}

export function favoriteChanged(articleId: number, userId: number, userKey: string): string[] {
  return [keys.article(articleId), keys.viewer(userId), keys.favoritedBy(userKey)]
}

export function userChanged(id: number, renamed?: { from: string; to: string }): string[] {
  const out = [keys.user(id)]
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
