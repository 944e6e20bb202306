import type { SQL, TransactionSQL } from 'bun'
import { articleCreated, articleDeleted, articleEdited, favoriteChanged, tagsDiff } from '../cache/keys.ts'
import type { PgChanges } from '../db/postgres/changes.ts'
import { ms, nameless, read } from '../db/postgres/client.ts'
import { forbidden, notFound } from '../errors.ts'
import type { ArticleChanges, NewArticle } from './schemas.ts'
import { slugify, firstFreeSuffix } from './slug.ts'
import type { ArticleRow, ArticleStore, WrittenArticle, Writer } from './store.ts'

/** Raw rows: bigint times arrive as strings. */
type Raw = Omit<ArticleRow, 'created_at' | 'updated_at'> & { created_at: string; updated_at: string }
const row = (r: Raw): ArticleRow => ({ ...r, created_at: ms(r.created_at), updated_at: ms(r.updated_at) })

const ARTICLE_COLUMNS = `a.id, a.author_id, a.slug, a.title, a.description, a.created_at, a.updated_at, a.favorites_count,
    u.username, u.bio, u.image,
    ARRAY(SELECT t.name FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE at.article_id = a.id) AS tags`
/**
 * Each article's author, looked up by key. As a plain join, PostgreSQL hashes
 * the whole users table when it is small (1,000 users: a seq scan of all of
 * them for a page of 20 articles, 0.6-0.8 ms against 0.1 ms by key); OFFSET 0
 * keeps the subquery from being flattened into that join.
 */
const WITH_AUTHOR = 'CROSS JOIN LATERAL (SELECT username, bio, image FROM users WHERE id = a.author_id OFFSET 0) u'
/** The reads of list items, whole articles and slugs ($1 the ids, the id, the slug). */
export const PG_ARTICLE_READS = {
  items: `SELECT ${ARTICLE_COLUMNS} FROM articles a ${WITH_AUTHOR} WHERE a.id = ANY ($1::int[])`,
  full: `SELECT ${ARTICLE_COLUMNS}, a.body FROM articles a ${WITH_AUTHOR} WHERE a.id = $1`,
  bySlug: 'SELECT id, author_id FROM articles WHERE slug = $1',
} as const

/** Any fixed number: the advisory lock article creations and slug changes take, one at a time. */
const ARTICLE_LOCK = 0x736c7567 // "slug"

/**
 * Articles on PostgreSQL. Creations and slug changes hold an advisory lock
 * until they commit, as SQLite's write lock does: slugs are chosen without
 * races (`x`, `x-2`, never a conflict), and ids keep following creation
 * times across instances. Other writes run concurrently; counters are kept
 * by triggers under row locks, so concurrent favorites are exact.
 */
