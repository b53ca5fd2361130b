/**
 * v3 history reads, `public/get_transaction` and `private/order_debug` on the simulator's engine:
 * the engine's records (../sim-types.ts SimHistories), in v3's shapes
 * (./views-history.ts). A history takes one subaccount, or the whole wallet (`wallet` takes
 * precedence); deposits, withdrawals, transfers and interest answer at most 1000 rows, newest first.
 */

import type { V3Wire as W } from '@wh/exchange'
import { ACTION_TYPEHASH, encodeTradeDataV3, RPC, V3_MODULES, v3ActionDebug } from '@wh/exchange'
import { getAddress } from 'viem'
import { type Ctx, check, type Handler, ownSubaccount, requireWallet } from '../handler'
import { rpcErr, SimRpcError } from '../rpc-error'
import type { CashEvent } from '../sim-types'
import { e18, encoded } from './methods-funds'
import {
  V3FundingHistoryParams,
  V3HistoryParams,
  V3OrderParams,
  V3SubaccountParams,
  V3TransactionParams,
} from './params'
import * as V from './views-history'

/** The subaccounts a history call covers and its [start, end] window. */
function scope(ctx: Ctx, raw: Record<string, unknown>, schema = V3HistoryParams) {
  const w = requireWallet(ctx)
  const p = check<V3HistoryParams>(schema, raw)
  let subs: number[]
  if (p.wallet != null) {
    if (p.wallet.toLowerCase() !== w.owner.toLowerCase())
      throw new SimRpcError(
        RPC.HEADER_WALLET_MISMATCH,
        'The X-DeriveWallet header does not match the requested subaccount_id or wallet',
        p.wallet,
      )
    subs = [...ctx.engine.subaccounts.values()].filter((s) => s.wallet === w.wallet).map((s) => s.id)
  } else if (p.subaccount_id != null) subs = [ownSubaccount(ctx, p.subaccount_id).id]
  else throw rpcErr.params('subaccount_id or wallet is required')
  const start = p.start_timestamp ?? 0
  const end = p.end_timestamp ?? Number.MAX_SAFE_INTEGER
  const pick = <T extends CashEvent>(rows: T[]) =>
    rows.filter((r) => subs.includes(r.subaccountId) && r.timestampMs >= start && r.timestampMs <= end)
  return { subs, pick }
}

const history: Record<string, Handler> = {
  'private/get_deposit_history': (ctx, raw): W.DepositHistoryResult => {
    const { pick } = scope(ctx, raw)
    return { deposits: V.capNewest(pick(ctx.engine.history.deposits)).map((d) => V.depositEntry(ctx.engine, d)) }
  },

  'private/get_withdrawal_history': (ctx, raw): W.WithdrawalHistoryResult => {
    const { pick } = scope(ctx, raw)
    const rows = V.capNewest(pick(ctx.engine.history.withdrawals))
    return { withdrawals: rows.map((w) => V.withdrawalEntry(ctx.engine, w)) }
  },

  'private/get_erc20_transfer_history': (ctx, raw): W.TransferHistoryResult => {
    const { pick } = scope(ctx, raw)
    return { transfers: V.capNewest(pick(ctx.engine.history.transfers)).map((t) => V.transferEntry(ctx.engine, t)) }
  },

  'private/get_interest_history': (ctx, raw): W.InterestHistoryResult => {
    const { pick } = scope(ctx, raw)
    return { events: V.capNewest(pick(ctx.engine.history.interest)).map(V.interestEntry) }
  },

  'private/get_funding_history': (ctx, raw): W.PerpSettlementHistoryResponse => {
    const { pick } = scope(ctx, raw, V3FundingHistoryParams)
    const p = raw as V3FundingHistoryParams
    const rows = pick(ctx.engine.history.funding).filter(
      (f) => p.instrument_name == null || f.instrument === p.instrument_name,
    )
    const { items, pagination } = V.page(rows, p)
    return { events: items.map(V.fundingEntry), pagination }
  },

  'private/get_option_settlement_history': (ctx, raw): W.OptionSettlementHistoryResponse => {
    const { pick } = scope(ctx, { ...raw, start_timestamp: null, end_timestamp: null })
    return { settlements: pick(ctx.engine.history.settlements).map(V.settlementEntry) }
  },
}

const other: Record<string, Handler> = {
  'public/get_transaction': ({ engine }, raw): W.GetTransactionResult => {
    const p = check<{ op_uuid: string }>(V3TransactionParams, raw)
    const r = V.transactionResult(engine, p.op_uuid)
    if (!r) throw rpcErr.params(`unknown op_uuid ${p.op_uuid}`)
    return r
  },

  /** The order's Action rebuilt from its params, signature unchecked (as Derive's debug routes). */
  'private/order_debug': (ctx, raw): W.OrderDebugResponse => {
    const w = requireWallet(ctx)
    const p = check<V3OrderParams>(V3OrderParams, raw)
    const sub = ownSubaccount(ctx, check<{ subaccount_id: number }>(V3SubaccountParams, raw).subaccount_id)
    const inst = ctx.engine.catalog.get(p.instrument_name)
    if (!inst) throw rpcErr.instrument(p.instrument_name)
    const trade = {
      asset: inst.assetAddress,
      subId: inst.subId,
      limitPriceE18: e18(p.limit_price, 'limit_price'),
      amountE18: e18(p.amount, 'amount'),
      maxFeeE18: e18(p.max_fee, 'max_fee'),
      recipientId: BigInt(sub.id),
      isBid: p.direction === 'buy',
    }
    const data = encoded(() => encodeTradeDataV3(trade))
    const nonce = BigInt(p.nonce)
    const signer = getAddress(p.signer)
    const fields = { subaccountId: BigInt(sub.id), nonce, module: V3_MODULES.trade, data, owner: w.owner, signer }
    const action = { ...fields, expirySec: BigInt(p.signature_expiry_sec) }
    const { domain_separator, ...hashes } = v3ActionDebug(action, { chainId: ctx.engine.chainId })
    return {
      ...hashes,
      domain_separator,
      action_typehash: ACTION_TYPEHASH,
      module: V3_MODULES.trade,
      owner: w.owner,
      expected_signer: signer,
      recovered_signer: null,
      input_data: {
        subaccount_id: sub.id,
        // a bigint: the v3 layer writes it as an exact integer literal (server.ts), as the spec types it
        nonce: nonce as unknown as number,
        module: V3_MODULES.trade,
        expiry: Number(p.signature_expiry_sec),
        owner: w.owner,
        signer,
        data: {
          asset_address: inst.assetAddress,
          asset_sub_id: inst.subId.toString(),
          desired_amount: p.amount,
          limit_price: p.limit_price,
          worst_fee: p.max_fee,
          is_bid: trade.isBid,
          recipient_id: sub.id,
        },
      },
    }
  },
}

export const historyV3: Record<string, Handler> = { ...history, ...other }
