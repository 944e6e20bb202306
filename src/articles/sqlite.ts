import type { Database } from 'bun:sqlite'
import { articleCreated, articleDeleted, articleEdited, favoriteChanged, tagsDiff } from '../cache/keys.ts'
import type { SqliteChanges } from '../db/sqlite/changes.ts'
import { forbidden, notFound } from '../errors.ts'
import type { ArticleChanges, NewArticle } from './schemas.ts'
import { slugify, firstFreeSuffix } from './slug.ts'
import type { ArticleRow, ArticleStore, WrittenArticle, Writer } from './store.ts'

/** The columns every article read selects (`a` the article, `u` its author); tags joined by U+001F. */
export const articleColumns = (withBody: boolean) => `a.id, a.author_id, a.slug, a.title, a.description,${
  withBody ? ' a.body,' : ''
} a.created_at, a.updated_at, a.favorites_count, u.username, u.bio, u.image,
  (SELECT group_concat(t.name, char(31)) FROM article_tags at JOIN tags t ON t.id = at.tag_id
   WHERE at.article_id = a.id) AS tags`

/** The author's columns of `articleColumns`, as subqueries on the article's author_id. */
const AUTHOR_BY_SUBQUERY = ['username', 'bio', 'image'].map((c) => `(SELECT ${c} FROM users WHERE id = a.author_id) AS ${c}`).join(', ')

/** The reads of list items, whole articles and slugs. */
export const SQLITE_ARTICLE_READS = {
  items: `SELECT ${articleColumns(false)} FROM json_each(?) p JOIN articles a ON a.id = p.value JOIN users u ON u.id = a.author_id`,
  // One article: its author's columns by scalar subqueries, not a join. The SQLite in Bun 1.4.5
  // spends ~4.5 µs more per execution on a statement that joins a second table than on the same
  // lookups as subqueries (measured: this read 25 -> 6.5 µs; docs/PERFORMANCE.md). A page of
  // items (20 rows) keeps the join: there the subqueries' per-row lookups cost more.
  full: `SELECT ${articleColumns(true).replace('u.username, u.bio, u.image', AUTHOR_BY_SUBQUERY)} FROM articles a WHERE a.id = ?`,
  bySlug: 'SELECT id, author_id FROM articles WHERE slug = ?',
} as const

type Raw = Omit<ArticleRow, 'tags'> & { tags: string | null }
const row = (r: Raw): ArticleRow => ({ ...r, tags: r.tags === null ? [] : r.tags.split('\u001f') })

/**
 * Articles on SQLite. Every write is one IMMEDIATE transaction (see
 * SqliteChanges.write): the slug is chosen and inserted under the write lock,
 * so two requests (or two processes) creating the same title get `x` and
 * `x-2`, never a conflict or a duplicate.
 */
