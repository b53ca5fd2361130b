/**
 * One CCTP transfer, from burn to journal (docs/chains.md "The L2 route"): `advanceCctp` moves a `cctp_transfers`
 * row as far as the chains and Circle allow, and is safe to call any number of times, from any process, after any
 * crash:
 *
 * 1. burning: the approve of the TokenMessengerV2 (when the allowance is short) and `depositForBurn` on the source
 *    chain, through the outbox (purpose cctp_burn, steps 0 and 1: signed and stored before broadcast, so a restart
 *    sends those very bytes); once the burn is the source's confirmations deep, the row is `attesting`;
 * 2. attesting: Circle's attestation service is asked (GET /v2/messages), at most once per backoff step; a signed
 *    message that is not this burn's (amount, recipient, token, sender, route) is never minted;
 * 3. minting: `receiveMessage(message, attestation)` on the destination's MessageTransmitterV2 through the outbox
 *    (purpose cctp_mint, step 0: one transaction ever), from the destination's hot wallet, the only caller the burn
 *    allows (its destinationCaller); once final, one database transaction appends `bridged` (source → destination,
 *    the fee Circle executed, key tx:{source}:{burn}:0), the gas of each leg, and closes the row.
 *
 * A burn that fails on chain moves nothing: its gas is journaled and the row fails. Money burned and not minted is
 * counted by solvency as in flight (packages/solvency in-flight.ts) until the mint is journaled; past CCTP's
 * documented time ops are told, once.
 */
import { appendBatch, type EventInput, ownTxKey } from '@wh/ledger'
import {
  type AttestationClientOptions,
  addressToBytes32,
  type BridgeTransfer,
  CCTP_DOCUMENTED_MS,
  type CctpDeployment,
  type ChainName,
  confirmOutbound,
  decodeCctpMessage,
  FINALITY_FAST,
  fetchAttestation,
  legsStatus,
  MESSAGE_TRANSMITTER_V2_ABI,
  type OutboundRecord,
  type OutboxDeps,
  outboxOf,
  sendOnce,
  TOKEN_MESSENGER_V2_ABI,
  type TwoLegs,
} from '@wh/wallet'
import { encodeFunctionData, getAddress, type Hex } from 'viem'
import type { HotWalletDeps } from '../deps'
import { backoffMs } from './backoff'
import {
  type CctpRow,
  markAttested,
  markBurned,
  markDone,
  markFailed,
  noteLate,
  noteProblem,
  openTransfers,
  recordAttempt,
} from './store'

export type CctpDeps = HotWalletDeps & {
  /** where CCTP lives on each chain (cctpDeployments) */
  readonly cctp: ReadonlyMap<ChainName, CctpDeployment>
  readonly attestation: AttestationClientOptions
  /** test hooks of the outbox (a crash after signing) */
  readonly outboxHooks?: OutboxDeps['hooks']
}

export type CctpAdvance =
  | { readonly state: 'pending'; readonly id: string; readonly at: CctpRow['state']; readonly reason: string }
  | {
      readonly state: 'done'
      readonly id: string
      readonly burnTxHash: Hex
      readonly mintTxHash: Hex
      readonly fee: bigint
    }
  | { readonly state: 'failed'; readonly id: string; readonly reason: string }

/** Test hooks: a throw stands for a crash at that point. */
export interface CctpAdvanceOptions {
  /** after the burn is seen final, before the row says so */
  readonly afterBurnFinal?: () => Promise<void> | void
  /** after the attestation is read, before it is stored */
  readonly afterAttested?: () => Promise<void> | void
  /** after the mint is final, before the journal's commit */
  readonly beforeRecord?: () => Promise<void> | void
}

const MINT_STEP = 0

function deploymentOf(deps: CctpDeps, chain: ChainName): CctpDeployment {
  const d = deps.cctp.get(chain)
  if (!d) throw new Error(`no CCTP deployment for ${chain} in this deployment`)
  return d
}

const feeOf = (r: OutboundRecord): bigint =>
  r.gasUsed !== undefined && r.effectiveGasPrice !== undefined ? r.gasUsed * r.effectiveGasPrice : 0n

