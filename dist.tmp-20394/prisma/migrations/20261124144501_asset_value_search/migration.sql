-- Substring search of assets (`search`: value ILIKE '%…%', and its count) through a trigram index, where the server
-- offers pg_trgm (PostgreSQL with its contrib modules, and a role allowed to create the extension). Elsewhere,
-- e.g. the embedded PGlite, which loads no extension, the search keeps reading the workspace's rows as before; the
-- index is not in schema.prisma for that reason (Prisma's schema cannot say "only where available").
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS pg_trgm;
      CREATE INDEX IF NOT EXISTS "asset_value_trgm_idx" ON "asset" USING gin ("value" gin_trgm_ops);
    EXCEPTION WHEN insufficient_privilege OR undefined_file OR undefined_object THEN
      RAISE NOTICE 'no trigram index for asset search (%)', SQLERRM;
    END;
  END IF;
END $$;
