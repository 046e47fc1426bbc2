-- CreateTable
CREATE TABLE "asset_count" (
    "workspaceId" UUID NOT NULL,
    "kind" "AssetKind" NOT NULL,
    "enabled" BOOLEAN NOT NULL,
    "dismissed" BOOLEAN NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "asset_count_pkey" PRIMARY KEY ("workspaceId","kind","enabled","dismissed")
);

-- CreateTable
CREATE TABLE "finding_count" (
    "workspaceId" UUID NOT NULL,
    "status" "FindingStatus" NOT NULL,
    "severity" "Severity" NOT NULL,
    "count" INTEGER NOT NULL,

    CONSTRAINT "finding_count_pkey" PRIMARY KEY ("workspaceId","status","severity")
);

-- CreateTable
CREATE TABLE "finding_target_count" (
    "targetId" UUID NOT NULL,
    "open" INTEGER NOT NULL,

    CONSTRAINT "finding_target_count_pkey" PRIMARY KEY ("targetId")
);

-- AddForeignKey
ALTER TABLE "asset_count" ADD CONSTRAINT "asset_count_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "finding_count" ADD CONSTRAINT "finding_count_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "workspace"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "finding_target_count" ADD CONSTRAINT "finding_target_count_targetId_fkey" FOREIGN KEY ("targetId") REFERENCES "target"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Counters kept exact by triggers: every writer, set-based or row by row, FK cascades included, moves them in its
-- own transaction. Inserts and deletes are counted per statement (transition tables, so a set-based insert of
-- 100,000 rows is one counter write); updates per row, only when a counted column changes. Each trigger hands its deltas as JSON to one
-- apply function per counter: increments upsert, decrements only UPDATE, and neither writes the counter of a
-- workspace or target that is gone (deleted by the same statement, whose cascades may still be moving rows; a
-- counter row already written in this transaction is checked against its parent again when it is updated).
-- Rows are visited in key order to keep the lock order stable.

CREATE FUNCTION "asset_count_apply"(deltas jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "asset_count" AS c ("workspaceId", "kind", "enabled", "dismissed", "count")
  SELECT (d->>'w')::uuid, (d->>'k')::"AssetKind", (d->>'e')::boolean, (d->>'x')::boolean, (d->>'n')::int
  FROM jsonb_array_elements(coalesce(deltas, '[]')) AS d
  WHERE (d->>'n')::int > 0 AND EXISTS (SELECT 1 FROM "workspace" w WHERE w."id" = (d->>'w')::uuid)
  ORDER BY 1, 2, 3, 4
  ON CONFLICT ("workspaceId", "kind", "enabled", "dismissed") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
  UPDATE "asset_count" AS c SET "count" = c."count" + (d->>'n')::int
  FROM jsonb_array_elements(coalesce(deltas, '[]')) AS d
  WHERE (d->>'n')::int < 0 AND c."workspaceId" = (d->>'w')::uuid AND c."kind" = (d->>'k')::"AssetKind"
    AND c."enabled" = (d->>'e')::boolean AND c."dismissed" = (d->>'x')::boolean
    AND EXISTS (SELECT 1 FROM "workspace" w WHERE w."id" = c."workspaceId");
END $$;

CREATE FUNCTION "asset_count_trigger"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE deltas jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    -- The hot path (every new asset): one statement, and the rows' workspace exists (their foreign key says so).
    INSERT INTO "asset_count" AS c ("workspaceId", "kind", "enabled", "dismissed", "count")
    SELECT "workspaceId", "kind", "enabled", "dismissedAt" IS NOT NULL, count(*) FROM new_rows GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT ("workspaceId", "kind", "enabled", "dismissed") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
  ELSIF TG_OP = 'DELETE' THEN
    SELECT jsonb_agg(jsonb_build_object('w', w, 'k', k, 'e', e, 'x', x, 'n', -n)) INTO deltas FROM (
      SELECT "workspaceId" AS w, "kind" AS k, "enabled" AS e, "dismissedAt" IS NOT NULL AS x, count(*) AS n FROM old_rows GROUP BY 1, 2, 3, 4) g;
  END IF;
  IF deltas IS NOT NULL THEN PERFORM "asset_count_apply"(deltas); END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "asset_count_insert" AFTER INSERT ON "asset" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "asset_count_trigger"();
CREATE TRIGGER "asset_count_delete" AFTER DELETE ON "asset" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "asset_count_trigger"();

-- Updates are counted per row, and only when a counted column changes: every sighting of an asset updates its
-- row, and the WHEN condition (checked without running any SQL) keeps those free.
CREATE FUNCTION "asset_count_row_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "asset_count_apply"(jsonb_build_array(
    jsonb_build_object('w', OLD."workspaceId", 'k', OLD."kind", 'e', OLD."enabled", 'x', OLD."dismissedAt" IS NOT NULL, 'n', -1),
    jsonb_build_object('w', NEW."workspaceId", 'k', NEW."kind", 'e', NEW."enabled", 'x', NEW."dismissedAt" IS NOT NULL, 'n', 1)));
  RETURN NULL;