/** The burn's two legs (approve, depositForBurn), on the source chain from its hot wallet. */
function burnLegs(deps: CctpDeps, row: CctpRow): { legs: TwoLegs; transfer: BridgeTransfer } {
  const source = deploymentOf(deps, row.source_chain)
  const dest = deploymentOf(deps, row.dest_chain)
  const recipient = addressToBytes32(deps.hotWallet(row.dest_chain).address)
  const legs: TwoLegs = {
    outbox: outboxOf(deps, deps.outboxHooks),
    purpose: 'cctp_burn',
    token: source.usdc,
    spender: source.tokenMessenger,
    approveAtLeast: BigInt(row.amount),
    prepare: async () => ({
      to: source.tokenMessenger,
      valueWei: 0n,
      data: encodeFunctionData({
        abi: TOKEN_MESSENGER_V2_ABI,
        functionName: 'depositForBurn',
        // the destination's hot wallet mints to itself and is the only one allowed to deliver the message
        args: [
          BigInt(row.amount),
          dest.domain,
          recipient,
          source.usdc,
          recipient,
          BigInt(row.max_fee),
          row.min_finality,
        ],
      }),
    }),
  }
  const transfer: BridgeTransfer = {
    transferId: row.id,
    fromChain: row.source_chain,
    token: 'USDC',
    amountBaseUnits: BigInt(row.amount),
    signer: deps.hotWallet(row.source_chain),
  }
  return { legs, transfer }
}

/** Step 1: the burn until it is final; failed on chain: its gas journaled, nothing left the source. */
async function advanceBurn(deps: CctpDeps, row: CctpRow, o: CctpAdvanceOptions): Promise<CctpRow | CctpAdvance> {
  const { legs, transfer } = burnLegs(deps, row)
  const s = await legsStatus(legs, transfer, {
    approve: 'the approve of the TokenMessengerV2 failed on chain',
    call: 'the burn (depositForBurn) failed on chain',
  })
  if (s.state === 'pending') return { state: 'pending', id: row.id, at: 'burning', reason: 'the burn is not final yet' }
  if (s.state === 'failed') return failBurn(deps, row, [s.record, ...(s.earlierLegs ?? [])], s.reason)
  await o.afterBurnFinal?.()
  const at = deps.clock.now()
  await markBurned(deps.sql, row.id, { txHash: s.record.txHash, at })
  return { ...row, state: 'attesting', burn_tx_hash: s.record.txHash, burned_at: at, next_attempt_at: at }
}

/** The burn failed on chain: nothing left the source; the legs' gas journaled, the row failed, ops told. */
async function failBurn(deps: CctpDeps, row: CctpRow, legs: OutboundRecord[], reason: string): Promise<CctpAdvance> {
  const events = legs.filter((r) => feeOf(r) > 0n).map((r) => gasEvent(deps, row.source_chain, r, 0))
  await deps.sql.begin(async (tx) => {
    if (events.length > 0) await appendBatch(tx, events)
    await markFailed(tx, row.id, reason)
  })
  await deps.alerter.alert('CCTP transfer failed at the burn; nothing left the source chain', {
    transferId: row.id,
    source: row.source_chain,
    txHash: legs[0]?.txHash ?? '',
    reason,
  })
  return { state: 'failed', id: row.id, reason }
}

function gasEvent(deps: CctpDeps, chain: ChainName, r: OutboundRecord, slot: 0 | 1): EventInput {
  return {
    type: 'gas_spent',
    payload: { chain, txHash: r.txHash, slot, currency: 'ETH', amount: feeOf(r) },
    occurredAt: deps.clock.now(),
  }
}

/** Why an attested message is not this transfer's, or undefined when it is. */
function notOurs(deps: CctpDeps, row: CctpRow, message: Hex): string | undefined {
  let m: ReturnType<typeof decodeCctpMessage>
  try {
    m = decodeCctpMessage(message)
  } catch (e) {
    return (e as Error).message
  }
  const source = deploymentOf(deps, row.source_chain)
  const dest = deploymentOf(deps, row.dest_chain)
  const checks: [boolean, string][] = [
    [m.sourceDomain === source.domain && m.destinationDomain === dest.domain, 'another route'],
    [m.burn.amount === BigInt(row.amount), `another amount (${m.burn.amount})`],
    [m.burn.burnToken === source.usdc, 'another token'],
    [m.burn.mintRecipient === getAddress(deps.hotWallet(row.dest_chain).address), 'another recipient'],
    [m.burn.messageSender === getAddress(deps.hotWallet(row.source_chain).address), 'another sender'],
    [m.burn.feeExecuted <= BigInt(row.max_fee), `a fee above the burn's maximum (${m.burn.feeExecuted})`],
  ]
  return checks.find(([ok]) => !ok)?.[1]
}

