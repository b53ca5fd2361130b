/**
 * The L1 side of a treasury withdrawal (docs/exchange-v3.md "Money out"): Derive pushes the payout in
 * the transaction that settles the withdrawal's batch (the batch's `transaction_hash`), through its
 * WithdrawalOutbox, which emits `WithdrawalPaid(id, asset, recipient, paid, remaining)`. The outbox's
 * id derivation is not published, so the payout is recognised by what is published and ours alone:
 * the configured outbox, the recipient (the platform's hot wallet, which nobody else withdraws to),
 * the asset, in that transaction, once it is the chain's confirmations deep.
 */
import { type ChainName, WITHDRAWAL_PAID_EVENT } from '@wh/wallet'
import {
  type Address,
  getAddress,
  type Hex,
  isAddressEqual,
  parseEventLogs,
  TransactionReceiptNotFoundError,
} from 'viem'
import type { TreasuryDeps } from './treasury'

export type L1Payout =
  | { readonly state: 'pending'; readonly reason: string }
  | { readonly state: 'reverted' }
  /** `paid` arrived at the recipient; `remaining` is what the outbox still owes (its throttle queued it) */
  | { readonly state: 'paid'; readonly paid: bigint; readonly remaining: bigint }

export async function l1PayoutOf(
  deps: Pick<TreasuryDeps, 'clients' | 'registry'>,
  chain: ChainName,
  p: { readonly txHash: Hex; readonly outbox: Address; readonly recipient: Address; readonly asset: Address },
): Promise<L1Payout> {
  const c = deps.clients.get(chain)
  if (!c) throw new Error(`no client for ${chain}`)
  let receipt: Awaited<ReturnType<typeof c.publicClient.getTransactionReceipt>>
  try {
    receipt = await c.publicClient.getTransactionReceipt({ hash: p.txHash })
  } catch (err) {
    if (err instanceof TransactionReceiptNotFoundError) return { state: 'pending', reason: 'the payout is not mined' }
    throw err
  }
  const confirmations = BigInt((deps.registry.get(chain) ?? c.info).confirmations)
  const head = await c.publicClient.getBlockNumber({ cacheTime: 0 })
  if (head < receipt.blockNumber + confirmations) return { state: 'pending', reason: 'the payout is not final yet' }
  if (receipt.status !== 'success') return { state: 'reverted' }
  const ours = parseEventLogs({
    abi: [WITHDRAWAL_PAID_EVENT],
    logs: receipt.logs.filter((l) => isAddressEqual(l.address, getAddress(p.outbox))),
  }).filter((l) => isAddressEqual(l.args.recipient, p.recipient) && isAddressEqual(l.args.asset, p.asset))
  if (ours.length === 0) return { state: 'pending', reason: 'the settling transaction paid nothing to the hot wallet' }
  return {
    state: 'paid',
    paid: ours.reduce((sum, l) => sum + l.args.paid, 0n),
    remaining: ours.reduce((sum, l) => sum + l.args.remaining, 0n),
  }
}
