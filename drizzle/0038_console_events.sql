-- The account stream's withdrawal and deposit events for a frontend (docs/account-stream.md
-- "Events"). Two changes to 0021's triggers:
-- 1. `withdrawal.sent` whenever a withdrawal's hash appears or changes, whatever its state. 0021
--    emitted it only while the row stayed `requested`, but the send may record the hash in the same
--    update that marks the row mined (`sent`) or failed, and a user then saw `requested` →
--    `confirmed` with no `sent` between them. The `sent` event comes first, then the state's.
-- 2. `deposit.swept`: the deposit left its address for the platform's hot wallet (state `swept`),
--    the last step of a deposit's progress the console shows.
CREATE OR REPLACE FUNCTION account_events_withdrawal() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_kinds text[] := '{}';
  v_kind text;
BEGIN
  IF TG_OP = 'INSERT' THEN
    v_kinds := ARRAY['withdrawal.requested'];
  ELSE
    IF NEW.tx_hash IS NOT NULL AND NEW.tx_hash IS DISTINCT FROM OLD.tx_hash THEN
      v_kinds := v_kinds || 'withdrawal.sent'::text;
    END IF;
    IF NEW.state IS DISTINCT FROM OLD.state THEN
      v_kind := CASE NEW.state WHEN 'sent' THEN 'withdrawal.confirmed' WHEN 'failed' THEN 'withdrawal.failed' END;
      IF v_kind IS NOT NULL THEN
        v_kinds := v_kinds || v_kind;
      END IF;
    END IF;
  END IF;
  FOREACH v_kind IN ARRAY v_kinds LOOP
    PERFORM account_event_emit(NEW.user_id, v_kind, jsonb_build_object(
      'withdrawalId', NEW.id, 'state', NEW.state, 'chain', NEW.chain, 'currency', NEW.currency,
      'amount', NEW.amount::text, 'destination', NEW.destination, 'txHash', NEW.tx_hash,
      'networkFee', NEW.network_fee::text, 'reason', NEW.failure_reason));
  END LOOP;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION account_events_deposit_swept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM account_event_emit(NEW.user_id, 'deposit.swept', jsonb_build_object(
    'depositId', NEW.id, 'chain', NEW.chain, 'currency', NEW.token, 'amount', NEW.amount::text,
    'txHash', NEW.tx_hash));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER account_events_deposit_swept AFTER UPDATE ON deposits
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.state = 'swept' AND OLD.state IS DISTINCT FROM 'swept')
  EXECUTE FUNCTION account_events_deposit_swept();
