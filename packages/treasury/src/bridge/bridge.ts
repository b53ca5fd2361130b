/**
 * The bridge (the worker's ticks `bridge-{chain}`, queue `treasury`, one per source chain, every 60 s): moves the
 * surplus of a chain's hot wallet to the platform's wallet on the exchange chain through a
 * BridgeAdapter (@wh/wallet), and journals it: `bridged` (ownTxKey slot 0 of the source
 * transaction: from platformHot(chain) into platformHot(EXCHANGE_CHAIN), the bridge's fee as overhead) and the
 * source transaction's `gas_spent` (slot 1, platform overhead: no user). docs/chains.md "Bridge".
 *
 * Surplus = the hot wallet's USDC − BRIDGE_RETAIN_USDC − the chain's `requested` USDC withdrawals
 * (they leave from this wallet and must not be bridged away from under them).
 *
 * Crash safety, as for sweeps: the source transaction goes through the outbox (signed and recorded
 * before broadcast, purpose 'bridge', refId a fresh transfer id). At most one transfer per chain is
 * open: a run first resumes the chain's newest bridge row if it is not journaled yet, and only a
 * run that finds it journaled (or none) may start another, under a Redis lock per chain. So a crash
 * anywhere resumes the same transaction, and its events land once (the journal's keys).
 */
import { randomUUID } from 'node:crypto'
import { type L2ChainName, LOCK_TTL_MS } from '@wh/config'
import { withLock } from '@wh/jobs'
import { appendBatch, type EventInput, ownTxKey } from '@wh/ledger'
import {
  type BridgeAdapter,
  type BridgeTransfer,
  type ChainName,
  DeriveV3DepositAdapter,
  hotWalletUsdc,
  type OutboundRecord,
  type OutboxDeps,
  outboxOf,
  requestedUsdc,
} from '@wh/wallet'
import { type Address, getAddress, type Hex } from 'viem'
import { cctpDepsOf, L1, l2Demand } from '../cctp/plan'
import { runCctpSweep } from '../cctp/route'
import { type BridgeDeps, type Log, summaryOf } from '../deps'
import { bridgeLockKey } from '../locks'

/** Below this surplus (1 USDC) a bridge is not worth its gas: wait for more. */
export const BRIDGE_MIN_BASE_UNITS = 1_000_000n

export interface BridgeRunOptions {
  /** test hook: runs after the adapter reports 'delivered' and before the journal's commit */
  readonly beforeRecord?: () => Promise<void> | void
}

export type BridgeRunResult =
  | { readonly status: 'idle'; readonly surplusBaseUnits: bigint }
  | { readonly status: 'pending'; readonly transferId: string; readonly txHash: string }
  | {
      readonly status: 'bridged'
      readonly transferId: string
      readonly txHash: string
      readonly amountBaseUnits: bigint
      readonly feeBaseUnits: bigint
    }
  | { readonly status: 'failed'; readonly transferId: string; readonly txHash: string }

interface BridgeRow {
  id: string
  ref_id: string
  amount: string
  tx_hash: string
  nonce: string
  state: OutboundRecord['state']
  gas_used: string | null
  effective_gas_price: string | null
  block_number: string | null
}

const toRecord = (r: BridgeRow): OutboundRecord => ({
  id: r.id,
  txHash: r.tx_hash as OutboundRecord['txHash'],
  nonce: Number(r.nonce),
  state: r.state,
  ...(r.gas_used !== null && { gasUsed: BigInt(r.gas_used) }),
  ...(r.effective_gas_price !== null && { effectiveGasPrice: BigInt(r.effective_gas_price) }),
  ...(r.block_number !== null && { blockNumber: BigInt(r.block_number) }),
})

const feeOf = (r: OutboundRecord): bigint =>
  r.gasUsed !== undefined && r.effectiveGasPrice !== undefined ? r.gasUsed * r.effectiveGasPrice : 0n

/** The native token of a chain (pays the gas), from the registry. */
function nativeSymbol(deps: BridgeDeps, chain: ChainName): string {
  const native = deps.registry.get(chain)?.tokens.find((t) => t.contract === null)
  if (!native) throw new Error(`no native token for ${chain} in the registry`)
  return native.symbol
}

/** Has the journal closed this bridge transaction (bridged, or the gas of a failed one)? */
async function journaled(deps: BridgeDeps, chain: ChainName, row: BridgeRow): Promise<boolean> {
  if (row.state === 'signed' || row.state === 'broadcast') return false
  // a failed row that was never mined burnt nothing: nothing to journal
  if (row.state === 'failed' && row.gas_used === null) return true
  const [hit] = await deps.sql<{ n: number }[]>`
    select count(*)::int as n from ledger_events
    where idempotency_key = ${ownTxKey({ chain, txHash: row.tx_hash, slot: 0 })}`
  return (hit?.n ?? 0) > 0
}

