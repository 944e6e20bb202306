import { type Built, type Parts, partOf } from '../cache/cache.ts'
import type { Caches, ViewerFlags } from '../cache/caches.ts'
import { keys } from '../keys/keys.ts'
import type { Body, Pieces } from '../cache/pieces.ts'
import type { ArticleReads } from '../articles/reads.ts'
import type { ProfileReads } from '../profiles/reads.ts'
import { authorEnd } from '../profiles/present.ts'
import { commentHead } from './present.ts'
import type { CommentReadSql } from './store.ts'

/** One comment up to its author: `{"id":…,"body":…,"author":`, and whose it is. */
interface CommentPart {
  head: string
  authorId: number
}

const COMMENTS = '{"comments":['
const END = ']}'

/**
 * An article's comments, cached per article (dropped by a comment added or
 * deleted there); authors' profiles and the viewer's flags are laid over.
 */
export function commentReads(sql: CommentReadSql, caches: Caches, articles: ArticleReads, profiles: ProfileReads) {
  /** an article's comments, oldest first */
  const comments = caches.part<number, CommentPart[]>('comments', (cs) => cs.reduce((n, c) => n + c.head.length * 2 + 32, 32))
  /**
   * An article's comments as seen by `viewer`: the one composition, whether
   * the authors' heads came from the caches alone (`complete`: a head that is
   * missing is not cached, and nothing is composed) or were read (a missing
   * one is an author deleted meanwhile, left out).
   */
  function composeList(
    id: number,
    viewerId: number,
    parts: readonly CommentPart[],
    heads: Parts<number, string>,
    flags: ViewerFlags,
    complete: boolean,
  ): Built<Body> | undefined {
    const deps = [keys.comments(id), keys.slugOf(id)]
    if (viewerId) deps.push(keys.viewer(viewerId))
    const out: Pieces = [COMMENTS]
    for (let i = 0; i < parts.length; i++) {
      const c = parts[i]!
      const author = partOf(heads, c.authorId)
      if (author === undefined) {
        if (complete) return undefined
        continue
      }
      out.push(out.length > 1 ? ',' : '', c.head, author, authorEnd(flags.followees.has(c.authorId)))
      deps.push(keys.user(c.authorId))
    }
    out.push(END)
    return { value: out, deps }
  }

  /** The comment list from cached parts alone, or undefined. */
  function compose(id: number, viewerId: number): Built<Body> | undefined {
    const parts = comments.get(id)
    const flags = profiles.cachedFlags(viewerId)
    if (parts === undefined || flags === undefined) return undefined
    return composeList(id, viewerId, parts, profiles.authors, flags, true)
  }

  /** An article's comment parts, read and cached (their authors remembered). */
  async function readParts(id: number): Promise<readonly CommentPart[]> {
    const at = caches.versions.clock
    const rows = await sql.list(id)
    const parts = rows.map((c): CommentPart => ({ head: commentHead(c), authorId: c.author_id }))
    for (const c of rows) profiles.rememberAuthor({ id: c.author_id, username: c.username, bio: c.bio, image: c.image }, at)
    // the comments themselves: not the article's own text or count (a favorite), which the answer depends on (its slug)
    comments.set(id, { value: parts, deps: [keys.comments(id)] }, at)
    return parts
  }

  /** These comments as `viewer` sees them, their authors' heads and the viewer's flags cached or read. */
  async function composed(id: number, viewerId: number, parts: readonly CommentPart[]): Promise<Built<Body>> {
    const [heads, flags] = await Promise.all([profiles.authorHeads(parts.map((c) => c.authorId)), profiles.flags(viewerId)])
    return composeList(id, viewerId, parts, heads, flags, false)!
  }

  return {
    /** GET /api/articles/:slug/comments from cached parts alone, or undefined. */
    cachedList(slug: string, viewerId: number): Built<Body> | undefined {
      const a = articles.cachedSlug(slug)
      return a && compose(a.id, viewerId)
    },

    async list(slug: string, viewerId: number): Promise<Built<Body>> {
      const { id } = await articles.bySlug(slug)
      const cached = compose(id, viewerId)
      if (cached) return cached
      return composed(id, viewerId, comments.get(id) ?? (await readParts(id)))
    },

    /**
     * The site's page of comments: the `limit` before the newest `skip`, oldest first (as the
     * list), and how many the article has. A thread of thousands costs a page its window only.
     */
    async window(slug: string, viewerId: number, limit: number, skip: number): Promise<{ list: Built<Body>; total: number }> {
      const { id } = await articles.bySlug(slug)
      const all = comments.get(id) ?? (await readParts(id))
      const end = Math.max(0, all.length - skip)
      return { list: await composed(id, viewerId, all.slice(Math.max(0, end - limit), end)), total: all.length }
    },
  }
}
export type CommentReads = ReturnType<typeof commentReads>
