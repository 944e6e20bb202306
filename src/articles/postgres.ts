import type { SQL, TransactionSQL } from 'bun'
import { ms, nameless, pipelined, read } from '../db/postgres/client.ts'
import type { ArticleHead, ArticleReadSql, ArticleRow, ArticleWriteSql, FavoriteSet, WrittenArticle } from './store.ts'

/** Raw rows: bigint times arrive as strings. */
type Raw = Omit<ArticleRow, 'created_at' | 'updated_at'> & { created_at: string; updated_at: string }
const row = (r: Raw): ArticleRow => ({ ...r, created_at: ms(r.created_at), updated_at: ms(r.updated_at) })

const ARTICLE_COLUMNS = `a.id, a.author_id, a.slug, a.title, a.description, a.created_at, a.updated_at, a.favorites_count,
    u.username, u.bio, u.image,
    ARRAY(SELECT t.name FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE at.article_id = a.id) AS tags`
/**
 * Each article's author, looked up by key. As a plain join, PostgreSQL hashes
 * the whole users table when it is small (a seq scan of every user for a page
 * of 20 articles; test/db/query-plans.test.ts plans on 1,000 users); OFFSET 0
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

/** Waits for the advisory lock article creations and slug changes take, held until commit. */
const lock = (tx: TransactionSQL) => tx`SELECT pg_advisory_xact_lock(${ARTICLE_LOCK}, hashtext(current_schema()))`

/**
 * Tags and their counters under concurrent writes. Every link added or
 * removed moves its tag's articles_count (a trigger), which locks the tag's
 * row until commit; and an upsert of an existing tag waits for any
 * transaction that moved that row. Taken as they came (the upsert in one
 * order, the triggers in the links' order, a deletion's in yet another),
 * writers sharing tags deadlocked. So each write that links or unlinks tags
 * first locks every tag it will touch, the missing ones inserted, in one
 * statement and in one order, code-point order of the names (the "C"
 * collation): the counters' updates then find their rows locked already.
 * A write waits at most for the tags' earlier holders, never in a cycle.
 * `DO UPDATE ... WHERE false` locks each existing row as FOR NO KEY UPDATE
 * does (what the counter's UPDATE takes) and writes nothing; the links'
 * foreign-key checks (FOR KEY SHARE) are not held up by it. The tags come
 * before the slug lock (see `add`), so a creation never waits for a tag
 * while every other creation waits for it.
 */
const TAG_LOCK = 'ON CONFLICT (name) DO UPDATE SET articles_count = tags.articles_count WHERE false'

/** Inserts the missing tags of `names` and locks the others, in name order (see TAG_LOCK). */
const lockTags = (tx: TransactionSQL, names: readonly string[]) =>
  tx`INSERT INTO tags (name) SELECT DISTINCT unnest(${names}::text[]) COLLATE "C" AS name ORDER BY name ${tx.unsafe(TAG_LOCK)}`

/** lockTags for a retagging: the new tags and the article's current ones, which it may unlink. */
const lockRetagged = (tx: TransactionSQL, article: number, names: readonly string[]) =>
  tx`INSERT INTO tags (name)
     SELECT name FROM (SELECT unnest(${names}::text[]) COLLATE "C" AS name
                       UNION SELECT t.name FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE at.article_id = ${article}) touched
     ORDER BY name ${tx.unsafe(TAG_LOCK)}`

/** The reads of articles on PostgreSQL. */
export function postgresArticleReads(sql: SQL): ArticleReadSql {
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
  }
}

/**
 * The SQL of article writes on PostgreSQL, over one transaction. Creations
 * and slug changes hold an advisory lock until they commit, as SQLite's write
 * lock does: slugs are chosen without races (`x`, `x-2`, never a conflict),
 * and ids keep following creation times across instances. Other writes run
 * concurrently; counters are kept by triggers under row locks, so concurrent
 * favorites are exact.
 */
