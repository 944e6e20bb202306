/**
 * The feed's cost model, stated once. A page of the feed has three plans,
 * each costed in rows read, from numbers known before reading (counters):
 * - sort: all the followed authors' articles (`followed` rows);
 * - walk: every article newest first, keeping the followed authors': about
 *   (offset + limit) * articles / followed rows;
 * - merge: each followed author's newest (offset + limit), merged: one
 *   index walk per author, a little more per author.
 * The cheapest runs, on a tie the simpler (sort, then walk); a page past the
 * last followed article reads nothing.
 *
 * It is written over `Ops` so that the same text is evaluated on numbers
 * (SQLite decides in code, list-sqlite.ts) and rendered as SQL (PostgreSQL
 * decides inside its one feed statement, list-postgres.ts, with no round
 * trip of its own). test/articles/feed-cost.test.ts checks that both choose alike.
 */
export type FeedPlan = 'sort' | 'walk' | 'merge'
/** `none`: past the end, nothing to read */
export type FeedChoice = FeedPlan | 'none'

/** What the costs are written in: E a quantity. */
export interface Arithmetic<E> {
  num(n: number): E
  add(a: E, b: E): E
  mul(a: E, b: E): E
  div(a: E, b: E): E
}
/** What the choice is written in: B a condition, R what is chosen. */
export interface Ops<E, B, R> extends Arithmetic<E> {
  lt(a: E, b: E): B
  ge(a: E, b: E): B
  and(a: B, b: B): B
  /** `then` if `c`, else `otherwise` */
  when(c: B, then: R, otherwise: R): R
}

/** A statement per author costs about as much as reading this many more rows. */
export const MERGE_OVERHEAD_ROWS = 10

// The inputs, in this order everywhere: `followed` the followed authors'
// articles (their counters), `authors` how many they are, `articles` all
// articles (a counter), and the page. Positional: no object per request.
type PageOf<E> = { offset: E; limit: E }

/** Past the end (offset >= 0, see schemas.ts): no plan is needed. */
export function feedPastEnd<E, B>(o: Pick<Ops<E, B, unknown>, 'ge'>, followed: E, page: PageOf<E>): B {
  return o.ge(page.offset, followed)
}

/** Rows `plan` reads for a page. */
export function feedCost<E>(o: Arithmetic<E>, plan: FeedPlan, followed: E, authors: E, articles: E, page: PageOf<E>): E {
  const n = o.add(page.offset, page.limit)
  if (plan === 'sort') return followed
  if (plan === 'walk') return o.div(o.mul(n, articles), followed)
  return o.mul(authors, o.add(n, o.num(MERGE_OVERHEAD_ROWS)))
}

/** The cheapest plan for a page that is not past the end; on a tie the simpler. */
export function cheapestFeedPlan<E, B, R>(
  o: Ops<E, B, NoInfer<R>>,
  plans: Record<FeedPlan, R>,
  followed: E,
  authors: E,
  articles: E,
  page: PageOf<E>,
): R {
  const sort = feedCost(o, 'sort', followed, authors, articles, page)
  const walk = feedCost(o, 'walk', followed, authors, articles, page)
  const merge = feedCost(o, 'merge', followed, authors, articles, page)
  return o.when(o.and(o.lt(merge, sort), o.lt(merge, walk)), plans.merge, o.when(o.lt(walk, sort), plans.walk, plans.sort))
}

/** The whole choice: nothing past the end, else the cheapest plan. */
export function feedChoice<E, B, R>(
  o: Ops<E, B, NoInfer<R>>,
  plans: Record<FeedChoice, R>,
  followed: E,
  authors: E,
  articles: E,
  page: PageOf<E>,
): R {
  return o.when(feedPastEnd(o, followed, page), plans.none, cheapestFeedPlan(o, plans, followed, authors, articles, page))
}

/** The model on numbers: what SQLite runs, and what PostgreSQL's rendering must agree with. */
export const NUMBERS = {
  num: (n: number) => n,
  add: (a: number, b: number) => a + b,
  mul: (a: number, b: number) => a * b,
  div: (a: number, b: number) => a / b,
  lt: (a: number, b: number) => a < b,
  ge: (a: number, b: number) => a >= b,
  and: (a: boolean, b: boolean) => a && b,
  when: <T>(c: boolean, then: T, otherwise: T): T => (c ? then : otherwise),
}
/** Each choice named by itself: the model on NUMBERS then returns the name. */
export const FEED_CHOICES = { none: 'none', sort: 'sort', walk: 'walk', merge: 'merge' } as const
