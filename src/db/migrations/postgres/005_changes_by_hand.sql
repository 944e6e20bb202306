-- 005 (PostgreSQL; the same meaning as migrations/sqlite/005_changes_by_hand.sql):
-- changes made by any other writer (psql by hand, a script) reach every
-- instance's caches, as the service's own writes do through the change log.
--
-- Every connection the service opens is named 'conduit' (application_name,
-- see src/db/postgres/client.ts). A statement of any other connection that
-- changes a table the service answers from appends one EVERYTHING row (keys
-- '-1') to the change log, in its own transaction: instances read it like any
-- other row, at their next request. Statement-level triggers, so a bulk
-- UPDATE costs one check, not one per row; and one row per transaction (a
-- transaction-local setting remembers it was written), so a DELETE that
-- cascades through four tables, or a script of a thousand statements, still
-- appends one row. The service's own statements stop at the WHEN clause.

-- SECURITY DEFINER: an operator's role that may edit the content but not the
-- change log still has its edits recorded (the function can only run as a
-- trigger, and only appends this row).
CREATE FUNCTION changed_by_hand() RETURNS trigger LANGUAGE plpgsql
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF current_setting('conduit.changed_by_hand', true) IS DISTINCT FROM pg_current_xact_id()::text THEN
    -- the log of the schema the changed table is in, whatever the session's search_path
    EXECUTE format('INSERT INTO %I.changes (keys, at) VALUES (''-1'', $1)', TG_TABLE_SCHEMA)
      USING (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
    PERFORM set_config('conduit.changed_by_hand', pg_current_xact_id()::text, true);
  END IF;
  RETURN NULL;
END $$;

-- <table>_changed_by_hand on each table the service answers from (counters:
-- the article count of the unfiltered list)
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['users', 'follows', 'tags', 'articles', 'article_tags', 'favorites', 'comments', 'counters'] LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %I FOR EACH STATEMENT '
                   'WHEN (current_setting(''application_name'') <> ''conduit'') EXECUTE FUNCTION changed_by_hand()',
                   t || '_changed_by_hand', t);
  END LOOP;
END $$;
