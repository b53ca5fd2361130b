/**
 * A local stand-in for Circle's attestation service (Iris) for the local run and tests (docs/chains.md "The L2
 * route"): it answers the worker as `https://iris-api.circle.com` does, for the local chains' CCTP stand-ins
 * (packages/wallet/contracts/TestMessageTransmitterV2.sol). Written for this repository from Circle's published API.
 *
 * - `GET /v2/messages/{sourceDomain}?transactionHash=0x…`: 404 until the transaction is seen; then, for each
 *   `MessageSent` of the watched transmitter in it, `status: pending_confirmations` (attestation `PENDING`) until the
 *   message is deep and old enough, then `complete` with the message as attested and the signature. The attested
 *   message is the emitted one with its nonce, its executed finality and (a fast transfer) its fee filled in, as
 *   Iris does; a fast transfer whose max fee is below the fast fee is attested as a standard one.
 * - `GET /v2/burn/USDC/fees/{source}/{destination}`: `[{ finalityThreshold: 1000, minimumFee }, { 2000, … }]`, in bps.
 * - Control, under `/_attester/`: `watch` (the chains: domain, RPC, transmitter), `set` (fees, depths, delays, and
 *   `status`: `up`, `down` (503 to everything), `hold` (nothing completes), `slow_ms`), `state`.
 *
 * It keeps no state but its settings: every answer is read from the chain, so a reorg that drops a burn makes its
 * answer 404 again, and a restart loses nothing but the settings (the local run's setup sends `watch` again).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import {
  type Address,
  concat,
  createPublicClient,
  decodeEventLog,
  encodePacked,
  getAddress,
  type Hex,
  hexToBigInt,
  hexToNumber,
  http,
  keccak256,
  type PublicClient,
  pad,
  parseAbiItem,
  size,
  slice,
  toHex,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

/** The public, development-only key the local stand-ins trust (their transmitters are deployed naming its address). */
export const LOCAL_ATTESTER_KEY: Hex = keccak256(toHex('wheelhouse local cctp attester (development only)'))
export const LOCAL_ATTESTER_ADDRESS: Address = privateKeyToAccount(LOCAL_ATTESTER_KEY).address

const MESSAGE_SENT = parseAbiItem('event MessageSent(bytes message)')
/** Circle's finality thresholds */
const FAST = 1000
const STANDARD = 2000
/** header offsets of a V2 message, and the fee executed within its burn body (148 + 164) */
const NONCE = [12, 44] as const
const MIN_FINALITY = [140, 144] as const
const EXECUTED = [144, 148] as const
const BODY = 148
const AMOUNT = [BODY + 68, BODY + 100] as const
const MAX_FEE = [BODY + 132, BODY + 164] as const
const FEE_EXECUTED = [BODY + 164, BODY + 196] as const

export interface WatchedChain {
  readonly domain: number
  readonly rpcUrl: string
  readonly transmitter: Address
}

export interface AttesterSettings {
  /** the fast-transfer fee, in basis points (1.3 = 0.013 %) */
  fastFeeBps: number
  /** the standard-transfer minimum fee, in basis points (0: free, Circle's usual) */
  standardFeeBps: number
  /** blocks on top of the burn's before a fast / a standard message is attested */
  fastConfirmations: number
  standardConfirmations: number
  /** and milliseconds since the burn's block (the time Iris takes), each */
  fastDelayMs: number
  standardDelayMs: number
  /** up; down: every request answers 503; hold: nothing completes */
  status: 'up' | 'down' | 'hold'
  /** every answer waits this long first (a slow service) */
  slowMs: number
}

export const DEFAULT_ATTESTER_SETTINGS: Readonly<AttesterSettings> = {
  fastFeeBps: 1.3,
  standardFeeBps: 0,
  fastConfirmations: 0,
  standardConfirmations: 0,
  fastDelayMs: 0,
  standardDelayMs: 0,
  status: 'up',
  slowMs: 0,
}

export interface RunningAttester {
  readonly url: string
  readonly port: number
  readonly address: Address
  readonly settings: AttesterSettings
  watch(chains: readonly WatchedChain[]): void
  set(s: Partial<AttesterSettings>): void
  close(): Promise<void>
}

/** A fee in base units: `bps` of `amount`, rounded up (hundredths of a bp are kept exactly). */
export function feeOf(amount: bigint, bps: number): bigint {
  const hundredths = BigInt(Math.round(bps * 100))
  return (amount * hundredths + 999_999n) / 1_000_000n
}

type Answer = { status: number; body: unknown }

interface Chain extends WatchedChain {
  readonly client: PublicClient
}