/** Ops told once when the transfer is past CCTP's documented time. */
async function lateCheck(deps: Pick<CctpDeps, 'sql' | 'clock' | 'alerter'>, row: CctpRow): Promise<void> {
  if (!row.burned_at || row.late_alerted_at) return
  const mode = row.min_finality <= FINALITY_FAST ? 'fast' : 'standard'
  const now = deps.clock.now()
  if (now.getTime() - row.burned_at.getTime() <= CCTP_DOCUMENTED_MS[mode]) return
  if (await noteLate(deps.sql, row.id, now))
    await deps.alerter.alert('CCTP transfer burned and not minted past its documented time; counted in flight', {
      transferId: row.id,
      route: `${row.source_chain} → ${row.dest_chain}`,
      mode,
      burnTxHash: row.burn_tx_hash ?? '',
      minutes: String(Math.floor((now.getTime() - row.burned_at.getTime()) / 60_000)),
      lastError: row.last_error ?? '',
    })
}

/**
 * Every open transfer past CCTP's documented time, told once each (the solvency tick runs it, so a transfer whose
 * route's tick is held still reaches ops). Returns the ids of those late.
 */
export async function alertLateCctp(deps: Pick<CctpDeps, 'sql' | 'clock' | 'alerter'>): Promise<string[]> {
  const late: string[] = []
  for (const row of await openTransfers(deps.sql)) {
    if (!row.burned_at) continue
    const mode = row.min_finality <= FINALITY_FAST ? 'fast' : 'standard'
    if (deps.clock.now().getTime() - row.burned_at.getTime() <= CCTP_DOCUMENTED_MS[mode]) continue
    late.push(row.id)
    await lateCheck(deps, row)
  }
  return late
}

/** Step 2: Circle's attestation, asked for with backoff; a message not this burn's is never minted. */
async function advanceAttestation(deps: CctpDeps, row: CctpRow, o: CctpAdvanceOptions): Promise<CctpRow | CctpAdvance> {
  const pending = (reason: string): CctpAdvance => ({ state: 'pending', id: row.id, at: 'attesting', reason })
  await lateCheck(deps, row)
  const now = deps.clock.now()
  if (now < row.next_attempt_at) return pending(`next attestation read at ${row.next_attempt_at.toISOString()}`)
  const answer = await fetchAttestation(deps.attestation, {
    sourceDomain: deploymentOf(deps, row.source_chain).domain,
    txHash: row.burn_tx_hash as Hex,
  })
  if (answer.state !== 'complete') {
    const wait =
      answer.state === 'unavailable' ? Math.max(answer.retryAfterMs, backoffMs(row.attempts)) : backoffMs(row.attempts)
    await recordAttempt(deps.sql, row.id, { error: answer.reason, nextAt: new Date(now.getTime() + wait) })
    return pending(`attestation ${answer.state}: ${answer.reason}`)
  }
  const wrong = notOurs(deps, row, answer.message)
  if (wrong) {
    await recordAttempt(deps.sql, row.id, {
      error: `attested message is ${wrong}`,
      nextAt: new Date(now.getTime() + backoffMs(row.attempts)),
    })
    if (await noteProblem(deps.sql, row.id, `attested message is ${wrong}`))
      await deps.alerter.alert('CCTP attestation names another message than the burn; not minted', {
        transferId: row.id,
        burnTxHash: row.burn_tx_hash ?? '',
        problem: wrong,
      })
    return pending(`the attested message is ${wrong}`)
  }
  await o.afterAttested?.()
  const feeExecuted = decodeCctpMessage(answer.message).burn.feeExecuted
  await markAttested(deps.sql, row.id, { ...answer, feeExecuted })
  return {
    ...row,
    state: 'minting',
    nonce: answer.nonce,
    message: answer.message,
    attestation: answer.attestation,
    fee_executed: feeExecuted.toString(),
  }
}

