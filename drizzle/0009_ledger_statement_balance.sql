-- Zero-sum per currency, checked per INSERT statement instead of per event at commit (docs/ledger.md).
-- Every statement that writes postings must balance per (event, currency) by itself. Since a posting
-- may only join an event of its own transaction, and every statement balances, every event balances:
-- the same guarantee as the deferred per-event constraint trigger, without queueing one trigger
-- event per inserted event row (about a tenth of a batched append's time). The journal's append
-- writes all of an event's postings in one statement, so nothing it does changes.
CREATE OR REPLACE FUNCTION ledger_postings_own_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_bad record;
BEGIN
  -- a scalar subquery per distinct event: always an index probe, never a hash join over the
  -- whole journal (an anti join is what the planner picks once the table is large)
  IF EXISTS (
    SELECT 1 FROM (SELECT DISTINCT p.event_id FROM new_postings p) p
    WHERE (SELECT e.tx_id FROM ledger_events e WHERE e.id = p.event_id) IS DISTINCT FROM pg_current_xact_id()
  ) THEN
    RAISE EXCEPTION USING ERRCODE = 'WL004',
      MESSAGE = 'a posting must belong to an event written by the same transaction';
  END IF;
  SELECT n.event_id, n.currency INTO v_bad FROM new_postings n
  GROUP BY n.event_id, n.currency HAVING sum(n.amount) <> 0 LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'WL002',
      MESSAGE = format('ledger event %s does not sum to zero in %s (every insert statement must balance)',
        v_bad.event_id, v_bad.currency);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
DROP TRIGGER ledger_events_zero_sum ON ledger_events;
--> statement-breakpoint
DROP FUNCTION ledger_check_zero_sum();