/** The USDC the chain's hot wallet may send to the exchange chain now, in base units. */
export async function bridgeSurplus(deps: BridgeDeps, chain: ChainName): Promise<bigint> {
  const [balance, requested] = await Promise.all([hotWalletUsdc(deps, chain), requestedUsdc(deps, chain)])
  // the L1 keeps back what the L2s need from it now (their refills come from here: docs/chains.md "Rebalancing")
  const l2 = chain === L1 ? await l2Demand(deps) : 0n
  return balance - deps.config.bridgeRetainUsdcBaseUnits - requested - l2
}

/** The open transfer when its outcome is not journaled yet (sent again if unmined), else a new one for the surplus. */
async function resumeOrStart(
  deps: BridgeDeps,
  adapter: BridgeAdapter,
  chain: ChainName,
  open: BridgeRow | undefined,
): Promise<{ transfer: BridgeTransfer; record: OutboundRecord } | { surplusBaseUnits: bigint }> {
  const hot = deps.hotWallet(chain)
  if (open && !(await journaled(deps, chain, open))) {
    const transfer: BridgeTransfer = {
      transferId: open.ref_id,
      fromChain: chain,
      token: 'USDC',
      amountBaseUnits: BigInt(open.amount),
      signer: hot,
    }
    // the same (purpose, refId) again: the outbox returns the stored transaction, re-broadcasting
    // its bytes if the chain has not seen them (a crash between signing and broadcast)
    const record = open.state === 'signed' || open.state === 'broadcast' ? await adapter.send(transfer) : toRecord(open)
    return { transfer, record }
  }
  const surplus = await bridgeSurplus(deps, chain)
  if (surplus < BRIDGE_MIN_BASE_UNITS) return { surplusBaseUnits: surplus }
  const transfer = {
    transferId: randomUUID(),
    fromChain: chain,
    token: 'USDC' as const,
    amountBaseUnits: surplus,
    signer: hot,
  }
  return { transfer, record: await adapter.send(transfer) }
}

/** A transfer that failed on chain: nothing crossed, its burnt gas (slot 0) recorded, an operator told. */
async function recordFailed(
  deps: BridgeDeps,
  adapter: BridgeAdapter,
  chain: ChainName,
  f: { transfer: BridgeTransfer; txHash: Hex; gas: bigint; earlierGas: EventInput[]; status: { reason?: string } },
): Promise<BridgeRunResult> {
  const { transfer, txHash, gas, earlierGas, status } = f
  const gasCurrency = nativeSymbol(deps, chain)
  const now = deps.clock.now()
  // nothing crossed; the burnt gas is the transaction's only event: slot 0
  const events: EventInput[] = [...earlierGas]
  if (gas > 0n)
    events.push({
      type: 'gas_spent',
      payload: { chain, txHash, slot: 0, currency: gasCurrency, amount: gas },
      occurredAt: now,
    })
  if (events.length > 0) await appendBatch(deps.sql, events)
  await deps.alerter.alert('bridge transfer failed on chain; the funds stay in the hot wallet', {
    chain,
    adapter: adapter.name,
    transferId: transfer.transferId,
    txHash,
    reason: status.reason,
  })
  return { status: 'failed', transferId: transfer.transferId, txHash }
}

/**
 * One run for `chain`: resume the open transfer, or start one for the surplus. Call it under the
 * chain's bridge lock (the tick does).
 */
export async function runBridge(
  deps: BridgeDeps,
  adapter: BridgeAdapter,
  chain: ChainName,
  opts: BridgeRunOptions = {},
): Promise<BridgeRunResult> {
  adapter.assertReady(chain)
  const [open] = await deps.sql<BridgeRow[]>`
    select id, ref_id, amount, tx_hash, nonce, state, gas_used, effective_gas_price, block_number
    from outbound_txs where purpose = 'bridge' and chain = ${chain}
    order by created_at desc, id desc limit 1`
  const started = await resumeOrStart(deps, adapter, chain, open)
  if ('surplusBaseUnits' in started) return { status: 'idle', surplusBaseUnits: started.surplusBaseUnits }
  const { transfer, record } = started
  const status = await adapter.status(transfer, record)
  const txHash = status.record.txHash
  if (status.state === 'pending') return { status: 'pending', transferId: transfer.transferId, txHash }
  const now = deps.clock.now()
  const gas = feeOf(status.record)
  const gasCurrency = nativeSymbol(deps, chain)
  // earlier legs of the transfer (the v3 adapter's approve): their gas, each its only event (slot 0)
  const earlierGas: EventInput[] = (status.earlierLegs ?? [])
    .filter((leg) => leg.txHash !== txHash && feeOf(leg) > 0n)
    .map((leg) => ({
      type: 'gas_spent',
      payload: { chain, txHash: leg.txHash, slot: 0, currency: gasCurrency, amount: feeOf(leg) },
      occurredAt: now,
    }))
  if (status.state === 'failed')
    return recordFailed(deps, adapter, chain, { transfer, txHash, gas, earlierGas, status })
  await opts.beforeRecord?.()
  const events: EventInput[] = [
    {
      type: 'bridged',
      // key tx:{chain}:{txHash}:0 (ownTxKey slot 0 of the source transaction)
      payload: {
        fromChain: chain,
        toChain: adapter.toChain,
        txHash,
        currency: transfer.token,
        amount: transfer.amountBaseUnits,
        feeAmount: status.feeBaseUnits,
      },
      occurredAt: now,
    },
  ]
  // a second event about the same transaction: slot 1 (spec 6.1). A native message fee the bridge
  // took with it (msg.value; none of today's adapters pays one) is the same kind of platform cost in
  // the same currency, from the same wallet: booked with the gas (docs/chains.md "Bridge")
  const nativeCost = gas + (status.messageFeeWei ?? 0n)
  if (nativeCost > 0n)
    events.push({
      type: 'gas_spent',
      payload: { chain, txHash, slot: 1, currency: gasCurrency, amount: nativeCost },
      occurredAt: now,
    })
  events.push(...earlierGas)
  await appendBatch(deps.sql, events)
  return {
    status: 'bridged',
    transferId: transfer.transferId,
    txHash,
    amountBaseUnits: transfer.amountBaseUnits,
    feeBaseUnits: status.feeBaseUnits,
  }
}