/** Step 3: the mint on the destination, once; final: journaled with every leg's gas, in one transaction. */
async function advanceMint(deps: CctpDeps, row: CctpRow, o: CctpAdvanceOptions): Promise<CctpAdvance> {
  const outbox = outboxOf(deps, deps.outboxHooks)
  const sent = await sendOnce(outbox, {
    kind: 'call',
    chain: row.dest_chain,
    purpose: 'cctp_mint',
    refId: row.id,
    step: MINT_STEP,
    signer: deps.hotWallet(row.dest_chain),
    to: deploymentOf(deps, row.dest_chain).messageTransmitter,
    data: encodeFunctionData({
      abi: MESSAGE_TRANSMITTER_V2_ABI,
      functionName: 'receiveMessage',
      args: [row.message as Hex, row.attestation as Hex],
    }),
    valueWei: 0n,
    token: 'USDC',
    amountBaseUnits: BigInt(row.amount),
  })
  const mint = await confirmOutbound(outbox, sent.id)
  if (mint.state === 'failed') {
    // nothing minted; the burn stays in flight until a person decides (a second mint is never signed here)
    await lateCheck(deps, row)
    if (await noteProblem(deps.sql, row.id, `the mint ${mint.txHash} failed on chain`))
      await deps.alerter.alert('CCTP mint failed on chain; the burned USDC stays in flight until an operator acts', {
        transferId: row.id,
        mintTxHash: mint.txHash,
        burnTxHash: row.burn_tx_hash ?? '',
      })
    return { state: 'pending', id: row.id, at: 'minting', reason: 'the mint failed on chain: an operator decides' }
  }
  if (mint.state !== 'confirmed') {
    await lateCheck(deps, row)
    return { state: 'pending', id: row.id, at: 'minting', reason: 'the mint is not final yet' }
  }
  await o.beforeRecord?.()
  return recordDone(deps, row, mint)
}

async function recordDone(deps: CctpDeps, row: CctpRow, mint: OutboundRecord): Promise<CctpAdvance> {
  const burnTxHash = row.burn_tx_hash as Hex
  const { legs, transfer } = burnLegs(deps, row)
  const burn = await legsStatus(legs, transfer, { approve: '', call: '' })
  const fee = BigInt(row.fee_executed ?? '0')
  const events: EventInput[] = [
    {
      type: 'bridged',
      // key tx:{source}:{burn}:0: the source transaction's own
      payload: {
        fromChain: row.source_chain,
        toChain: row.dest_chain,
        txHash: burnTxHash,
        currency: 'USDC',
        amount: BigInt(row.amount),
        feeAmount: fee,
      },
      occurredAt: deps.clock.now(),
    },
  ]
  if (burn.state === 'final') {
    if (feeOf(burn.record) > 0n) events.push(gasEvent(deps, row.source_chain, burn.record, 1))
    for (const leg of burn.earlierLegs) if (feeOf(leg) > 0n) events.push(gasEvent(deps, row.source_chain, leg, 0))
  }
  if (feeOf(mint) > 0n) events.push(gasEvent(deps, row.dest_chain, mint, 0))
  await deps.sql.begin(async (tx) => {
    await appendBatch(tx, events)
    await markDone(tx, row.id, { mintTxHash: mint.txHash, at: deps.clock.now() })
  })
  return { state: 'done', id: row.id, burnTxHash, mintTxHash: mint.txHash, fee }
}

const isRow = (r: CctpRow | CctpAdvance): r is CctpRow => 'source_chain' in r

/** Moves `row` as far as it can go now (call it under the route's lock: the ticks do). */
export async function advanceCctp(deps: CctpDeps, row: CctpRow, o: CctpAdvanceOptions = {}): Promise<CctpAdvance> {
  let current = row
  if (current.state === 'burning') {
    const r = await advanceBurn(deps, current, o)
    if (!isRow(r)) return r
    current = r
  }
  if (current.state === 'attesting') {
    const r = await advanceAttestation(deps, current, o)
    if (!isRow(r)) return r
    current = r
  }
  if (current.state === 'minting') return advanceMint(deps, current, o)
  throw new Error(`CCTP transfer ${current.id} is ${current.state}: nothing to advance`)
}

/** The key `bridged` of a transfer is journaled under (its burn's slot 0), for the tests and the bench. */
export const bridgedKeyOf = (source: ChainName, burnTxHash: Hex) =>
  ownTxKey({ chain: source, txHash: burnTxHash, slot: 0 })
