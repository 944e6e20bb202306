-- 002 (PostgreSQL; the same meaning as migrations/sqlite/002_lasting_ids.sql):
-- usernames unique on their normalised form, and the tables that several
-- instances share (change log, login throttle, slug counters). Ids come from
-- identity sequences, which never hand out a number twice: nothing to rebuild.

-- NFKC with ASCII case folded (lower() under "C" folds ASCII only): the form
-- uniqueness and lookups use. Existing names that collide under the new rule
-- keep working: the later one's key gets its id appended ('#' is never part
-- of a username).
ALTER TABLE users ADD COLUMN username_key text COLLATE "C";
UPDATE users u SET username_key = k.key
  FROM (SELECT id, CASE WHEN row_number() OVER (PARTITION BY base ORDER BY id) = 1 THEN base ELSE base || '#' || id END AS key
        FROM (SELECT id, lower(normalize(username, NFKC) COLLATE "C") AS base FROM users) b) k
  WHERE k.id = u.id;
ALTER TABLE users ALTER COLUMN username_key SET NOT NULL;
ALTER TABLE users ADD CONSTRAINT users_username_key_key UNIQUE (username_key);
DROP INDEX users_username_nocase;

-- the next suffix number of a slug base taken twice (see src/articles/slug.ts)
CREATE TABLE slug_counters (
  base text COLLATE "C" PRIMARY KEY,
  next integer NOT NULL
);

-- The change log (see src/db/postgres/changes.ts): every write appends the
-- dependency keys it changed, in its own transaction, with its transaction id;
-- each instance reads what committed since its last read before it answers
-- from its caches. Old rows are purged.
CREATE TABLE changes (
  seq  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  xid  xid8   NOT NULL DEFAULT pg_current_xact_id(),
  keys text   NOT NULL,
  at   bigint NOT NULL
);
CREATE INDEX changes_by_xid ON changes(xid);
CREATE INDEX changes_by_time ON changes(at);

-- Login and registration throttling windows shared by every instance. Keys are
-- fixed-size digests. UNLOGGED: not worth a WAL write per login; a crash of
-- the database server empties it, which only forgets recent failures.
CREATE UNLOGGED TABLE throttle (
  key      text   PRIMARY KEY,
  hits     integer NOT NULL,
  reset_at bigint NOT NULL
);
CREATE INDEX throttle_by_expiry ON throttle(reset_at);
