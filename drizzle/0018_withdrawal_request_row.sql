-- A withdrawal request is written in one INSERT (docs/chains.md "Withdrawals"): the reserve takes the
-- route, the destination and the Idempotency-Key with the amount, so no row ever exists without them
-- and @wh/withdrawals (packages/withdrawals/src/request.ts) needs no UPDATE after it. The lock of the
-- user's transit row and the free-balance check are 0003's, unchanged. The new parameters default to
-- NULL, so a call with the five of 0003 still works (a process of the previous release during a
-- rolling deploy). A second function beside the old one would make such a call ambiguous: replaced.
DROP FUNCTION ledger_reserve_withdrawal(uuid, uuid, text, text, numeric);
--> statement-breakpoint
CREATE FUNCTION ledger_reserve_withdrawal(p_id uuid, p_user uuid, p_currency text, p_transit text, p_amount numeric,
  p_chain text DEFAULT NULL, p_destination text DEFAULT NULL, p_idempotency_key text DEFAULT NULL)
RETURNS TABLE (ok boolean, free numeric)
LANGUAGE plpgsql AS $$
DECLARE
  v_free numeric;
BEGIN
  PERFORM 1 FROM ledger_balances b WHERE b.account = p_transit AND b.currency = p_currency FOR UPDATE;
  SELECT
    (SELECT coalesce(sum(b.balance), 0) FROM ledger_balances b WHERE b.account = p_transit AND b.currency = p_currency)
    - ledger_reserved(p_user, p_currency)
  INTO v_free;
  IF v_free < p_amount THEN
    RETURN QUERY SELECT false, v_free;
    RETURN;
  END IF;
  INSERT INTO withdrawals (id, user_id, state, currency, amount, chain, destination, idempotency_key)
    VALUES (p_id, p_user, 'requested', p_currency, p_amount, p_chain, p_destination, p_idempotency_key);
  RETURN QUERY SELECT true, v_free - p_amount;
END $$;
