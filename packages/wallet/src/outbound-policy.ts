/**
 * The one policy every outbound transaction passes (docs/hostile-world.md "One policy for every
 * outbound transaction"): withdrawals, sweeps, gas top-ups, bridge legs, the L2 route's CCTP burns
 * and mints, swaps and their approvals are all signed by the outbox (outbox.ts `sendOnce`), and the
 * outbox asks this module for the gas limit and fees before it signs, and for the same figures when
 * a caller only sizes a transaction.
 *
 * Why one module and not a patch per caller: a destination that makes its own transaction
 * unminable, dear or slow (code that burns gas, reverts only when mined, refuses the fee fields of
 * a dry run) is a property of the transaction, not of the caller that sends it. The rules:
 *
 * - **A gas limit cap per purpose**, never above the chain's per-transaction cap nor the latest
 *   block's gas limit: ETH to an address without code is exactly 21,000 (nothing else can happen
 *   there); ETH to code gets ETH_TO_CODE_GAS_BUDGET; an ERC-20 transfer TOKEN_TRANSFER_GAS_CAP; a
 *   contract call its purpose's CALL_GAS_CAPS. A transaction that needs more is refused before it
 *   is signed (OutboundGasAboveCapError), so nothing unminable is ever signed.
 * - **Dry runs made as the real transaction**: from the real sender, with the fee fields the send
 *   will use (so `tx.gasprice` is what the chain will see, never 0) and the cap as the estimate's
 *   gas (so no dry run may cost a node a block's worth of work).
 * - **The sender pays what it signs**: its balance must cover the value and the gas limit at the
 *   max fee, read in the same round trip as the fees; else nothing is signed (OutboundSenderShortError).
 */
import { type Address, type BaseError, getAddress, type Hex, toHex } from 'viem'
import { getEstimateGasError } from 'viem/utils'
import {
  OutboundFeeAboveLimitError,
  OutboundGasAboveCapError,
  OutboundSenderShortError,
  outboundFailureOf,
} from './send-errors'

/**
 * What a transaction is for; with refId and step, its one key. `cctp_burn` and `cctp_mint` are the L2 route's legs
 * (docs/chains.md "The L2 route"): the approve and the burn on the source chain, the mint on the destination.
 */
export type OutboundPurpose =
  | 'gas_topup'
  | 'sweep'
  | 'withdrawal'
  | 'bridge'
  | 'swap'
  | 'swap_approval'
  | 'treasury'
  | 'cctp_burn'
  | 'cctp_mint'

/** A plain ETH transfer to an address without code: its gas is exactly this, never more. */
export const ETH_TO_EOA_GAS = 21_000n
/**
 * ETH to an address that holds code (a contract, or an EOA delegating under EIP-7702). Measured on
 * anvil (packages/wallet/test/outbound-policy.test.ts): a Safe v1.4.1 proxy and its singleton's
 * receive 27,301 gas, an ERC-4337 account behind an ERC-1967 proxy 25,838, an EIP-7702 delegation
 * 21,055. The budget is about twice the Safe, room for a wallet that also logs or writes a warm
 * slot, and nothing like a block (30M): a destination that needs more is refused at request time.
 */
export const ETH_TO_CODE_GAS_BUDGET = 50_000n
/**
 * An ERC-20 `transfer`: TestUSDC 51,485 gas to a new holder, Circle's proxied USDC about 62,000;
 * the cap leaves room for a token upgrade, never for a loop.
 */
export const TOKEN_TRANSFER_GAS_CAP = 100_000n
/**
 * Contract calls, by purpose: the platform's own calls to known contracts (an approve, the bridge's
 * deposit, a swap through the venue). Caps, not targets: the estimate decides below them.
 */
