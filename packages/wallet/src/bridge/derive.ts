/**
 * The live bridge: Derive's documented USDC deposit route (docs/chains.md "Bridge" → "The live
 * adapter" has the facts and where they were read).
 *
 * USDC crosses to Derive Chain (957) through a Socket SuperBridge vault on each source chain. The
 * hot wallet approves the vault for the USDC (only when its allowance is short), then calls
 * `depositToAppChain(receiver, amount, msgGasLimit, connector)` with `msg.value` = the vault's
 * `getMinFees(connector, msgGasLimit)` quote, read at send time, plus a bounded margin. The vault
 * pulls the USDC with transferFrom and Socket's relay credits `receiver` (EXCHANGE_WALLET_ADDRESS,
 * the platform's Derive smart-contract wallet) on Derive Chain, asynchronously (2–10 minutes).
 *
 * Both transactions go through the crash-safe outbox (purpose 'bridge', refId the transfer id):
 * step 0 the approve, step 1 the deposit. The deposit is signed only once the approve is mined and
 * the allowance is there (its gas estimate needs it), after on-chain checks of the route.
 *
 * `status()` says delivered once the deposit transaction is final on the source chain. The credit
 * on Derive Chain follows later; the exchange wallet's balance there is what subaccount funding
 * draws from, so a slow relay shows as a funding waiting for wallet funds, never as lost money.
 */
import { type Address, encodeFunctionData, getAddress, type Hex } from 'viem'
import type { ChainName } from '../chains'
import type { ChainClients } from '../clients'
import type { OutboundRecord, OutboxDeps } from '../outbox'
import { APPROVE_STEP, advanceLegs, DEPOSIT_STEP, legsStatus, type TwoLegs } from './approve-call'
import { DERIVE_USDC_ROUTES, type DeriveRouteTable, type DeriveUsdcRoute } from './derive-routes'
import {
  type BridgeAdapter,
  BridgeFeeTooHighError,
  BridgeLimitError,
  type BridgeStatus,
  type BridgeTransfer,
  BridgeUnavailableError,
  EXCHANGE_CHAIN_NAME,
} from './types'

/**
 * The deposit side of an old-style Socket SuperBridge vault (the interface of Derive's USDC
 * vaults): derive_client's `socket_superbridge_vault_old.json` functions as its bridge client
 * calls them, and the Socket `Vault` ABI (`TokensDeposited`, `getCurrentLockLimit`, `token__`).
 */
export const socketVaultAbi = [
  {
    type: 'function',
    name: 'depositToAppChain',
    stateMutability: 'payable',
    inputs: [
      { name: 'receiver_', type: 'address' },
      { name: 'amount_', type: 'uint256' },
      { name: 'msgGasLimit_', type: 'uint256' },
      { name: 'connector_', type: 'address' },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'getMinFees',
    stateMutability: 'view',
    inputs: [
      { name: 'connector_', type: 'address' },
      { name: 'msgGasLimit_', type: 'uint256' },
    ],
    outputs: [{ name: 'totalFees', type: 'uint256' }],
  },
  {
    type: 'function',
    name: 'getCurrentLockLimit',
    stateMutability: 'view',
    inputs: [{ name: 'connector_', type: 'address' }],
    outputs: [{ name: '', type: 'uint256' }],
  },
  { type: 'function', name: 'token__', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'address' }] },
  {
    type: 'event',
    name: 'TokensDeposited',
    anonymous: false,
    inputs: [
      { name: 'connector', type: 'address', indexed: false },
      { name: 'depositor', type: 'address', indexed: false },
      { name: 'receiver', type: 'address', indexed: false },
      { name: 'depositAmount', type: 'uint256', indexed: false },
    ],
  },
] as const

/**
 * Gas the message may use on Derive Chain (where the credit executes): derive_client 0.3.x's
 * `MSG_GAS_LIMIT` (0.2.x used 100,000, as Derive's manual steps do). The fee quote grows with it.
 */
