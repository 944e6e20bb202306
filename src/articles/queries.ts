import type { Database } from 'bun:sqlite'
import type { ChangeTracker } from '../db/changes.ts'
import { forbidden, notFound } from '../errors.ts'
import { type ArticleRow, articleColumns, articleJson, articleParts } from './present.ts'
import type { ArticleChanges, NewArticle } from './schemas.ts'
import { nextFreeSlug, slugify } from './slug.ts'

interface Owned {
  id: number
  author_id: number
  slug: string
  title: string
}

/**
 * Writes to articles, their tags and favorites. Every write is one IMMEDIATE
 * transaction: the slug is chosen and inserted under the write lock, so two
 * requests (or two processes) creating the same title get `x` and `x-2`,
 * never a conflict or a duplicate.
 */
export function articleQueries(db: Database, changes: ChangeTracker) {
  const bySlug = db.query<ArticleRow & { favorited: number; following: number }, { slug: string; viewer: number }>(
    `SELECT ${articleColumns(true)},
       EXISTS (SELECT 1 FROM favorites WHERE user_id = :viewer AND article_id = a.id) AS favorited,
       EXISTS (SELECT 1 FROM follows WHERE follower_id = :viewer AND followee_id = a.author_id) AS following
     FROM articles a JOIN users u ON u.id = a.author_id WHERE a.slug = :slug`,
  )
  const owned = db.query<Owned, [string]>('SELECT id, author_id, slug, title FROM articles WHERE slug = ?')
  // candidate slugs sharing the base: `base` itself and `base-…` (a range scan of the unique index)
  const similarSlugs = db.query<{ slug: string }, { base: string; lo: string; hi: string }>(
    `SELECT slug FROM articles WHERE slug = :base OR (slug > :lo AND slug < :hi AND slug GLOB :lo || '[1-9]*')`,
  )
  // ids grow with created_at: a new article is never older than the newest one
  const insert = db.query<{ id: number }, Record<string, string | number>>(
    `INSERT INTO articles (slug, title, description, body, author_id, created_at, updated_at)
     SELECT :slug, :title, :description, :body, :author, t, t
     FROM (SELECT max(:now, coalesce((SELECT created_at FROM articles ORDER BY id DESC LIMIT 1), 0)) AS t)
     RETURNING id`,
  )
  const update = db.query<unknown, Record<string, string | number | null>>(
    `UPDATE articles SET
       slug = :slug,
       title = coalesce(:title, title),
       description = coalesce(:description, description),
       body = coalesce(:body, body),
       updated_at = max(:now, updated_at + 1)
     WHERE id = :id`,
  )
  const remove = db.query<unknown, [number]>('DELETE FROM articles WHERE id = ?')
  const addTags = db.query<unknown, { names: string }>(
    'INSERT INTO tags (name) SELECT value FROM json_each(:names) WHERE true ON CONFLICT (name) DO NOTHING',
  )
  const linkTags = db.query<unknown, { names: string; article: number }>(
    `INSERT OR IGNORE INTO article_tags (tag_id, article_id)
     SELECT id, :article FROM tags WHERE name IN (SELECT value FROM json_each(:names))`,
  )
  const unlinkOtherTags = db.query<unknown, { names: string; article: number }>(
    `DELETE FROM article_tags WHERE article_id = :article
       AND tag_id NOT IN (SELECT id FROM tags WHERE name IN (SELECT value FROM json_each(:names)))`,
  )
  const favorite = db.query<unknown, { user: number; article: number }>(
    'INSERT OR IGNORE INTO favorites (user_id, article_id) VALUES (:user, :article)',
  )
  const unfavorite = db.query<unknown, { user: number; article: number }>(
    'DELETE FROM favorites WHERE user_id = :user AND article_id = :article',
  )

  const freeSlug = (title: string) => {
    const base = slugify(title)
    const taken = similarSlugs.all({ base, lo: `${base}-`, hi: `${base}.` }).map((r) => r.slug)
    return nextFreeSlug(base, taken)
  }
  const setTags = (article: number, tags: string[], replacing: boolean) => {
    const names = JSON.stringify(tags)
    if (replacing) unlinkOtherTags.run({ article, names })
    addTags.run({ names })
    linkTags.run({ article, names })
  }
  const mine = (slug: string, viewer: number) => {
    const a = owned.get(slug)
    if (!a) throw notFound('article')
    if (a.author_id !== viewer) throw forbidden('article')
    return a
  }
  const find = (slug: string) => {
    const a = owned.get(slug)
    if (!a) throw notFound('article')
    return a
  }

  /** Runs a write and tells the caches (also when it throws halfway: harmless). */
  const write = <T>(run: () => T): T => {
    try {
      return run()
    } finally {
      changes.changed()
    }
  }

  /** The article as JSON seen by `viewer` (0 = anonymous), or null. */
  const json = (slug: string, viewer: number): string | null => {
    const row = bySlug.get({ slug, viewer })
    return row && articleJson(articleParts(row), row.favorited === 1, row.following === 1)
  }

  // Each write answers the article as its writer now sees it, read inside the
  // same transaction (its pages are at hand, and no other write can come between).
  const create = db.transaction((author: number, a: NewArticle): string => {
    const slug = freeSlug(a.title)
    const { id } = insert.get({ slug, title: a.title, description: a.description, body: a.body, author, now: Date.now() })!
    if (a.tagList?.length) setTags(id, a.tagList, false)
    return json(slug, author)!
  })
  const change = db.transaction((viewer: number, slug: string, c: ArticleChanges): string => {
    const a = mine(slug, viewer)
    // A new title gives a new slug, unless it slugifies like the old title
    // (a fix of case or punctuation keeps the article's address).
    const newSlug = c.title !== undefined && slugify(c.title) !== slugify(a.title) ? freeSlug(c.title) : a.slug
    update.run({
      id: a.id,
      slug: newSlug,
      title: c.title ?? null,
      description: c.description ?? null,
      body: c.body ?? null,
      now: Date.now(),
    })
    if (c.tagList) setTags(a.id, c.tagList, true)
    return json(newSlug, viewer)!
  })
  const favor = db.transaction((user: number, slug: string, on: boolean): string => {
    const article = find(slug).id
    ;(on ? favorite : unfavorite).run({ user, article })
    return json(slug, user)!
  })
  const destroy = db.transaction((viewer: number, slug: string) => void remove.run(mine(slug, viewer).id))

  return {
    json,
    /** Returns the new article as JSON. */
    create: (author: number, a: NewArticle): string => write(() => create.immediate(author, a)),
    /** Author only (403 otherwise); returns the article as JSON (a new title gives a new slug). */
    update: (viewer: number, slug: string, c: ArticleChanges): string => write(() => change.immediate(viewer, slug, c)),
    /** Author only; comments, favorites and tag links go with it (ON DELETE CASCADE). */
    delete: (viewer: number, slug: string): void => write(() => destroy.immediate(viewer, slug)),
    /**
     * Idempotent; counters move only when a row is really added or removed
     * (triggers). Returns the article as JSON.
     */
    setFavorite: (user: number, slug: string, on: boolean): string => write(() => favor.immediate(user, slug, on)),
  }
}
export type ArticleQueries = ReturnType<typeof articleQueries>
