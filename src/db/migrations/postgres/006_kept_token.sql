-- 006 (PostgreSQL; the same meaning as migrations/sqlite/006_kept_token.sql):
-- the token that changed the password last. A password change signs out every
-- other session (token_version moves on) but not the one that made it
-- (RealWorld 2.0): a token whose id (its `jti` claim) is kept_token still
-- verifies. NULL: none kept. Adding a nullable column without a default
-- rewrites no row.
ALTER TABLE users ADD COLUMN kept_token text;
