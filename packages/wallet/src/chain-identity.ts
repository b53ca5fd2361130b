/**
 * Chains are who they say they are (docs/hostile-world.md): an RPC URL pointing at the wrong
 * network would have the deposit watch credit another network's transfers under this chain's name,
 * and two names of one network would credit every deposit twice. Each configured RPC's
 * `eth_chainId` is compared with the registry: at start (a wrong one stops the process) and, for a
 * chain whose RPC did not answer then, before each use until it does. Two names under one chain id are refused
 * when the registry is built (chains.ts, DuplicateChainIdError), so each name is a network of its own.
 */
import { AppError } from '@wh/core'
import { createPublicClient, http } from 'viem'
import type { ChainInfo, ChainName } from './chains'

/** An RPC answers another chain id than the registry names for it. */
export class ChainIdMismatchError extends AppError {
  constructor(
    readonly chain: string,
    readonly expected: number,
    readonly actual: number,
  ) {
    super({
      code: 'CHAIN_ID_MISMATCH',
      // names the chain and the ids, never the URL (a provider's URL carries its key)
      message: `the RPC of ${chain} answers chain id ${actual}, the registry expects ${expected}`,
      details: { chain, expected, actual },
    })
  }
}

/** The answer of one chain's identity check. */
export type ChainIdentity = 'verified' | 'unreachable'

/** A chain id check gives up after this long (an unreachable RPC is checked again later). */
export const CHAIN_ID_TIMEOUT_MS = 3_000

/** What a chain id check needs of a client. */
export interface ChainIdReader {
  readonly publicClient: { request(args: { method: 'eth_chainId' }): Promise<unknown> }
}

async function chainIdOf(c: ChainIdReader): Promise<number | undefined> {
  let timer: NodeJS.Timeout | undefined
  try {
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), CHAIN_ID_TIMEOUT_MS)
    })
    const id = c.publicClient.request({ method: 'eth_chainId' }).then(
      (hex) => Number(hex as string),
      () => undefined,
    )
    return await Promise.race([id, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Checks one chain: 'verified' when its RPC answers the registry's id, 'unreachable' when it does
 * not answer; throws ChainIdMismatchError when it answers another id.
 */
export async function checkChainId(
  info: { readonly name: string; readonly chainId: number },
  c: ChainIdReader,
): Promise<ChainIdentity> {
  const actual = await chainIdOf(c)
  if (actual === undefined) return 'unreachable'
  if (actual !== info.chainId) throw new ChainIdMismatchError(info.name, info.chainId, actual)
  return 'verified'
}

/**
 * Checks every chain of the registry and the exchange chain's RPC at a process's start; a wrong
 * one throws ChainIdMismatchError (the caller stops), an unreachable one is only named (its ticks
 * wait until it answers, ChainGuard). A WebSocket URL is not checked here.
 */
export async function checkChainsAtStart(
  guard: ChainGuard,
  exchange?: { readonly chainId: number; readonly rpcUrl: string },
): Promise<string[]> {
  const unreachable: string[] = await guard.verifyAll()
  if (exchange && /^https?:/.test(exchange.rpcUrl)) {
    const publicClient = createPublicClient({ transport: http(exchange.rpcUrl, { retryCount: 0 }) })
    if ((await checkChainId({ name: 'exchange chain', chainId: exchange.chainId }, { publicClient })) === 'unreachable')
      unreachable.push('exchange chain')
  }
  return unreachable
}

/**
 * The identity of every chain of the registry, checked side by side.
 *
 * @example
 *   const ids = await checkChainIds(registry, clients) // throws ChainIdMismatchError on a wrong RPC
 */
export async function checkChainIds(
  registry: ReadonlyMap<ChainName, ChainInfo>,
  clients: ReadonlyMap<ChainName, ChainIdReader>,
): Promise<Map<ChainName, ChainIdentity>> {
  const out = new Map<ChainName, ChainIdentity>()
  await Promise.all(
    [...registry.values()].map(async (info) => {
      const c = clients.get(info.name)
      if (c) out.set(info.name, await checkChainId(info, c))
    }),
  )
  return out
}

/**
 * Per process: which chains are verified. A chain verified once stays verified; an unreachable one
 * is asked again on each `ready`; one that answers a wrong id throws, then and every time after.
 */
export class ChainGuard {
  readonly #registry: ReadonlyMap<ChainName, ChainInfo>
  readonly #clients: ReadonlyMap<ChainName, ChainIdReader>
  readonly #verified = new Set<ChainName>()
  readonly #wrong = new Map<ChainName, ChainIdMismatchError>()

  constructor(
    registry: ReadonlyMap<ChainName, ChainInfo>,
    clients: ReadonlyMap<ChainName, ChainIdReader>,
    known: ReadonlyMap<ChainName, ChainIdentity> = new Map(),
  ) {
    this.#registry = registry
    this.#clients = clients
    for (const [chain, id] of known) if (id === 'verified') this.#verified.add(chain)
  }

  /**
   * Checks every chain now (the process's start): throws ChainIdMismatchError for a wrong one;
   * returns the chains whose RPC did not answer (they are checked again on use).
   */
  async verifyAll(): Promise<ChainName[]> {
    const unreachable: ChainName[] = []
    for (const chain of this.#registry.keys()) if (!(await this.ready(chain))) unreachable.push(chain)
    return unreachable
  }

  /** True when `chain` may be used now; false while its RPC does not answer; throws when it is another chain. */
  async ready(chain: ChainName): Promise<boolean> {
    const wrong = this.#wrong.get(chain)
    if (wrong) throw wrong
    if (this.#verified.has(chain)) return true
    const info = this.#registry.get(chain)
    const c = this.#clients.get(chain)
    if (!info || !c) return false
    try {
      if ((await checkChainId(info, c)) === 'unreachable') return false
    } catch (e) {
      if (e instanceof ChainIdMismatchError) this.#wrong.set(chain, e)
      throw e
    }
    this.#verified.add(chain)
    return true
  }
}