export const CALL_GAS_CAPS: Readonly<Record<OutboundPurpose, bigint>> = Object.freeze({
  withdrawal: TOKEN_TRANSFER_GAS_CAP,
  sweep: TOKEN_TRANSFER_GAS_CAP,
  gas_topup: TOKEN_TRANSFER_GAS_CAP,
  swap_approval: 100_000n,
  bridge: 500_000n,
  swap: 600_000n,
  treasury: 500_000n,
  // CCTP's approve and depositForBurn, and receiveMessage (its signature checks and the mint): the bridge's cap
  cctp_burn: 500_000n,
  cctp_mint: 500_000n,
})
/** EIP-7825 (Fusaka): no transaction may carry more gas than 2^24, whatever the block allows. */
export const PER_TX_GAS_CAP = 16_777_216n
/** Gas limit margin over the node's estimate, in percent (an estimate is a lower bound). */
export const GAS_LIMIT_MARGIN_PCT = 20n
/** The max fee is the latest base fee × 1.2 plus the priority fee (viem's estimateFeesPerGas rule). */
const BASE_FEE_MULTIPLIER_TENTHS = 12n

/**
 * Chains whose gas units carry the cost of posting a transaction's data to L1 (Arbitrum One: a
 * plain transfer there "uses" 21,000 plus that share, which moves with L1's fees and can be many
 * times 21,000). On them every cap, and a plain transfer's gas, is counted on top of that share,
 * read from the node for the transaction's own data (`l1DataGas`). OP Mainnet and Base charge it
 * outside the gas: nothing to add there, nor on Ethereum.
 */
export const L1_DATA_IN_GAS_CHAINS: ReadonlySet<string> = new Set(['arbitrum'])

/** A chain's probe gives up after this long: a hanging provider is a chain that does not answer. */
export const PROBE_TIMEOUT_MS = 5_000

/** The least JSON-RPC surface the policy needs: any viem client's `request`. */
export interface Rpc {
  request(args: { method: string; params?: unknown }, options?: { retryCount?: number }): Promise<unknown>
}
/** A viem client as the policy's Rpc (the policy speaks raw JSON-RPC: no helper may drop a field). */
export const rpcOf = (client: { request: unknown }): Rpc => client as unknown as Rpc

/** What goes on the wire: the recipient (the token contract for an ERC-20 transfer), value and data. */
export interface WireCall {
  to: Address
  value: bigint
  data: Hex | undefined
}

export interface TransferFeeEstimate {
  /** the gas limit the transaction is (or would be) signed with */
  gasLimit: bigint
  maxFeePerGas: bigint
  maxPriorityFeePerGas: bigint
  /** gasLimit × maxFeePerGas: the most the transaction can cost, in wei */
  maxFeeWei: bigint
}

export interface GasPlan extends TransferFeeEstimate {
  /** the most gas this transaction may ever carry (its purpose's cap, the chain's limits) */
  capGas: bigint
  /** whether the recipient held code when read (native transfers only; false otherwise) */
  toHasCode: boolean
}

export interface PlanRequest {
  chain: string
  purpose: OutboundPurpose
  from: Address
  call: WireCall
  /** a payment (native value, or an ERC-20 transfer of the registry's token) or a contract call */
  kind: 'transfer' | 'call'
  /** a native payment (the recipient's own code runs with the value) */
  native: boolean
  /**
   * Sizing only (a top-up or a sweep's value before the sender holds its gas): a sender that cannot
   * pay yet is estimated without fee fields instead of refused. Never for a transaction to sign.
   */
  sizing?: boolean
  /** the most the transaction may cost in gas (gasLimit × maxFeePerGas), else OutboundFeeAboveLimitError */
  maxFeeWeiAtMost?: bigint
}

const min = (a: bigint, b: bigint) => (a < b ? a : b)
const hexInt = (x: unknown) => BigInt(x as string)

interface ChainNow {
  maxFeePerGas: bigint
  maxPriorityFeePerGas: bigint
  blockGasLimit: bigint
  balanceWei: bigint
  toHasCode: boolean
}

