import type { Database } from 'bun:sqlite'
import type { ArticleReadSql, ArticleRow, ArticleWriteSql, WrittenArticle } from './store.ts'

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
  // One article: its author's columns by scalar subqueries, not a join, which costs SQLite more
  // per execution than the same lookups for one row. A page of items keeps the join: there the
  // subqueries' per-row lookups cost more.
  full: `SELECT ${articleColumns(true).replace('u.username, u.bio, u.image', AUTHOR_BY_SUBQUERY)} FROM articles a WHERE a.id = ?`,
  bySlug: 'SELECT id, author_id FROM articles WHERE slug = ?',
} as const

type Raw = Omit<ArticleRow, 'tags'> & { tags: string | null }
const row = (r: Raw): ArticleRow => ({ ...r, tags: r.tags === null ? [] : r.tags.split('\u001f') })

/** The reads of articles on SQLite. */
export function sqliteArticleReads(db: Database): ArticleReadSql {
  const bySlug = db.query<{ id: number; author_id: number }, [string]>(SQLITE_ARTICLE_READS.bySlug)
  const items = db.query<Raw, [string]>(SQLITE_ARTICLE_READS.items)
  const full = db.query<Raw, [number]>(SQLITE_ARTICLE_READS.full)
  return {
    bySlug: (slug) => bySlug.get(slug),
    items: (ids) => (ids.length ? items.all(JSON.stringify(ids)).map(row) : []),
    full: (id) => {
      const r = full.get(id)
      return r ? row(r) : null
    },
  }
}

/**
 * The SQL of article writes on SQLite, prepared once. Every write is one
 * IMMEDIATE transaction (see SqliteChanges.write): the slug is chosen and
 * inserted under the write lock, so two requests (or two processes) creating
 * the same title get `x` and `x-2`, never a conflict or a duplicate.
 */
export function sqliteArticleSql(db: Database): ArticleWriteSql {
  const full = db.query<Raw, [number]>(SQLITE_ARTICLE_READS.full)
  const flags = db.query<{ favorited: number; following: number }, { viewer: number; id: number; author: number }>(
    `SELECT EXISTS (SELECT 1 FROM favorites WHERE user_id = :viewer AND article_id = :id) AS favorited,
            EXISTS (SELECT 1 FROM follows WHERE follower_id = :viewer AND followee_id = :author) AS following`,
  )
  const find = db.query<{ id: number; author_id: number; slug: string; title: string }, [string]>(
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
  // a range scan of the unique index
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
  const userKey = db.query<{ username_key: string }, [number]>('SELECT username_key FROM users WHERE id = ?')

  function setTags(article: number, tags: readonly string[], replacing: boolean): void {
    const names = JSON.stringify(tags)
    if (replacing) unlinkOtherTags.run({ article, names })
    addTags.run(names)
    linkTags.run({ article, names })
  }
  function written(id: number, viewerId: number): WrittenArticle {
    const r = row(full.get(id)!)
    const f = flags.get({ viewer: viewerId, id, author: r.author_id })!
    return { row: r, favorited: f.favorited === 1, following: f.following === 1 }
  }

  return {
    // the transaction holds SQLite's write lock from its start (IMMEDIATE)
    lockSlugs: () => undefined,
    slugTaken: (slug) => slugTaken.get(slug) !== null,
    slugCounter: (base) => counter.get(base)?.next ?? null,
    suffixedSlugs: (base) => suffixed.all({ lo: `${base}-`, hi: `${base}.` }).map((r) => r.slug),
    setSlugCounter: (base, next) => void setCounter.run(base, next),
    add(a) {
      if (slugTaken.get(a.slug) !== null) return null
      const { slug, title, description, body, author, now } = a
      const id = insert.get({ slug, title, description, body, author, now })!.id
      if (a.tags.length) setTags(id, a.tags, false)
      return written(id, author)
    },
    // the write lock is held already: nothing to lock per row
    find: (slug) => find.get(slug),
    tagsOf: (id) => tagsOf.all(id).map((t) => t.name),
    update: (id, e) => void update.run({ id, ...e }),
    remove: (id) => void remove.run(id),
    setTags,
    setFavorite(user, slug, on) {
      const a = find.get(slug)
      if (!a) return null
      if ((on ? favorite : unfavorite).run(user, a.id).changes === 0) return { id: a.id, changed: false }
      return { id: a.id, changed: true, userKey: userKey.get(user)!.username_key }
    },
    written,
  }
}