export function postgresArticleSql(tx: TransactionSQL): ArticleWriteSql {
  return {
    lockSlugs: async () => void (await lock(tx)),
    slugTaken: async (slug) => (await tx`SELECT 1 FROM articles WHERE slug = ${slug}`).length > 0,
    async slugCounter(base) {
      const [c] = await tx`SELECT next FROM slug_counters WHERE base = ${base}`
      return c ? (c.next as number) : null
    },
    suffixedSlugs: async (base) =>
      [...(await tx`SELECT slug FROM articles WHERE slug > ${`${base}-`} AND slug < ${`${base}.`}`)].map((r) => r.slug),
    setSlugCounter: async (base, next) =>
      void (await tx`INSERT INTO slug_counters (base, next) VALUES (${base}, ${next}) ON CONFLICT (base) DO UPDATE SET next = EXCLUDED.next`),
    async add(a) {
      const names = [...a.tags]
      // the tags first: the slug lock is taken with every tag row already held (see TAG_LOCK)
      const tagged = names.length ? lockTags(tx, names).execute() : null
      const locked = lock(tx).execute()
      // ids grow with created_at: a new article is never older than the newest one (the lock keeps it so)
      const added = tx`WITH added AS (
          INSERT INTO articles (slug, title, description, body, author_id, created_at, updated_at)
          SELECT ${a.slug}, ${a.title}, ${a.description}, ${a.body}, ${a.author}, t, t
          FROM (SELECT greatest(${a.now}::bigint, coalesce((SELECT created_at FROM articles ORDER BY id DESC LIMIT 1), 0)) AS t) x
          -- not ON CONFLICT, which would use up an id; the lock keeps this check true until the commit
          WHERE NOT EXISTS (SELECT 1 FROM articles WHERE slug = ${a.slug})
          RETURNING id, created_at),
        linked AS (
          INSERT INTO article_tags (tag_id, article_id) SELECT t.id, added.id FROM added, tags t WHERE t.name = ANY (${names}::text[])
          RETURNING tag_id)
        SELECT added.id, added.created_at, u.username, u.bio, u.image,
          ARRAY(SELECT t.name FROM tags t WHERE t.id IN (SELECT tag_id FROM linked)) AS tags,
          EXISTS (SELECT 1 FROM follows WHERE follower_id = ${a.author} AND followee_id = ${a.author}) AS following
        -- FOR KEY SHARE: a rename (FOR UPDATE) waits for this write, or this reads the name it committed
        FROM added CROSS JOIN (SELECT username, bio, image FROM users WHERE id = ${a.author} FOR KEY SHARE) u`.execute()
      const [, , [r]] = await pipelined(tagged, locked, added)
      if (!r) return null
      const at = ms(r.created_at)
      const { slug, title, description, body, author } = a
      const row = { id: r.id, author_id: author, slug, title, description, body, created_at: at, updated_at: at, favorites_count: 0 }
      return { row: { ...row, tags: r.tags, username: r.username, bio: r.bio, image: r.image }, favorited: false, following: r.following }
    },
    async find(slug) {
      if (nameless(slug)) return null
      // FOR UPDATE: concurrent edits and deletes of one article take turns
      const [a] = await tx`SELECT id, author_id, slug, title FROM articles WHERE slug = ${slug} FOR UPDATE`
      return (a as ArticleHead | undefined) ?? null
    },
    tagsOf: async (id) =>
      [...(await tx`SELECT t.name FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE at.article_id = ${id}`)].map(
        (r: { name: string }) => r.name,
      ),
    update: async (id, e) =>
      void (await tx`UPDATE articles SET
          slug = ${e.slug},
          title = coalesce(${e.title}::text, title),
          description = coalesce(${e.description}::text, description),
          body = coalesce(${e.body}::text, body),
          updated_at = greatest(${e.now}::bigint, updated_at + 1)
        WHERE id = ${id}`),
    async remove(id) {
      // its links go with it (a cascade), each moving its tag's counter: their rows are locked first, in name order (see TAG_LOCK)
      const locked = tx`SELECT 1 FROM tags WHERE id IN (SELECT tag_id FROM article_tags WHERE article_id = ${id})
                        ORDER BY name FOR NO KEY UPDATE`.execute()
      const removed = tx`DELETE FROM articles WHERE id = ${id}`.execute()
      await pipelined(locked, removed)
    },
    async setTags(article, tags, replacing) {
      const names = [...tags]
      if (!names.length && !replacing) return
      // every tag this may link or unlink, locked first (see TAG_LOCK); the three statements travel together
      const locked = (replacing ? lockRetagged(tx, article, names) : lockTags(tx, names)).execute()
      const unlinked = replacing
        ? tx`DELETE FROM article_tags WHERE article_id = ${article}
               AND tag_id NOT IN (SELECT id FROM tags WHERE name = ANY (${names}::text[]))`.execute()
        : null
      const linked = names.length
        ? tx`INSERT INTO article_tags (tag_id, article_id) SELECT id, ${article} FROM tags WHERE name = ANY (${names}::text[])
               ON CONFLICT DO NOTHING`.execute()
        : null
      await pipelined(locked, unlinked, linked)
    },
    async setFavorite(user, slug, on) {
      if (nameless(slug)) return null
      // FOR KEY SHARE: the article cannot be deleted while its favorite is written; a rename of the user
      // (FOR UPDATE) waits for this write, or the key read is the one it committed
      const [r] = on
        ? await tx`WITH a AS (SELECT id FROM articles WHERE slug = ${slug} FOR KEY SHARE),
              f AS (INSERT INTO favorites (user_id, article_id) SELECT ${user}, id FROM a ON CONFLICT DO NOTHING RETURNING 1)
            SELECT a.id, EXISTS (SELECT 1 FROM f) AS changed, (SELECT username_key FROM users WHERE id = ${user} FOR KEY SHARE) AS "userKey" FROM a`
        : await tx`WITH a AS (SELECT id FROM articles WHERE slug = ${slug} FOR KEY SHARE),
              f AS (DELETE FROM favorites WHERE user_id = ${user} AND article_id = (SELECT id FROM a) RETURNING 1)
            SELECT a.id, EXISTS (SELECT 1 FROM f) AS changed, (SELECT username_key FROM users WHERE id = ${user} FOR KEY SHARE) AS "userKey" FROM a`
      return (r as FavoriteSet | undefined) ?? null
    },
    async written(id, viewerId): Promise<WrittenArticle> {
      const [r] = await tx`SELECT a.id, a.author_id, a.slug, a.title, a.description, a.body, a.created_at, a.updated_at,
          a.favorites_count, u.username, u.bio, u.image,
          ARRAY(SELECT t.name FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE at.article_id = a.id) AS tags,
          EXISTS (SELECT 1 FROM favorites WHERE user_id = ${viewerId} AND article_id = a.id) AS favorited,
          EXISTS (SELECT 1 FROM follows WHERE follower_id = ${viewerId} AND followee_id = a.author_id) AS following
        FROM articles a ${tx.unsafe(WITH_AUTHOR)} WHERE a.id = ${id}`
      return { row: row(r), favorited: r.favorited, following: r.following }
    },
  }
}