export const DERIVE_MSG_GAS_LIMIT = 200_000n
/** Paid over the fee quote, in basis points, so a quote that rises before inclusion still clears. */
export const DERIVE_FEE_MARGIN_BPS = 1_000n
/** A quote plus margin above this (0.01 ETH) is refused: a bound on a value read from a contract. */
export const DERIVE_MAX_MESSAGE_FEE_WEI = 10n ** 16n
/** The approve covers at least this much (100,000 USDC), so most transfers reuse one allowance. */
export const DERIVE_APPROVE_AT_LEAST_BASE_UNITS = 100_000_000_000n
/** Outbox steps of one transfer (purpose 'bridge', refId the transfer id): bridge/approve-call.ts */
export const DERIVE_APPROVE_STEP = APPROVE_STEP
export const DERIVE_DEPOSIT_STEP = DEPOSIT_STEP

export interface DeriveBridgeOptions {
  readonly outbox: OutboxDeps
  /** EXCHANGE_WALLET_ADDRESS: the platform's Derive smart-contract wallet, credited on Derive Chain */
  readonly receiver: Address
  /** EXCHANGE_CHAIN_ID: must be the routes' destination (957), else the adapter refuses */
  readonly exchangeChainId: number
  /** defaults to the live table; tests pass a stand-in vault */
  readonly routes?: DeriveRouteTable
  readonly msgGasLimit?: bigint
  readonly feeMarginBps?: bigint
  readonly maxMessageFeeWei?: bigint
  readonly approveAtLeastBaseUnits?: bigint
}

/** The calldata of the vault deposit. */
export function encodeDeriveDeposit(p: {
  receiver: Address
  amountBaseUnits: bigint
  msgGasLimit: bigint
  connector: Address
}): Hex {
  return encodeFunctionData({
    abi: socketVaultAbi,
    functionName: 'depositToAppChain',
    args: [getAddress(p.receiver), p.amountBaseUnits, p.msgGasLimit, getAddress(p.connector)],
  })
}

/** quote + ⌈quote × marginBps / 10,000⌉: what the deposit pays as message fee. */
export function messageFeeWithMargin(quotedWei: bigint, marginBps: bigint): bigint {
  return quotedWei + (quotedWei * marginBps + 9_999n) / 10_000n
}

export class DeriveBridgeAdapter implements BridgeAdapter {
  readonly name = 'derive-socket'
  readonly toChain = EXCHANGE_CHAIN_NAME
  readonly #o: Required<Omit<DeriveBridgeOptions, 'outbox'>> & { outbox: OutboxDeps }

