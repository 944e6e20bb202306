import { type Actor, isAdminOr, type Viewer } from '../auth/actor.ts'
import { articleCreated, articleDeleted, articleEdited, favoriteChanged, keys, tagsDiff } from '../keys/keys.ts'
import { usernameKey } from '../names.ts'
import { type Changed, type Steps, wait, type Writes } from '../db/steps.ts'
import { forbidden, notFound } from '../errors.ts'
import { firstFreeSuffix, RESERVED_SLUGS, slugify } from './slug.ts'
import type { ArticleChanges, NewArticle } from './schemas.ts'
import type { ArticleHead, ArticleWriteSql, WrittenArticle } from './store.ts'

/** Only its author edits an article. */
const mayEdit = (viewer: Viewer, article: { author_id: number }): boolean => viewer.id === article.author_id

/** Its author, or the operator, deletes an article. */
const mayDelete = (actor: Actor, article: { author_id: number }): boolean => isAdminOr(actor, article.author_id)

/**
 * A new title gives a new slug, unless it slugifies like the old title (a fix
 * of case or punctuation keeps the article's address).
 */
const newSlugNeeded = (oldTitle: string, newTitle: string | undefined): newTitle is string =>
  newTitle !== undefined && slugify(newTitle) !== slugify(oldTitle)

/** A slug is taken by an article, or reserved for a route (see RESERVED_SLUGS). */
function* taken(sql: ArticleWriteSql, slug: string): Steps<boolean> {
  return RESERVED_SLUGS.has(slug) || (yield* wait(sql.slugTaken(slug)))
}

/**
 * `base-N` with N from the base's counter, which never hands out a number
 * twice (an old link never lands on another article), started the first time
 * a base is taken twice at the smallest free suffix. One counter upsert,
 * whatever the number of articles sharing the base. Runs under the slug lock
 * (see ArticleWriteSql.lockSlugs), so two writers never choose the same slug.
 */
function* suffixedSlug(sql: ArticleWriteSql, base: string): Steps<string> {
  let n = (yield* wait(sql.slugCounter(base))) ?? firstFreeSuffix(base, yield* wait(sql.suffixedSlugs(base)))
  // the counter's number taken by a title that ends in one ("Weekly 3" is weekly-3): past the
  // whole run at once, in one read, not a statement per number under the lock
  if (yield* taken(sql, `${base}-${n}`)) n = firstFreeSuffix(base, yield* wait(sql.suffixedSlugs(base)), n + 1)
  yield* wait(sql.setSlugCounter(base, n + 1))
  return `${base}-${n}`
}

/** The base slug of a title when free, else the next suffixed one (under the slug lock). */
function* freeSlug(sql: ArticleWriteSql, title: string): Steps<string> {
  const base = slugify(title)
  return (yield* taken(sql, base)) ? yield* suffixedSlug(sql, base) : base
}

function* found(sql: ArticleWriteSql, slug: string): Steps<ArticleHead> {
  const a = yield* wait(sql.find(slug))
  if (!a) throw notFound('article')
  return a
}

/** A new article under the next free slug for its title. */
function* create(sql: ArticleWriteSql, changed: Changed, author: Viewer, a: NewArticle): Steps<WrittenArticle> {
  const tags = a.tagList ?? []
  // recorded first: on PostgreSQL the log row travels with the statements below
  changed(articleCreated(author, tags))
  const { title, description, body } = a
  const row = { title, description, body, tags, author: author.id, now: Date.now() }
  const base = slugify(title)
  // most titles are new: their base slug is free, and one step locks, adds and answers
  let written = RESERVED_SLUGS.has(base) ? null : yield* wait(sql.add({ ...row, slug: base }))
  if (!written) {
    yield* wait(sql.lockSlugs())
    written = yield* wait(sql.add({ ...row, slug: yield* suffixedSlug(sql, base) }))
    // the slug was free under the lock, which is still held
    if (!written) throw new Error('a free slug was taken under the slug lock')
  }
  renamedMeanwhile(changed, author.usernameKey, usernameKey(written.row.username), keys.byAuthor)
  return written
}

/**
 * A write keyed by its user's name (their `author=` or `favorited=` lists)
 * takes the name from the token, which may predate a rename that committed
 * since: the lists under the name the database holds now (read under a lock
 * the rename waits for) are changed too. One more log row, only then.
 */
function renamedMeanwhile(changed: Changed, fromToken: string, now: string, list: (name: string) => number): void {
  if (now !== fromToken) changed([list(now)])
}

/** The author's changes; a new title gives a new slug (see newSlugNeeded). */
function* update(sql: ArticleWriteSql, changed: Changed, viewer: Viewer, slug: string, c: ArticleChanges): Steps<WrittenArticle> {
  const a = yield* found(sql, slug)
  if (!mayEdit(viewer, a)) throw forbidden('article')
  const before = c.tagList ? yield* wait(sql.tagsOf(a.id)) : []
  // the tags before the slug lock, as a creation takes them (on PostgreSQL: locks in one order, no deadlock)
  if (c.tagList) yield* wait(sql.setTags(a.id, c.tagList, true))
  let newSlug = a.slug
  if (newSlugNeeded(a.title, c.title)) {
    yield* wait(sql.lockSlugs())
    newSlug = yield* freeSlug(sql, c.title)
  }
  const { title = null, description = null, body = null } = c
  yield* wait(sql.update(a.id, { slug: newSlug, title, description, body, now: Date.now() }))
  changed(articleEdited(a.id, newSlug !== a.slug, c.tagList ? tagsDiff(before, c.tagList) : []))
  return yield* wait(sql.written(a.id, viewer.id))
}

function* remove(sql: ArticleWriteSql, changed: Changed, actor: Actor, slug: string): Steps<void> {
  const a = yield* found(sql, slug)
  if (!mayDelete(actor, a)) throw forbidden('article')
  yield* wait(sql.remove(a.id))
  changed(articleDeleted(a.id))
}

function* setFavorite(sql: ArticleWriteSql, changed: Changed, user: Viewer, slug: string, on: boolean): Steps<WrittenArticle> {
  const f = yield* wait(sql.setFavorite(user.id, slug, on))
  if (!f) throw notFound('article')
  if (f.changed) {
    changed(favoriteChanged(f.id, user.id, user.usernameKey))
    renamedMeanwhile(changed, user.usernameKey, f.userKey, keys.favoritedBy)
  }
  return yield* wait(sql.written(f.id, user.id))
}

/** The writes of articles on either backend: every decision above, the SQL in `writes`' primitives. */
export function articleWrites(writes: Writes<ArticleWriteSql>) {
  return {
    /** The slug is the next free one for the title's base (see slug.ts). */
    create: (author: Viewer, a: NewArticle) => writes.transaction((sql, changed) => create(sql, changed, author, a), author),
    /** Author only (403), 404 for an unknown slug. */
    update: (viewer: Viewer, slug: string, c: ArticleChanges) =>
      writes.transaction((sql, changed) => update(sql, changed, viewer, slug, c), viewer),
    /** The author or ADMIN (403 for anyone else), 404 for an unknown slug. */
    delete: (actor: Actor, slug: string) => writes.transaction((sql, changed) => remove(sql, changed, actor, slug), actor),
    /** Idempotent; counters move only when a row is really added or removed. */
    setFavorite: (user: Viewer, slug: string, on: boolean) =>
      writes.transaction((sql, changed) => setFavorite(sql, changed, user, slug, on), user),
  }
}
export type ArticleWrites = ReturnType<typeof articleWrites>