export function postgresArticles(sql: SQL, changes: PgChanges): ArticleStore {
  const lock = (tx: TransactionSQL) => tx`SELECT pg_advisory_xact_lock(${ARTICLE_LOCK}, hashtext(current_schema()))`

  /** The base slug when free; else `base-N` from the base's counter (never the same number twice). */
  const freeSlug = async (tx: TransactionSQL, title: string): Promise<string> => {
    const base = slugify(title)
    const [taken] = await tx`SELECT 1 FROM articles WHERE slug = ${base}`
    if (!taken) return base
    const [c] = await tx`SELECT next FROM slug_counters WHERE base = ${base}`
    let n: number
    if (c) n = c.next
    else {
      // the first time this base is taken twice: past the suffixes already used
      const lo = `${base}-`
      const rows = await tx`SELECT slug FROM articles WHERE slug > ${lo} AND slug < ${`${base}.`}`
      n = firstFreeSuffix(
        base,
        [...rows].map((r: { slug: string }) => r.slug),
      )
    }
    for (;;) {
      const [used] = await tx`SELECT 1 FROM articles WHERE slug = ${`${base}-${n}`}`
      if (!used) break
      n++
    }
    await tx`INSERT INTO slug_counters (base, next) VALUES (${base}, ${n + 1}) ON CONFLICT (base) DO UPDATE SET next = EXCLUDED.next`
    return `${base}-${n}`
  }

  const setTags = async (tx: TransactionSQL, article: number, tags: readonly string[], replacing: boolean) => {
    // sorted: concurrent writers insert new tags in one order (no deadlock on the unique index)
    const names = [...tags].sort()
    if (replacing) {
      await tx`DELETE FROM article_tags WHERE article_id = ${article}
                 AND tag_id NOT IN (SELECT id FROM tags WHERE name = ANY (${names}::text[]))`
    }
    if (!names.length) return
    await tx`INSERT INTO tags (name) SELECT unnest(${names}::text[]) ON CONFLICT (name) DO NOTHING`
    await tx`INSERT INTO article_tags (tag_id, article_id) SELECT id, ${article} FROM tags WHERE name = ANY (${names}::text[])
             ON CONFLICT DO NOTHING`
  }

  /** FOR KEY SHARE: the article cannot be deleted before this transaction ends (its favorites refer to it). */
  const find = async (tx: TransactionSQL, slug: string) => {
    if (nameless(slug)) throw notFound('article')
    const [a] = await tx`SELECT id, author_id, slug, title FROM articles WHERE slug = ${slug} FOR KEY SHARE`
    if (!a) throw notFound('article')
    return a as { id: number; author_id: number; slug: string; title: string }
  }
  /** FOR UPDATE: concurrent edits and deletes of one article take turns. */
  const mine = async (tx: TransactionSQL, slug: string, viewer: number) => {
    if (nameless(slug)) throw notFound('article')
    const [a] = await tx`SELECT id, author_id, slug, title FROM articles WHERE slug = ${slug} FOR UPDATE`
    if (!a) throw notFound('article')
    if (a.author_id !== viewer) throw forbidden('article')
    return a
  }
  /** The article as `viewer` sees it, read inside the write's transaction. */
  const written = async (tx: TransactionSQL, id: number, viewer: number): Promise<WrittenArticle> => {
    const [r] = await tx`SELECT a.id, a.author_id, a.slug, a.title, a.description, a.body, a.created_at, a.updated_at,
        a.favorites_count, u.username, u.bio, u.image,
        ARRAY(SELECT t.name FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE at.article_id = a.id) AS tags,
        EXISTS (SELECT 1 FROM favorites WHERE user_id = ${viewer} AND article_id = a.id) AS favorited,
        EXISTS (SELECT 1 FROM follows WHERE follower_id = ${viewer} AND followee_id = a.author_id) AS following
      FROM articles a ${tx.unsafe(WITH_AUTHOR)} WHERE a.id = ${id}`
    return { row: row(r), favorited: r.favorited, following: r.following }
  }

  return {
    bySlug: (slug) =>
      read(async () => {
        if (nameless(slug)) return null
        const [a] = await sql.unsafe(PG_ARTICLE_READS.bySlug, [slug])
        return (a as { id: number; author_id: number } | undefined) ?? null
      }),
    items: (ids) => (ids.length ? read(async () => [...(await sql.unsafe(PG_ARTICLE_READS.items, [[...ids]]))].map(row)) : []),
    full: (id) =>
      read(async () => {
        const [r] = await sql.unsafe(PG_ARTICLE_READS.full, [id])
        return r ? row(r) : null
      }),
    create: (author: Writer, a: NewArticle) =>
      changes.write(async (tx, changed) => {
        await lock(tx)
        const slug = await freeSlug(tx, a.title)
        // ids grow with created_at: a new article is never older than the newest one
        const [{ id }] = await tx`INSERT INTO articles (slug, title, description, body, author_id, created_at, updated_at)
          SELECT ${slug}, ${a.title}, ${a.description}, ${a.body}, ${author.id}, t, t
          FROM (SELECT greatest(${Date.now()}::bigint, coalesce((SELECT created_at FROM articles ORDER BY id DESC LIMIT 1), 0)) AS t) x
          RETURNING id`
        const tags = a.tagList ?? []
        if (tags.length) await setTags(tx, id, tags, false)
        changed(articleCreated(author, tags))
        return written(tx, id, author.id)
      }),
    update: (viewer: Writer, slug: string, c: ArticleChanges) =>
      changes.write(async (tx, changed) => {
        const a = await mine(tx, slug, viewer.id)
        // A new title gives a new slug, unless it slugifies like the old title.
        const retitled = c.title !== undefined && slugify(c.title) !== slugify(a.title)
        if (retitled) await lock(tx)
        const newSlug = retitled ? await freeSlug(tx, c.title!) : a.slug
        const before = c.tagList
          ? [...(await tx`SELECT t.name FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE at.article_id = ${a.id}`)].map(
              (r: { name: string }) => r.name,
            )
          : []
        await tx`UPDATE articles SET
            slug = ${newSlug},
            title = coalesce(${c.title ?? null}::text, title),
            description = coalesce(${c.description ?? null}::text, description),
            body = coalesce(${c.body ?? null}::text, body),
            updated_at = greatest(${Date.now()}::bigint, updated_at + 1)
          WHERE id = ${a.id}`
        if (c.tagList) await setTags(tx, a.id, c.tagList, true)
        changed(articleEdited(a.id, c.tagList ? tagsDiff(before, c.tagList) : []))
        return written(tx, a.id, viewer.id)
      }),
    delete: (viewer: Writer, slug: string) =>
      changes.write(async (tx, changed) => {
        const a = await mine(tx, slug, viewer.id)
        await tx`DELETE FROM articles WHERE id = ${a.id}`
        changed(articleDeleted(a.id))
      }),
    setFavorite: (user: Writer, slug: string, on: boolean) =>
      changes.write(async (tx, changed) => {
        const { id } = await find(tx, slug)
        const r = on
          ? await tx`INSERT INTO favorites (user_id, article_id) VALUES (${user.id}, ${id}) ON CONFLICT DO NOTHING`
          : await tx`DELETE FROM favorites WHERE user_id = ${user.id} AND article_id = ${id}`
        if (r.count) changed(favoriteChanged(id, user.id, user.usernameKey))
        return written(tx, id, user.id)
      }),
  }
}