/** What one emitted message becomes: pending, or complete with the attested bytes. */
async function attest(
  chain: Chain,
  s: AttesterSettings,
  log: { data: Hex; topics: [Hex, ...Hex[]]; logIndex: number; blockNumber: bigint },
  txHash: Hex,
  head: { number: bigint; timestampMs: number },
  blockTimestampMs: number,
  sign: (hash: Hex) => Promise<Hex>,
): Promise<Record<string, unknown>> {
  const emitted = decodeEventLog({ abi: [MESSAGE_SENT], data: log.data, topics: log.topics }).args.message
  const nonce = keccak256(encodePacked(['uint32', 'bytes32', 'uint256'], [chain.domain, txHash, BigInt(log.logIndex)]))
  const amount = hexToBigInt(slice(emitted, ...AMOUNT))
  const maxFee = hexToBigInt(slice(emitted, ...MAX_FEE))
  const asked = hexToNumber(slice(emitted, ...MIN_FINALITY))
  const fastFee = feeOf(amount, s.fastFeeBps)
  const fast = asked <= FAST && maxFee >= fastFee
  const depth = head.number - log.blockNumber
  const ready =
    s.status === 'up' &&
    depth >= BigInt(fast ? s.fastConfirmations : s.standardConfirmations) &&
    head.timestampMs - blockTimestampMs >= (fast ? s.fastDelayMs : s.standardDelayMs)
  const pending = { attestation: 'PENDING', message: '0x', eventNonce: nonce, cctpVersion: 2 }
  // a fast burn whose max fee is below the fast fee waits for finality as a standard one, saying why
  const delayReason = asked <= FAST && !fast ? 'insufficient_fee' : null
  if (!ready) return { ...pending, status: 'pending_confirmations', decodedMessage: null, delayReason }
  const message = concat([
    slice(emitted, 0, NONCE[0]),
    nonce,
    slice(emitted, NONCE[1], EXECUTED[0]),
    pad(toHex(fast ? FAST : STANDARD), { size: 4 }),
    slice(emitted, EXECUTED[1], FEE_EXECUTED[0]),
    pad(toHex(fast ? fastFee : 0n), { size: 32 }),
    slice(emitted, FEE_EXECUTED[1], size(emitted)),
  ])
  return {
    attestation: await sign(keccak256(message)),
    message,
    eventNonce: nonce,
    cctpVersion: 2,
    status: 'complete',
    delayReason: null,
    decodedMessage: {
      sourceDomain: String(hexToNumber(slice(message, 4, 8))),
      destinationDomain: String(hexToNumber(slice(message, 8, 12))),
      nonce,
      minFinalityThreshold: String(asked),
      finalityThresholdExecuted: String(fast ? FAST : STANDARD),
      decodedMessageBody: {
        amount: amount.toString(),
        maxFee: maxFee.toString(),
        feeExecuted: (fast ? fastFee : 0n).toString(),
      },
    },
  }
}

/** GET /v2/messages/{domain}?transactionHash=: Iris's answer for the burns of one transaction. */
async function messagesOf(
  chains: ReadonlyMap<number, Chain>,
  s: AttesterSettings,
  domain: number,
  txHash: string | null,
  sign: (hash: Hex) => Promise<Hex>,
): Promise<Answer> {
  const chain = chains.get(domain)
  if (!chain) return { status: 400, body: { code: 400, message: `unknown source domain ${domain}` } }
  if (!txHash || !/^0x[0-9a-fA-F]{64}$/.test(txHash))
    return { status: 400, body: { code: 400, message: 'transactionHash is required' } }
  const receipt = await chain.client.getTransactionReceipt({ hash: txHash as Hex }).catch(() => undefined)
  if (!receipt) return { status: 404, body: { code: 404, message: 'Message hash not found' } }
  const logs = receipt.logs.filter(
    (l) => getAddress(l.address) === chain.transmitter && l.topics[0] === keccak256(toHex('MessageSent(bytes)')),
  )
  if (logs.length === 0) return { status: 404, body: { code: 404, message: 'Message hash not found' } }
  const [head, block] = await Promise.all([
    chain.client.getBlock({ blockTag: 'latest' }),
    chain.client.getBlock({ blockNumber: receipt.blockNumber }),
  ])
  const messages = []
  for (const l of logs)
    messages.push(
      await attest(
        chain,
        s,
        { data: l.data, topics: l.topics as [Hex, ...Hex[]], logIndex: l.logIndex, blockNumber: receipt.blockNumber },
        txHash as Hex,
        // the attester's clock is the wall clock; the chain's blocks carry theirs
        { number: head.number, timestampMs: Date.now() },
        Number(block.timestamp) * 1000,
        sign,
      ),
    )
  return { status: 200, body: { messages } }
}

function feesOf(s: AttesterSettings): Answer {
  return {
    status: 200,
    body: [
      { finalityThreshold: FAST, minimumFee: s.fastFeeBps },
      { finalityThreshold: STANDARD, minimumFee: s.standardFeeBps },
    ],
  }
}

async function bodyOf(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = ''
  for await (const chunk of req) text += String(chunk)
  if (text.length > 100_000) throw new Error('body too large')
  return text ? (JSON.parse(text) as Record<string, unknown>) : {}
}