  constructor(o: DeriveBridgeOptions) {
    const feeMarginBps = o.feeMarginBps ?? DERIVE_FEE_MARGIN_BPS
    if (feeMarginBps < 0n || feeMarginBps > 5_000n) throw new RangeError('feeMarginBps must be within 0..5000')
    this.#o = {
      outbox: o.outbox,
      receiver: getAddress(o.receiver),
      exchangeChainId: o.exchangeChainId,
      routes: o.routes ?? DERIVE_USDC_ROUTES,
      msgGasLimit: o.msgGasLimit ?? DERIVE_MSG_GAS_LIMIT,
      feeMarginBps,
      maxMessageFeeWei: o.maxMessageFeeWei ?? DERIVE_MAX_MESSAGE_FEE_WEI,
      approveAtLeastBaseUnits: o.approveAtLeastBaseUnits ?? DERIVE_APPROVE_AT_LEAST_BASE_UNITS,
    }
  }

  assertReady(fromChain: ChainName): void {
    this.#route(fromChain)
  }

  async send(t: BridgeTransfer): Promise<OutboundRecord> {
    return (await advanceLegs(this.#legs(t), t)).record
  }

  /**
   * Where the transfer stands. It also moves it on: after a crash between the approve and the
   * deposit, the tick resumes with the approve's record, and the deposit is signed here (through
   * the outbox, so at most once).
   */
  async status(t: BridgeTransfer, _record: OutboundRecord): Promise<BridgeStatus> {
    const s = await legsStatus(this.#legs(t), t, {
      approve: 'the approve of the bridge vault failed',
      call: 'the bridge deposit failed on chain',
    })
    if (s.state === 'pending') return { state: 'pending', record: s.record }
    if (s.state === 'failed') return { state: 'failed', record: s.record, reason: s.reason, earlierLegs: s.earlierLegs }
    // Socket keeps all of msg.value (what exceeds the minimum pays the executor): all of it is the fee
    return {
      state: 'delivered',
      record: s.record,
      feeBaseUnits: 0n,
      messageFeeWei: s.valueWei,
      earlierLegs: s.earlierLegs,
    }
  }

  /** The transfer's two legs: approve the vault for the USDC, then its deposit (bridge/approve-call.ts). */
  #legs(t: BridgeTransfer): TwoLegs {
    const route = this.#route(t.fromChain)
    return {
      outbox: this.#o.outbox,
      token: route.usdc,
      spender: route.vault,
      approveAtLeast: this.#o.approveAtLeastBaseUnits,
      prepare: async () => ({
        to: route.vault,
        valueWei: await this.#preflight(t, route),
        data: encodeDeriveDeposit({
          receiver: this.#o.receiver,
          amountBaseUnits: t.amountBaseUnits,
          msgGasLimit: this.#o.msgGasLimit,
          connector: route.connector,
        }),
      }),
    }
  }

  /** The route of `fromChain`, checked against the deployment; refuses (never guesses) otherwise. */
  #route(fromChain: ChainName): DeriveUsdcRoute {
    const { routes, exchangeChainId } = this.#o
    const route = routes.routes[fromChain]
    if (!route) {
      throw new BridgeUnavailableError(`Derive's USDC deposit route is not verified for ${fromChain}`, {
        adapter: this.name,
        fromChain,
      })
    }
    if (exchangeChainId !== routes.destinationChainId) {
      throw new BridgeUnavailableError(
        `Derive's USDC deposit route is not verified for exchange chain ${exchangeChainId} (its vaults deliver to ${routes.destinationChainId})`,
        { adapter: this.name, fromChain, exchangeChainId },
      )
    }
    const info = this.#o.outbox.registry.get(fromChain)
    const usdc = info?.tokens.find((x) => x.symbol === 'USDC')?.contract
    if (!info || info.chainId !== route.chainId || !usdc || getAddress(usdc) !== getAddress(route.usdc)) {
      throw new BridgeUnavailableError(
        `Derive's USDC deposit route is not verified for ${fromChain} as configured (chain id ${info?.chainId}, USDC ${usdc})`,
        { adapter: this.name, fromChain, expectedChainId: route.chainId, expectedUsdc: route.usdc },
      )
    }
    return route
  }

  #clients(fromChain: ChainName): ChainClients {
    const c = this.#o.outbox.clients.get(fromChain)
    if (!c) throw new BridgeUnavailableError('no clients for the source chain', { fromChain })
    return c
  }

  /**
   * The on-chain checks before funds move, and the message fee to pay: the vault locks the
   * registry's USDC, its limit for the connector covers the amount (an unknown connector has 0),
   * and the quote plus margin stays under the bound.
   */
  async #preflight(t: BridgeTransfer, route: DeriveUsdcRoute): Promise<bigint> {
    const pc = this.#clients(t.fromChain).publicClient
    const vault = { address: route.vault, abi: socketVaultAbi } as const
    const [token, limit] = await Promise.all([
      pc.readContract({ ...vault, functionName: 'token__' }),
      pc.readContract({ ...vault, functionName: 'getCurrentLockLimit', args: [route.connector] }),
    ])
    if (getAddress(token) !== getAddress(route.usdc)) {
      throw new BridgeUnavailableError('the bridge vault does not lock the USDC of the registry: route not verified', {
        fromChain: t.fromChain,
        vault: route.vault,
        vaultToken: token,
        usdc: route.usdc,
      })
    }
    if (limit < t.amountBaseUnits) {
      throw new BridgeLimitError({ fromChain: t.fromChain, amountBaseUnits: t.amountBaseUnits, limitBaseUnits: limit })
    }
    // only a connector the vault knows can quote (the vault asks the connector)
    const quotedWei = await pc.readContract({
      ...vault,
      functionName: 'getMinFees',
      args: [route.connector, this.#o.msgGasLimit],
    })
    const valueWei = messageFeeWithMargin(quotedWei, this.#o.feeMarginBps)
    if (valueWei > this.#o.maxMessageFeeWei) {
      throw new BridgeFeeTooHighError({ fromChain: t.fromChain, quotedWei, maxWei: this.#o.maxMessageFeeWei })
    }
    return valueWei
  }
}