/** The priority fee the node suggests (undefined when it has no such method). */
function suggestedPriority(rpc: Rpc): Promise<bigint | undefined> {
  return rpc.request({ method: 'eth_maxPriorityFeePerGas' }).then(hexInt, () => undefined)
}

/** A node without eth_maxPriorityFeePerGas: its gas price over the base fee (viem's fallback). */
async function priorityFee(rpc: Rpc, baseFee: bigint, suggested: bigint | undefined): Promise<bigint> {
  if (suggested !== undefined) return suggested
  const gasPrice = hexInt(await rpc.request({ method: 'eth_gasPrice' }))
  return gasPrice > baseFee ? gasPrice - baseFee : 0n
}

type LatestBlock = { baseFeePerGas?: Hex; gasLimit: Hex } | null
const latestBlock = (rpc: Rpc) =>
  rpc.request({ method: 'eth_getBlockByNumber', params: ['latest', false] }) as Promise<LatestBlock>

function baseFeeOf(block: LatestBlock): bigint {
  if (!block?.baseFeePerGas) throw new Error('the chain answered no latest block with a base fee (EIP-1559)')
  return hexInt(block.baseFeePerGas)
}

/**
 * One round trip (the calls are batched): the latest block (base fee, gas limit), the priority
 * fee, the sender's balance and, when asked, whether `codeAt` holds code.
 */
async function readChainNow(rpc: Rpc, from: Address, codeAt: Address | undefined): Promise<ChainNow> {
  const [block, balance, code, suggested] = await Promise.all([
    latestBlock(rpc),
    rpc.request({ method: 'eth_getBalance', params: [from, 'latest'] }),
    codeAt ? rpc.request({ method: 'eth_getCode', params: [codeAt, 'latest'] }) : Promise.resolve('0x'),
    suggestedPriority(rpc),
  ])
  const baseFee = baseFeeOf(block)
  const priority = await priorityFee(rpc, baseFee, suggested)
  return {
    maxFeePerGas: (baseFee * BASE_FEE_MULTIPLIER_TENTHS) / 10n + priority,
    maxPriorityFeePerGas: priority,
    blockGasLimit: hexInt(block?.gasLimit),
    balanceWei: hexInt(balance),
    toHasCode: typeof code === 'string' && code !== '0x' && code !== '0x0',
  }
}

/** The calldata's intrinsic gas: 4 per zero byte, 16 per other byte. */
function calldataGas(data: Hex | undefined): bigint {
  if (!data) return 0n
  let gas = 0n
  for (let i = 2; i < data.length; i += 2) gas += data.slice(i, i + 2) === '00' ? 4n : 16n
  return gas
}

/**
 * The gas a chain of L1_DATA_IN_GAS_CHAINS adds to a transaction carrying `data` for posting it to
 * L1, with a 20 % margin (it moves with L1's fees): a 0-value self transfer with that data, dry-run,
 * less its execution and intrinsic gas. 0 on every other chain, without a call.
 */
export async function l1DataGas(rpc: Rpc, chain: string, from: Address, data: Hex | undefined): Promise<bigint> {
  if (!L1_DATA_IN_GAS_CHAINS.has(chain)) return 0n
  const request = { from, to: from, value: '0x0', ...(data ? { data } : {}) }
  const estimate = hexInt(
    await rpc.request({ method: 'eth_estimateGas', params: [request, 'latest'] }, { retryCount: 0 }),
  )
  const share = estimate - ETH_TO_EOA_GAS - calldataGas(data)
  return share > 0n ? share + (share * GAS_LIMIT_MARGIN_PCT + 99n) / 100n : 0n
}

