-- 006: the token that changed the password last. A password change signs out
-- every other session (token_version moves on) but not the one that made it
-- (RealWorld 2.0): a token whose id (its `jti` claim) is kept_token still
-- verifies. NULL: none kept (never changed, or reset or locked by an operator,
-- which signs every session out).
ALTER TABLE users ADD COLUMN kept_token TEXT;
