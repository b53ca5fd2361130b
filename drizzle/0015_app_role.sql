-- The application's database role (docs/architecture.md "Database access"). Migrations run as the
-- schema owner; the API and the worker log in as a role that is a member of wheelhouse_app, which
-- may read and write the service's tables but only append to the journal: a compromised process
-- (or a bug) cannot rewrite or erase money's history, and cannot drop the append-only triggers
-- of 0001, which only the owner could.
-- NOLOGIN: nobody signs in as wheelhouse_app itself; login roles are granted membership
-- (`pnpm db:migrate` grants it to DATABASE_URL's user). Roles belong to the cluster, so a second
-- database migrated on the same server finds it there. An owner without CREATEROLE needs the role
-- created beforehand by whoever administers the server.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'wheelhouse_app') THEN
    CREATE ROLE wheelhouse_app NOLOGIN;
  END IF;
END $$;
--> statement-breakpoint
GRANT USAGE ON SCHEMA public TO wheelhouse_app;
--> statement-breakpoint
-- full DML on every table; no TRUNCATE, REFERENCES, TRIGGER or DDL anywhere
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO wheelhouse_app;
--> statement-breakpoint
-- the journal (docs/ledger.md): append and read only
REVOKE UPDATE, DELETE, TRUNCATE ON ledger_events, ledger_postings FROM wheelhouse_app;
--> statement-breakpoint
-- nextval() needs USAGE; setval() would need UPDATE, which the application never calls
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO wheelhouse_app;
--> statement-breakpoint
-- ledger_append, ledger_reserve_withdrawal, ledger_reserve_funding, ledger_reserved and the trigger
-- functions run as the caller (none is SECURITY DEFINER), so they write with the role's own rights
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO wheelhouse_app;
--> statement-breakpoint
-- Tables, sequences and functions that later migrations create (as the owner, who runs this one)
-- get the same rights. A later table that must be append-only revokes UPDATE and DELETE itself.
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO wheelhouse_app;
--> statement-breakpoint
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO wheelhouse_app;
--> statement-breakpoint
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT EXECUTE ON FUNCTIONS TO wheelhouse_app;