/** The most gas a transaction of this shape may carry: its purpose's cap within the chain's limits. */
export function gasCapOf(
  req: Pick<PlanRequest, 'purpose' | 'kind' | 'native'>,
  toHasCode: boolean,
  blockGasLimit: bigint,
  l1Gas = 0n,
): { capGas: bigint; exact: boolean } {
  const ceiling = min(PER_TX_GAS_CAP, blockGasLimit)
  if (req.kind === 'transfer' && req.native && !toHasCode)
    return { capGas: min(ETH_TO_EOA_GAS + l1Gas, ceiling), exact: true }
  const cap =
    req.kind === 'call' ? CALL_GAS_CAPS[req.purpose] : req.native ? ETH_TO_CODE_GAS_BUDGET : TOKEN_TRANSFER_GAS_CAP
  return { capGas: min(cap + l1Gas, ceiling), exact: false }
}

/**
 * The dry run, as the real transaction: raw `eth_estimateGas` (viem's helper drops the gas field)
 * from the sender with the fee fields and `gasCap` as the gas, so the node searches no higher.
 */
export async function dryRun(
  rpc: Rpc,
  t: { from: Address; call: WireCall; gasCap: bigint; fees?: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } },
): Promise<bigint> {
  const request = {
    from: t.from,
    to: t.call.to,
    value: toHex(t.call.value),
    gas: toHex(t.gasCap),
    ...(t.call.data ? { data: t.call.data } : {}),
    ...(t.fees
      ? {
          type: '0x2',
          maxFeePerGas: toHex(t.fees.maxFeePerGas),
          maxPriorityFeePerGas: toHex(t.fees.maxPriorityFeePerGas),
        }
      : {}),
  }
  try {
    // no retry: an EVM error (an invalid opcode is a JSON-RPC "internal error", which a transport
    // would retry) answers the same every time; a transport failure is the caller's unknown
    return hexInt(await rpc.request({ method: 'eth_estimateGas', params: [request, 'latest'] }, { retryCount: 0 }))
  } catch (e) {
    // the node's error in viem's types (a revert is an ExecutionRevertedError), as viem's own
    // estimateGas would throw it: callers tell a revert from an outage by the cause
    throw getEstimateGasError(e as BaseError, { to: t.call.to, value: t.call.value, data: t.call.data })
  }
}

/**
 * The gas limit and fees of a transaction under the policy, or the refusal before signing:
 * OutboundGasAboveCapError (the transaction needs more than its cap), OutboundSenderShortError
 * (the sender cannot pay it), OutboundFeeAboveLimitError (its caller's fee limit), or the node's
 * own error of the dry run (a revert, an invalid opcode: `outboundFailureOf` reads it).
 *
 * @example
 *   const plan = await planGas(rpcOf(publicClient), { chain: 'base', purpose: 'withdrawal', from: hot,
 *     call: { to, value: 10n ** 16n, data: undefined }, kind: 'transfer', native: true })
 *   plan.gasLimit // 21000n to an address without code
 */
export async function planGas(rpc: Rpc, req: PlanRequest): Promise<GasPlan> {
  const from = getAddress(req.from)
  const [now, l1Gas] = await Promise.all([
    readChainNow(rpc, from, req.kind === 'transfer' && req.native ? req.call.to : undefined),
    l1DataGas(rpc, req.chain, from, req.call.data),
  ])
  const { capGas, exact } = gasCapOf(req, now.toHasCode, now.blockGasLimit, l1Gas)
  const fees = { maxFeePerGas: now.maxFeePerGas, maxPriorityFeePerGas: now.maxPriorityFeePerGas }
  const available = now.balanceWei - req.call.value
  // the gas the sender can pay at the max fee, as a node caps a dry run by it
  const affordable = available < 0n ? 0n : available / fees.maxFeePerGas
  const short = (needGas: bigint) =>
    new OutboundSenderShortError({
      chain: req.chain,
      from,
      balanceWei: now.balanceWei,
      needWei: req.call.value + needGas * fees.maxFeePerGas,
    })
  let gasLimit: bigint
  if (exact) {
    if (!req.sizing && affordable < capGas) throw short(capGas)
    gasLimit = capGas
  } else {
    const estimate = await estimateWithin(rpc, req, { from, capGas, affordable, fees, short })
    const margin = estimate + (estimate * GAS_LIMIT_MARGIN_PCT + 99n) / 100n
    gasLimit = min(margin, capGas)
    if (!req.sizing) gasLimit = min(gasLimit, affordable < estimate ? estimate : affordable)
  }
  const maxFeeWei = gasLimit * fees.maxFeePerGas
  if (req.maxFeeWeiAtMost !== undefined && maxFeeWei > req.maxFeeWeiAtMost)
    throw new OutboundFeeAboveLimitError({ chain: req.chain, maxFeeWei, limitWei: req.maxFeeWeiAtMost })
  return { gasLimit, ...fees, maxFeeWei, capGas, toHasCode: now.toHasCode }
}