export function sqliteArticles(db: Database, changes: SqliteChanges): ArticleStore {
  const bySlug = db.query<{ id: number; author_id: number }, [string]>(SQLITE_ARTICLE_READS.bySlug)
  const items = db.query<Raw, [string]>(SQLITE_ARTICLE_READS.items)
  const full = db.query<Raw, [number]>(SQLITE_ARTICLE_READS.full)
  const flags = db.query<{ favorited: number; following: number }, { viewer: number; id: number; author: number }>(
    `SELECT EXISTS (SELECT 1 FROM favorites WHERE user_id = :viewer AND article_id = :id) AS favorited,
            EXISTS (SELECT 1 FROM follows WHERE follower_id = :viewer AND followee_id = :author) AS following`,
  )
  const owned = db.query<{ id: number; author_id: number; slug: string; title: string }, [string]>(
    'SELECT id, author_id, slug, title FROM articles WHERE slug = ?',
  )
  const tagsOf = db.query<{ name: string }, [number]>(
    'SELECT t.name FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE at.article_id = ?',
  )
  const slugTaken = db.query<{ one: number }, [string]>('SELECT 1 AS one FROM articles WHERE slug = ?')
  const counter = db.query<{ next: number }, [string]>('SELECT next FROM slug_counters WHERE base = ?')
  const setCounter = db.query<unknown, [string, number]>(
    'INSERT INTO slug_counters (base, next) VALUES (?1, ?2) ON CONFLICT (base) DO UPDATE SET next = ?2',
  )
  // only the first time a base is taken twice: the largest suffix already used (a range scan of the unique index)
  const suffixed = db.query<{ slug: string }, { lo: string; hi: string }>(
    `SELECT slug FROM articles WHERE slug > :lo AND slug < :hi AND slug GLOB :lo || '[1-9]*'`,
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
  const addTags = db.query<unknown, [string]>(
    'INSERT INTO tags (name) SELECT value FROM json_each(?) WHERE true ON CONFLICT (name) DO NOTHING',
  )
  const linkTags = db.query<unknown, { names: string; article: number }>(
    `INSERT OR IGNORE INTO article_tags (tag_id, article_id)
     SELECT id, :article FROM tags WHERE name IN (SELECT value FROM json_each(:names))`,
  )
  const unlinkOtherTags = db.query<unknown, { names: string; article: number }>(
    `DELETE FROM article_tags WHERE article_id = :article
       AND tag_id NOT IN (SELECT id FROM tags WHERE name IN (SELECT value FROM json_each(:names)))`,
  )
  const favorite = db.query<unknown, [number, number]>('INSERT OR IGNORE INTO favorites (user_id, article_id) VALUES (?, ?)')
  const unfavorite = db.query<unknown, [number, number]>('DELETE FROM favorites WHERE user_id = ? AND article_id = ?')

  /**
   * The base slug when free; else `base-N` with N from the base's counter,
   * which never hands out a number twice (an old link never lands on another
   * article). One upsert, whatever the number of articles sharing the base.
   */
  const freeSlug = (title: string): string => {
    const base = slugify(title)
    if (!slugTaken.get(base)) return base
    let n =
      counter.get(base)?.next ??
      firstFreeSuffix(
        base,
        suffixed.all({ lo: `${base}-`, hi: `${base}.` }).map((r) => r.slug),
      )
    while (slugTaken.get(`${base}-${n}`)) n++
    setCounter.run(base, n + 1)
    return `${base}-${n}`
  }
  const setTags = (article: number, tags: readonly string[], replacing: boolean) => {
    const names = JSON.stringify(tags)
    if (replacing) unlinkOtherTags.run({ article, names })
    addTags.run(names)
    linkTags.run({ article, names })
  }
  const find = (slug: string) => {
    const a = owned.get(slug)
    if (!a) throw notFound('article')
    return a
  }
  const mine = (slug: string, viewer: number) => {
    const a = find(slug)
    if (a.author_id !== viewer) throw forbidden('article')
    return a
  }
  /** The article as `viewer` sees it, read inside the write's transaction. */
  const written = (id: number, viewer: number): WrittenArticle => {
    const r = row(full.get(id)!)
    const f = flags.get({ viewer, id, author: r.author_id })!
    return { row: r, favorited: f.favorited === 1, following: f.following === 1 }
  }

  return {
    bySlug: (slug) => bySlug.get(slug),
    items: (ids) => (ids.length ? items.all(JSON.stringify(ids)).map(row) : []),
    full: (id) => {
      const r = full.get(id)
      return r ? row(r) : null
    },
    create: (author: Writer, a: NewArticle) =>
      changes.write((changed) => {
        const slug = freeSlug(a.title)
        const { id } = insert.get({ slug, title: a.title, description: a.description, body: a.body, author: author.id, now: Date.now() })!
        const tags = a.tagList ?? []
        if (tags.length) setTags(id, tags, false)
        changed(articleCreated(author, tags))
        return written(id, author.id)
      }),
    update: (viewer: Writer, slug: string, c: ArticleChanges) =>
      changes.write((changed) => {
        const a = mine(slug, viewer.id)
        // A new title gives a new slug, unless it slugifies like the old title
        // (a fix of case or punctuation keeps the article's address).
        const newSlug = c.title !== undefined && slugify(c.title) !== slugify(a.title) ? freeSlug(c.title) : a.slug
        const before = c.tagList ? tagsOf.all(a.id).map((t) => t.name) : []
        update.run({
          id: a.id,
          slug: newSlug,
          title: c.title ?? null,
          description: c.description ?? null,
          body: c.body ?? null,
          now: Date.now(),
        })
        if (c.tagList) setTags(a.id, c.tagList, true)
        changed(articleEdited(a.id, c.tagList ? tagsDiff(before, c.tagList) : []))
        return written(a.id, viewer.id)
      }),
    delete: (viewer: Writer, slug: string) =>
      changes.write((changed) => {
        const a = mine(slug, viewer.id)
        remove.run(a.id)
        changed(articleDeleted(a.id))
      }),
    setFavorite: (user: Writer, slug: string, on: boolean) =>
      changes.write((changed) => {
        const { id } = find(slug)
        const { changes: n } = (on ? favorite : unfavorite).run(user.id, id)
        if (n) changed(favoriteChanged(id, user.id, user.usernameKey))
        return written(id, user.id)
      }),
  }
}
