-- A user's own events, for WS /ws/account (docs/account-stream.md). Written only by the triggers
-- below, so no code path that changes a deposit, a withdrawal, a position, a fill, a wheel, a
-- conversion or a subaccount stop can forget to emit. `seq` is per user, gap-free and increasing:
-- it comes from the user's counter row, taken when the changing transaction commits (the triggers
-- are deferred), so per user the events become visible in `seq` order and a reader that asks for
-- "after n" never misses one that commits later with a smaller number.
CREATE TABLE "account_event_seqs" (
	"user_id" uuid PRIMARY KEY NOT NULL,
	"seq" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "account_events" (
	"user_id" uuid NOT NULL,
	"seq" bigint NOT NULL,
	"kind" text NOT NULL,
	"payload" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
	CONSTRAINT "account_events_user_id_seq_pk" PRIMARY KEY("user_id","seq")
);
--> statement-breakpoint
-- append-only: an event is never rewritten (0001's function refuses the statement)
CREATE TRIGGER account_events_append_only BEFORE UPDATE ON account_events
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
--> statement-breakpoint
REVOKE UPDATE ON account_events FROM wheelhouse_app;
--> statement-breakpoint
-- One event: the next number of the user (the upsert locks the user's counter row until commit,
-- which serialises the commits of one user's events and no one else's), the row, a wake-up for
-- the API processes (LISTEN account_events; the payload is the user id only).
CREATE FUNCTION account_event_emit(p_user uuid, p_kind text, p_payload jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  v_seq bigint;
BEGIN
  INSERT INTO account_event_seqs AS s (user_id, seq) VALUES (p_user, 1)
    ON CONFLICT (user_id) DO UPDATE SET seq = s.seq + 1
    RETURNING s.seq INTO v_seq;
  INSERT INTO account_events (user_id, seq, kind, payload) VALUES (p_user, v_seq, p_kind, jsonb_strip_nulls(p_payload));
  PERFORM pg_notify('account_events', p_user::text);
END $$;
--> statement-breakpoint
-- deposits: the scanner inserts the row and credits it (deposit_detected) in one transaction
CREATE FUNCTION account_events_deposit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM account_event_emit(NEW.user_id, 'deposit.credited', jsonb_build_object(
    'depositId', NEW.id, 'chain', NEW.chain, 'currency', NEW.token, 'amount', NEW.amount::text,
    'txHash', NEW.tx_hash));
  RETURN NULL;
END $$;
--> statement-breakpoint
-- withdrawals: requested (insert), sent (broadcast: its hash while still requested),
-- confirmed (state sent: mined), failed
CREATE FUNCTION account_events_withdrawal() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_kind text;
BEGIN
  IF TG_OP = 'INSERT' THEN
    v_kind := 'withdrawal.requested';
  ELSIF NEW.state IS DISTINCT FROM OLD.state THEN
    v_kind := CASE NEW.state WHEN 'sent' THEN 'withdrawal.confirmed' WHEN 'failed' THEN 'withdrawal.failed' END;
  ELSIF NEW.state = 'requested' AND NEW.tx_hash IS NOT NULL THEN
    v_kind := 'withdrawal.sent';
  END IF;
  IF v_kind IS NOT NULL THEN
    PERFORM account_event_emit(NEW.user_id, v_kind, jsonb_build_object(
      'withdrawalId', NEW.id, 'state', NEW.state, 'chain', NEW.chain, 'currency', NEW.currency,
      'amount', NEW.amount::text, 'destination', NEW.destination, 'txHash', NEW.tx_hash,
      'networkFee', NEW.network_fee::text, 'reason', NEW.failure_reason));
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- positions: each state change (placing is `position.funded`: the collateral is in the
-- subaccount; settled is `position.settled`), and each order the leg places
CREATE FUNCTION account_events_position() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' OR NEW.state IS DISTINCT FROM OLD.state THEN
    PERFORM account_event_emit(NEW.user_id,
      CASE NEW.state WHEN 'placing' THEN 'position.funded' WHEN 'settled' THEN 'position.settled' ELSE 'position.state' END,
      jsonb_build_object(
        'positionId', NEW.id, 'wheelId', NEW.wheel_id, 'asset', NEW.asset, 'side', NEW.side, 'state', NEW.state,
        'from', CASE WHEN TG_OP = 'UPDATE' THEN OLD.state END,
        'collateralCurrency', NEW.collateral_currency, 'collateralAmount', NEW.collateral_amount::text,
        'instrument', NEW.instrument, 'filledE18', NEW.filled_e18::text, 'premium', NEW.premium::text,
        'fees', NEW.fees::text, 'outcome', NEW.outcome, 'settlementCost', NEW.settlement_cost::text,
        'reason', NEW.reason));
  END IF;
  IF NEW.order_id IS NOT NULL AND (TG_OP = 'INSERT' OR NEW.order_id IS DISTINCT FROM OLD.order_id) THEN
    PERFORM account_event_emit(NEW.user_id, 'order.placed', jsonb_build_object(
      'positionId', NEW.id, 'orderId', NEW.order_id, 'instrument', NEW.instrument,
      'strikeE18', NEW.strike_e18::text, 'expirySec', NEW.expiry_sec::text, 'sizeE18', NEW.size_e18::text));
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION account_events_fill() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM account_event_emit(NEW.user_id, 'fill', jsonb_build_object(
    'positionId', NEW.position_id, 'tradeId', NEW.trade_id, 'amountE18', NEW.amount_e18::text,
    'priceE18', NEW.price_e18::text, 'premium', NEW.premium::text, 'exchangeFee', NEW.exchange_fee::text,
    'platformFee', NEW.platform_fee::text, 'tradedAt', NEW.traded_at));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION account_events_wheel() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM account_event_emit(NEW.user_id, 'wheel.state', jsonb_build_object(
    'wheelId', NEW.id, 'asset', NEW.asset, 'state', NEW.state, 'from', CASE WHEN TG_OP = 'UPDATE' THEN OLD.state END,
    'holding', NEW.holding, 'cycles', NEW.cycles::text, 'stopMode', NEW.stop_mode,
    'currentPositionId', NEW.current_position_id, 'reason', NEW.reason));
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE FUNCTION account_events_conversion() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM account_event_emit(NEW.user_id, 'conversion', jsonb_build_object(
    'conversionId', NEW.id, 'wheelId', NEW.wheel_id, 'positionId', NEW.position_id, 'asset', NEW.asset,
    'direction', NEW.direction, 'state', NEW.state, 'from', CASE WHEN TG_OP = 'UPDATE' THEN OLD.state END,
    'sellCurrency', NEW.sell_currency, 'buyCurrency', NEW.buy_currency, 'amountIn', NEW.amount_in::text,
    'amountOut', NEW.amount_out::text, 'reason', NEW.reason));
  RETURN NULL;
END $$;
--> statement-breakpoint
-- a stop raised by reconciliation (docs/operations.md), and its clearing
CREATE FUNCTION account_events_subaccount() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM account_event_emit(NEW.user_id,
    CASE WHEN NEW.stopped_at IS NOT NULL THEN 'subaccount.stopped' ELSE 'subaccount.resumed' END,
    jsonb_build_object('subaccountId', NEW.id, 'asset', NEW.asset, 'stoppedAt', NEW.stopped_at, 'reason', NEW.stop_reason));
  RETURN NULL;
END $$;
--> statement-breakpoint
-- a decision of the wheel's log (docs/trading.md "Why: the decision log"); the text is the API's
CREATE FUNCTION account_events_decision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM account_event_emit(NEW.user_id, 'wheel.decision', jsonb_build_object(
    'decisionId', NEW.id, 'wheelId', NEW.wheel_id, 'positionId', NEW.position_id, 'kind', NEW.kind,
    'reason', NEW.reason));
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Deferred to commit: the counter row is locked only between the end of the transaction's work
-- and its commit. The WHEN conditions are evaluated at the change itself (no queued call for an
-- update that changes nothing the stream shows: a retry counter, a next_attempt_at).
CREATE CONSTRAINT TRIGGER account_events_deposit_insert AFTER INSERT ON deposits
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION account_events_deposit();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER account_events_withdrawal_insert AFTER INSERT ON withdrawals
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION account_events_withdrawal();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER account_events_withdrawal_update AFTER UPDATE ON withdrawals
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.tx_hash IS DISTINCT FROM NEW.tx_hash)
  EXECUTE FUNCTION account_events_withdrawal();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER account_events_position_insert AFTER INSERT ON positions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION account_events_position();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER account_events_position_update AFTER UPDATE ON positions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.order_id IS DISTINCT FROM NEW.order_id)
  EXECUTE FUNCTION account_events_position();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER account_events_fill_insert AFTER INSERT ON position_fills
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION account_events_fill();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER account_events_wheel_insert AFTER INSERT ON wheels
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION account_events_wheel();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER account_events_wheel_update AFTER UPDATE ON wheels
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.holding IS DISTINCT FROM NEW.holding
    OR OLD.cycles IS DISTINCT FROM NEW.cycles OR OLD.current_position_id IS DISTINCT FROM NEW.current_position_id)
  EXECUTE FUNCTION account_events_wheel();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER account_events_conversion_insert AFTER INSERT ON conversions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION account_events_conversion();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER account_events_conversion_update AFTER UPDATE ON conversions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state)
  EXECUTE FUNCTION account_events_conversion();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER account_events_subaccount_update AFTER UPDATE ON subaccounts
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (OLD.stopped_at IS DISTINCT FROM NEW.stopped_at)
  EXECUTE FUNCTION account_events_subaccount();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER account_events_decision_insert AFTER INSERT ON wheel_decisions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION account_events_decision();