const SETTING_FIELDS: Readonly<Record<string, keyof AttesterSettings>> = {
  fast_fee_bps: 'fastFeeBps',
  standard_fee_bps: 'standardFeeBps',
  fast_confirmations: 'fastConfirmations',
  standard_confirmations: 'standardConfirmations',
  fast_delay_ms: 'fastDelayMs',
  standard_delay_ms: 'standardDelayMs',
  status: 'status',
  slow_ms: 'slowMs',
}

/** POST /_attester/set: the settings named, each checked; an unknown field or a bad value is a 400 naming it. */
function parseSettings(body: Record<string, unknown>): Partial<AttesterSettings> | { error: string } {
  const out: Partial<Record<keyof AttesterSettings, unknown>> = {}
  for (const [k, v] of Object.entries(body)) {
    const field = SETTING_FIELDS[k]
    if (!field) return { error: `unknown field ${k}` }
    if (field === 'status') {
      if (v !== 'up' && v !== 'down' && v !== 'hold') return { error: 'status must be up, down or hold' }
    } else if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) return { error: `${k} must be a number ≥ 0` }
    out[field] = v
  }
  return out as Partial<AttesterSettings>
}

function parseWatch(body: Record<string, unknown>): WatchedChain[] | { error: string } {
  const chains = body.chains
  if (!Array.isArray(chains)) return { error: 'chains must be a list' }
  const out: WatchedChain[] = []
  for (const c of chains as Record<string, unknown>[]) {
    if (typeof c.domain !== 'number' || typeof c.rpc_url !== 'string' || typeof c.transmitter !== 'string')
      return { error: 'each chain needs domain (number), rpc_url and transmitter' }
    out.push({ domain: c.domain, rpcUrl: c.rpc_url, transmitter: getAddress(c.transmitter) })
  }
  return out
}

/**
 * Starts the attester on `port` (0: a free one).
 *
 * @example
 *   const attester = await startCctpAttester()
 *   attester.watch([{ domain: 6, rpcUrl: base.rpcUrl, transmitter }])
 *   // the worker's CCTP_ATTESTATION_URL: attester.url
 */
export async function startCctpAttester(
  o: { port?: number; host?: string; key?: Hex; settings?: Partial<AttesterSettings> } = {},
): Promise<RunningAttester> {
  const account = privateKeyToAccount(o.key ?? LOCAL_ATTESTER_KEY)
  const sign = (hash: Hex) => account.sign({ hash })
  const settings: AttesterSettings = { ...DEFAULT_ATTESTER_SETTINGS, ...o.settings }
  const chains = new Map<number, Chain>()
  const watch = (list: readonly WatchedChain[]) => {
    for (const c of list)
      chains.set(c.domain, { ...c, client: createPublicClient({ transport: http(c.rpcUrl, { retryCount: 0 }) }) })
  }
  const route = async (req: IncomingMessage): Promise<Answer> => {
    const url = new URL(req.url ?? '/', 'http://attester')
    if (req.method === 'POST' && url.pathname.startsWith('/_attester/')) return control(url.pathname, await bodyOf(req))
    if (settings.slowMs > 0) await new Promise((r) => setTimeout(r, settings.slowMs))
    if (settings.status === 'down') return { status: 503, body: { code: 503, message: 'service unavailable' } }
    const m = /^\/v2\/messages\/(\d+)$/.exec(url.pathname)
    if (req.method === 'GET' && m)
      return messagesOf(chains, settings, Number(m[1]), url.searchParams.get('transactionHash'), sign)
    if (req.method === 'GET' && /^\/v2\/burn\/USDC\/fees\/\d+\/\d+$/.test(url.pathname)) return feesOf(settings)
    if (req.method === 'GET' && url.pathname === '/health') return { status: 200, body: { status: 'ok' } }
    return { status: 404, body: { code: 404, message: 'not found' } }
  }
  const control = (path: string, body: Record<string, unknown>): Answer => {
    if (path === '/_attester/watch') {
      const list = parseWatch(body)
      if ('error' in list) return { status: 400, body: list }
      watch(list)
      return { status: 200, body: { ok: true, domains: [...chains.keys()] } }
    }
    if (path === '/_attester/set') {
      const s = parseSettings(body)
      if ('error' in s) return { status: 400, body: s }
      Object.assign(settings, s)
      return { status: 200, body: { ok: true, settings } }
    }
    if (path === '/_attester/state')
      return { status: 200, body: { settings, domains: [...chains.keys()], address: account.address } }
    return { status: 404, body: { error: `no control ${path}` } }
  }
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    route(req).then(
      (a) => reply(res, a),
      (e: unknown) => reply(res, { status: 500, body: { code: 500, message: (e as Error).message } }),
    )
  })
  await new Promise<void>((resolve) => server.listen(o.port ?? 0, o.host ?? '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://${o.host ?? '127.0.0.1'}:${port}`,
    port,
    address: account.address,
    settings,
    watch,
    set: (s) => Object.assign(settings, s),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

function reply(res: ServerResponse, a: Answer): void {
  res.writeHead(a.status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(a.body))
}