END $$;

CREATE TRIGGER "asset_count_update" AFTER UPDATE OF "workspaceId", "kind", "enabled", "dismissedAt" ON "asset" FOR EACH ROW
  WHEN (OLD."workspaceId" IS DISTINCT FROM NEW."workspaceId" OR OLD."kind" IS DISTINCT FROM NEW."kind"
        OR OLD."enabled" IS DISTINCT FROM NEW."enabled" OR (OLD."dismissedAt" IS NULL) <> (NEW."dismissedAt" IS NULL))
  EXECUTE FUNCTION "asset_count_row_update"();

CREATE FUNCTION "finding_count_apply"(deltas jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "finding_count" AS c ("workspaceId", "status", "severity", "count")
  SELECT (d->>'w')::uuid, (d->>'s')::"FindingStatus", (d->>'v')::"Severity", (d->>'n')::int
  FROM jsonb_array_elements(coalesce(deltas, '[]')) AS d
  WHERE (d->>'n')::int > 0 AND EXISTS (SELECT 1 FROM "workspace" w WHERE w."id" = (d->>'w')::uuid)
  ORDER BY 1, 2, 3
  ON CONFLICT ("workspaceId", "status", "severity") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
  UPDATE "finding_count" AS c SET "count" = c."count" + (d->>'n')::int
  FROM jsonb_array_elements(coalesce(deltas, '[]')) AS d
  WHERE (d->>'n')::int < 0 AND c."workspaceId" = (d->>'w')::uuid AND c."status" = (d->>'s')::"FindingStatus" AND c."severity" = (d->>'v')::"Severity"
    AND EXISTS (SELECT 1 FROM "workspace" w WHERE w."id" = c."workspaceId");
END $$;

CREATE FUNCTION "finding_target_count_apply"(deltas jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "finding_target_count" AS c ("targetId", "open")
  SELECT (d->>'t')::uuid, (d->>'n')::int FROM jsonb_array_elements(coalesce(deltas, '[]')) AS d
  WHERE (d->>'n')::int > 0 AND EXISTS (SELECT 1 FROM "target" t WHERE t."id" = (d->>'t')::uuid)
  ORDER BY 1
  ON CONFLICT ("targetId") DO UPDATE SET "open" = c."open" + EXCLUDED."open";
  UPDATE "finding_target_count" AS c SET "open" = c."open" + (d->>'n')::int
  FROM jsonb_array_elements(coalesce(deltas, '[]')) AS d WHERE (d->>'n')::int < 0 AND c."targetId" = (d->>'t')::uuid
    AND EXISTS (SELECT 1 FROM "target" t WHERE t."id" = c."targetId");
END $$;

-- finding: its (status, severity) counter, and the open counts of the targets it is linked to when it opens or
-- closes. A deleted finding's links go by cascade after it is gone, when they can no longer see it was open: its
-- targets are counted down before the row goes (finding_target_count_before_delete).
CREATE FUNCTION "finding_count_trigger"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE deltas jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    -- The hot path (every new finding): one statement, and the rows' workspace exists (their foreign key says so).
    INSERT INTO "finding_count" AS c ("workspaceId", "status", "severity", "count")
    SELECT "workspaceId", "status", "severity", count(*) FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT ("workspaceId", "status", "severity") DO UPDATE SET "count" = c."count" + EXCLUDED."count";
  ELSIF TG_OP = 'DELETE' THEN
    SELECT jsonb_agg(jsonb_build_object('w', w, 's', s, 'v', v, 'n', -n)) INTO deltas FROM (
      SELECT "workspaceId" AS w, "status" AS s, "severity" AS v, count(*) AS n FROM old_rows GROUP BY 1, 2, 3) g;
  END IF;
  IF deltas IS NOT NULL THEN PERFORM "finding_count_apply"(deltas); END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "finding_count_insert" AFTER INSERT ON "finding" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "finding_count_trigger"();

-- Updates per row, only when status, severity or workspace change (every sighting updates the row): the
-- (status, severity) counters move, and when the finding opens or closes, the open counts of its targets.
CREATE FUNCTION "finding_count_row_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "finding_count_apply"(jsonb_build_array(
    jsonb_build_object('w', OLD."workspaceId", 's', OLD."status", 'v', OLD."severity", 'n', -1),
    jsonb_build_object('w', NEW."workspaceId", 's', NEW."status", 'v', NEW."severity", 'n', 1)));
  IF (OLD."status" = 'open') <> (NEW."status" = 'open') THEN
    PERFORM "finding_target_count_apply"((
      SELECT jsonb_agg(jsonb_build_object('t', l."targetId", 'n', CASE WHEN NEW."status" = 'open' THEN 1 ELSE -1 END) ORDER BY l."targetId")
      FROM "finding_target" l WHERE l."findingId" = NEW."id"));
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "finding_count_update" AFTER UPDATE OF "workspaceId", "status", "severity" ON "finding" FOR EACH ROW
  WHEN (OLD."workspaceId" IS DISTINCT FROM NEW."workspaceId" OR OLD."status" IS DISTINCT FROM NEW."status" OR OLD."severity" IS DISTINCT FROM NEW."severity")
  EXECUTE FUNCTION "finding_count_row_update"();