/**
 * The dry run within the cap. A sender that can pay less than the cap is dry-run with what it can
 * pay (a node would cap it so anyway); when sizing, one that cannot pay yet is dry-run without fee
 * fields (a top-up is sized before the address holds gas; the signing dry run has them).
 */
async function estimateWithin(
  rpc: Rpc,
  req: PlanRequest,
  p: {
    from: Address
    capGas: bigint
    affordable: bigint
    fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }
    short: (needGas: bigint) => Error
  },
): Promise<bigint> {
  const withoutFees = req.sizing === true && p.affordable < p.capGas
  const gasCap = withoutFees ? p.capGas : min(p.capGas, p.affordable)
  if (gasCap < ETH_TO_EOA_GAS) throw p.short(ETH_TO_EOA_GAS)
  try {
    return await dryRun(rpc, { from: p.from, call: req.call, gasCap, ...(withoutFees ? {} : { fees: p.fees }) })
  } catch (e) {
    const f = outboundFailureOf(e)
    if (f.kind !== 'row' || f.reason !== 'gas-above-cap') throw e
    // above what the sender can pay, not above the cap: the sender is short
    if (gasCap < p.capGas) throw p.short(p.capGas)
    throw new OutboundGasAboveCapError({ chain: req.chain, purpose: req.purpose, to: req.call.to, capGas: p.capGas })
  }
}

/**
 * An independent probe of a chain: its id and its height, read fresh. The only evidence that a
 * chain is unavailable: one row's failed estimate, dry run or broadcast never is.
 *
 * @example
 *   if (!(await probeChain(rpcOf(publicClient), 8453)).ok) // this chain waits for the next run
 */
export async function probeChain(rpc: Rpc, chainId: number): Promise<{ ok: true } | { ok: false; detail: string }> {
  let timer: NodeJS.Timeout | undefined
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('probe timed out')), PROBE_TIMEOUT_MS)
    })
    const [id, height] = await Promise.race([
      Promise.all([rpc.request({ method: 'eth_chainId' }), rpc.request({ method: 'eth_blockNumber' })]),
      timeout,
    ])
    if (Number(hexInt(id)) !== chainId) return { ok: false, detail: `answers chain id ${hexInt(id)}, not ${chainId}` }
    hexInt(height)
    return { ok: true }
  } catch (e) {
    return { ok: false, detail: (e as { name?: string }).name ?? 'error' }
  } finally {
    clearTimeout(timer)
  }
}

/** The latest block's gas limit within the per-transaction cap: no signed transaction may exceed it. */
export async function gasCeiling(rpc: Rpc): Promise<bigint> {
  const block = await latestBlock(rpc)
  if (!block) throw new Error('the chain answered no latest block')
  return min(PER_TX_GAS_CAP, hexInt(block.gasLimit))
}

/** The current EIP-1559 fees, as planGas computes them (the replacement path bumps from these). */
export async function currentFees(rpc: Rpc): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
  const [block, suggested] = await Promise.all([latestBlock(rpc), suggestedPriority(rpc)])
  const baseFee = baseFeeOf(block)
  const priority = await priorityFee(rpc, baseFee, suggested)
  return { maxFeePerGas: (baseFee * BASE_FEE_MULTIPLIER_TENTHS) / 10n + priority, maxPriorityFeePerGas: priority }
}
