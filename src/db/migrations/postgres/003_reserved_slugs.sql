-- 003 (PostgreSQL; the same meaning as migrations/sqlite/003_reserved_slugs.sql):
-- no article at a reserved slug. `GET /api/articles/feed` is the feed, so
-- an article whose slug was `feed` could never be read; new slugs now avoid
-- the segments the routes use there (RESERVED_SLUGS in src/articles/slug.ts).
-- Such an article moves to the `feed-N` allocation would give it: N is the
-- first number, from the base's counter (2 when there is none), whose
-- `feed-N` is free, and the counter goes past it, so N is never handed out
-- again. Its old address answered the feed: no working link breaks. The same
-- statements run on SQLite.

INSERT INTO slug_counters (base, next)
SELECT 'feed', n + 1 FROM (
  WITH RECURSIVE c(n) AS (
    SELECT coalesce((SELECT next FROM slug_counters WHERE base = 'feed'), 2)
    UNION ALL
    -- the recursion stops at the first free number
    SELECT n + 1 FROM c WHERE EXISTS (SELECT 1 FROM articles WHERE slug = 'feed-' || n)
  )
  SELECT max(n) AS n FROM c
) free
WHERE EXISTS (SELECT 1 FROM articles WHERE slug = 'feed')
ON CONFLICT (base) DO UPDATE SET next = excluded.next;

UPDATE articles SET slug = 'feed-' || ((SELECT next FROM slug_counters WHERE base = 'feed') - 1) WHERE slug = 'feed';