const adapters = new WeakMap<object, BridgeAdapter>()

/**
 * The adapter of this deployment, built once per process: Derive v3's L1 deposit through the
 * OnchainActionManager into the funding subaccount (locally, against its stand-in).
 */
export function bridgeAdapterFor(deps: BridgeDeps, hooks?: OutboxDeps['hooks']): BridgeAdapter {
  const cached = hooks ? undefined : adapters.get(deps)
  if (cached) return cached
  const adapter = newAdapter(deps, outboxOf(deps, hooks))
  if (!hooks) adapters.set(deps, adapter)
  return adapter
}

function newAdapter(deps: BridgeDeps, outbox: OutboxDeps): BridgeAdapter {
  const x = deps.config.exchange
  // required by the worker's configuration (only the local run's set-up reads it without them)
  if (x.depositManager === undefined || x.fundingSubaccountId === undefined)
    throw new Error('the bridge needs EXCHANGE_DEPOSIT_MANAGER_ADDRESS and EXCHANGE_FUNDING_SUBACCOUNT_ID')
  let asset: Promise<Address> | undefined
  return new DeriveV3DepositAdapter({
    outbox,
    manager: x.depositManager,
    // USDC's protocol asset, read once from the exchange (a failed read is read again next time)
    usdcAsset: () => {
      asset ??= deps.exchange.getCurrency('USDC').then(
        (c) => getAddress(c.protocol_asset_addresses.spot as string),
        (err: unknown) => {
          asset = undefined
          throw err
        },
      )
      return asset
    },
    fundingSubaccountId: BigInt(x.fundingSubaccountId),
    owner: x.walletAddress,
    exchangeChainId: x.chainId,
  })
}

/** An L2's bridge: its surplus to L1 over CCTP, under the same lock (docs/chains.md "The L2 route"). */
async function runL2BridgeTick(deps: BridgeDeps, chain: L2ChainName, log: Log): Promise<Record<string, unknown>> {
  const result = await withLock(deps.redis, bridgeLockKey(chain), LOCK_TTL_MS, () =>
    runCctpSweep({ ...cctpDepsOf(deps), redis: deps.redis }, chain),
  )
  if (!result) return { chain, status: 'locked' }
  const summary = summaryOf(result)
  if (result.state !== 'idle') log.info({ chain, route: 'cctp', ...summary }, 'bridge tick')
  return { chain, route: 'cctp', ...summary }
}

/**
 * The tick's run for `chain` under its bridge lock (`locked` when another process holds it): Ethereum's surplus to
 * the exchange by the L1 deposit, an L2's to L1 over CCTP; its result as BullMQ stores it, logged unless idle.
 */
export async function runBridgeTick(deps: BridgeDeps, chain: ChainName, log: Log): Promise<Record<string, unknown>> {
  // Derive v3 takes deposits on its L1 only: the L2s reach it through L1 over CCTP
  if (chain !== L1) return runL2BridgeTick(deps, chain as L2ChainName, log)
  const adapter = bridgeAdapterFor(deps)
  const result = await withLock(deps.redis, bridgeLockKey(chain), LOCK_TTL_MS, () => runBridge(deps, adapter, chain))
  if (!result) return { chain, status: 'locked' }
  const summary = summaryOf(result)
  if (result.status !== 'idle') log.info({ chain, adapter: adapter.name, ...summary }, 'bridge tick')
  return { chain, ...summary }
}
