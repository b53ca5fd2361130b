CREATE TABLE "liability_roots" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"root" "bytea" NOT NULL,
	"currencies" text[] NOT NULL,
	"totals" jsonb NOT NULL,
	"leaf_count" integer NOT NULL,
	"depth" smallint NOT NULL,
	"balances_at" timestamp with time zone NOT NULL,
	"ledger_snapshot" text NOT NULL,
	"ledger_last_event_id" uuid,
	"negatives" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "liability_tree_leaves" (
	"root_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"idx" integer NOT NULL,
	"salt" "bytea" NOT NULL,
	CONSTRAINT "liability_tree_leaves_pkey" PRIMARY KEY("root_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "liability_tree_nodes" (
	"root_id" uuid NOT NULL,
	"level" smallint NOT NULL,
	"idx" integer NOT NULL,
	"hash" "bytea" NOT NULL,
	"sums" numeric(78, 0)[] NOT NULL,
	CONSTRAINT "liability_tree_nodes_pkey" PRIMARY KEY("root_id","level","idx")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "liability_roots_root_key" ON "liability_roots" USING btree ("root");--> statement-breakpoint
CREATE INDEX "liability_roots_created_idx" ON "liability_roots" USING btree ("created_at","id");--> statement-breakpoint
-- The application's rights (0015_app_role.sql): a published root is kept forever and never
-- changed, so the role may only add and read roots; a tree's nodes and leaves are written once and
-- may be deleted when the tree is old (the root stays), never updated.
GRANT SELECT, INSERT ON liability_roots TO wheelhouse_app;
--> statement-breakpoint
REVOKE UPDATE, DELETE, TRUNCATE ON liability_roots FROM wheelhouse_app;
--> statement-breakpoint
GRANT SELECT, INSERT, DELETE ON liability_tree_nodes, liability_tree_leaves TO wheelhouse_app;
--> statement-breakpoint
REVOKE UPDATE, TRUNCATE ON liability_tree_nodes, liability_tree_leaves FROM wheelhouse_app;
