-- Operators are people (docs/operations.md "Operators and roles"): each signs in to the desk and
-- Bull Board with a name of their own and a memory-hard password hash (scrypt), or, when the desk
-- sits behind an authenticating proxy, by the name the proxy vouches for. A role says what they may
-- do: viewer (reads), operator (also proposes decisions and retries jobs), approver (also approves
-- what another operator proposed).
CREATE TABLE "operators" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"role" text NOT NULL,
	-- scrypt$N$r$p$salt$hash (base64url); null: signs in only through the proxy
	"password_hash" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"password_set_at" timestamp with time zone,
	"disabled_at" timestamp with time zone,
	CONSTRAINT "operators_name_key" UNIQUE("name"),
	CONSTRAINT "operators_name_check" CHECK ("name" ~ '^[a-z][a-z0-9._@-]{1,63}$'),
	CONSTRAINT "operators_role_check" CHECK ("role" in ('viewer', 'operator', 'approver'))
);
--> statement-breakpoint
-- A signed-in operator: the sha256 of a random token the desk handed out, until it expires or the
-- operator signs out. The desk checks it on every request (an index probe), never the password hash:
-- a memory-hard hash per request would be a lever for anyone to exhaust the desk.
CREATE TABLE "operator_sessions" (
	"token_hash" bytea PRIMARY KEY NOT NULL,
	"operator_id" uuid NOT NULL REFERENCES "operators" ("id"),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "operator_sessions_expires_idx" ON "operator_sessions" USING btree ("expires_at");
--> statement-breakpoint
-- Only the schema owner creates operators, gives roles and sets passwords (the operators CLI connects
-- with DATABASE_OWNER_URL): a compromised API or worker can read who is an operator but cannot make
-- itself one, nor raise a role. Sessions are the application's to open and close.
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON "operators" FROM wheelhouse_app;
--> statement-breakpoint
REVOKE UPDATE, TRUNCATE ON "operator_sessions" FROM wheelhouse_app;