CREATE TRIGGER "finding_count_delete" AFTER DELETE ON "finding" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "finding_count_trigger"();

CREATE FUNCTION "finding_target_count_before_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "finding_target_count" AS c SET "open" = c."open" - 1
  FROM "finding_target" l WHERE l."findingId" = OLD."id" AND c."targetId" = l."targetId"
    AND EXISTS (SELECT 1 FROM "target" t WHERE t."id" = c."targetId");
  RETURN OLD;
END $$;

CREATE TRIGGER "finding_target_count_before_delete" BEFORE DELETE ON "finding"
  FOR EACH ROW WHEN (OLD."status" = 'open') EXECUTE FUNCTION "finding_target_count_before_delete"();

-- finding_target: a link counts when its finding is open. The findings are locked (FOR SHARE) before their status
-- is read, so a concurrent status change either commits first (and is seen here) or waits for this transaction
-- (and then sees this link when it counts its targets).
CREATE FUNCTION "finding_target_count_trigger"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE deltas jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    -- The status as locked (the newest committed version), not as of the statement's snapshot.
    WITH locked AS (
      SELECT f."id", f."status" FROM "finding" f WHERE f."id" IN (SELECT "findingId" FROM new_rows) ORDER BY f."id" FOR SHARE)
    SELECT jsonb_agg(jsonb_build_object('t', t, 'n', n)) INTO deltas FROM (
      SELECT n."targetId" AS t, count(*) AS n FROM new_rows n
      JOIN locked f ON f."id" = n."findingId" AND f."status" = 'open' GROUP BY 1) g;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT jsonb_agg(jsonb_build_object('t', t, 'n', -n)) INTO deltas FROM (
      SELECT o."targetId" AS t, count(*) AS n FROM old_rows o
      JOIN "finding" f ON f."id" = o."findingId" AND f."status" = 'open' GROUP BY 1) g;
  END IF;
  IF deltas IS NOT NULL THEN PERFORM "finding_target_count_apply"(deltas); END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "finding_target_count_insert" AFTER INSERT ON "finding_target" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "finding_target_count_trigger"();

-- A link's keys never change in practice (each sighting moves lastSeenAt only); if they do, the old link is
-- counted out and the new one in, as a delete and an insert would.
CREATE FUNCTION "finding_target_count_row_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "finding_target_count_apply"((
    SELECT jsonb_agg(d) FROM (
      SELECT jsonb_build_object('t', OLD."targetId", 'n', -1) AS d FROM "finding" f WHERE f."id" = OLD."findingId" AND f."status" = 'open'
      UNION ALL
      SELECT jsonb_build_object('t', NEW."targetId", 'n', 1) FROM (SELECT f."status" FROM "finding" f WHERE f."id" = NEW."findingId" FOR SHARE) f
      WHERE f."status" = 'open') u));
  RETURN NULL;
END $$;

CREATE TRIGGER "finding_target_count_update" AFTER UPDATE OF "findingId", "targetId" ON "finding_target" FOR EACH ROW
  WHEN (OLD."findingId" IS DISTINCT FROM NEW."findingId" OR OLD."targetId" IS DISTINCT FROM NEW."targetId")
  EXECUTE FUNCTION "finding_target_count_row_update"();
CREATE TRIGGER "finding_target_count_delete" AFTER DELETE ON "finding_target" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "finding_target_count_trigger"();

-- What is already there.
INSERT INTO "asset_count" ("workspaceId", "kind", "enabled", "dismissed", "count")
SELECT "workspaceId", "kind", "enabled", "dismissedAt" IS NOT NULL, count(*) FROM "asset" GROUP BY 1, 2, 3, 4;
INSERT INTO "finding_count" ("workspaceId", "status", "severity", "count")
SELECT "workspaceId", "status", "severity", count(*) FROM "finding" GROUP BY 1, 2, 3;
INSERT INTO "finding_target_count" ("targetId", "open")
SELECT l."targetId", count(*) FROM "finding_target" l JOIN "finding" f ON f."id" = l."findingId" WHERE f."status" = 'open' GROUP BY 1;
