/**
 * The hostile RPC proxy against a real anvil, through viem as the service uses it: each scripted
 * fault is what a client sees, and everything else is the node's own answer.
 */
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  HttpRequestError,
  http,
  type PublicClient,
  TimeoutError,
  toHex,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RpcProxy, type RunningChain, startChain, startRpcProxy, TEST_PRIVATE_KEYS } from '../src/index'

const sender = privateKeyToAccount(TEST_PRIVATE_KEYS[0])
const RECIPIENT = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'

describe('the hostile RPC proxy', () => {
  let chain: RunningChain
  let proxy: RpcProxy
  let direct: PublicClient
  let via: PublicClient
  let mine: (blocks: number) => Promise<void>

  beforeAll(async () => {
    chain = await startChain()
    proxy = await startRpcProxy({ upstream: chain.rpcUrl })
    direct = createPublicClient({ transport: http(chain.rpcUrl) })
    via = createPublicClient({ transport: http(proxy.url, { retryCount: 0 }) })
    const anvil = createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) })
    mine = (blocks) => anvil.mine({ blocks })
    await mine(20)
  })
  afterAll(async () => {
    await proxy?.stop()
    await chain?.stop()
  })

  const pay = async () => {
    const wallet = createWalletClient({ account: sender, transport: http(chain.rpcUrl) })
    const hash = await wallet.sendTransaction({ chain: null, to: RECIPIENT, value: 1n })
    await direct.waitForTransactionReceipt({ hash, pollingInterval: 20 })
    return hash
  }
  const head = async (c: PublicClient) => BigInt(await c.request({ method: 'eth_blockNumber' }))

  it('forwards what no rule matches, and counts it', async () => {
    await proxy.reset()
    expect(await head(via)).toBe(await head(direct))
    expect(await via.getChainId()).toBe(chain.chainId)
    const stats = await proxy.stats()
    expect(stats.eth_blockNumber).toEqual({ seen: 1, forwarded: 1, intercepted: 0 })
  })

  it('lag: a backend behind the head hides recent blocks, receipts and state', async () => {
    await proxy.reset()
    const hash = await pay()
    const nonceNow = await direct.getTransactionCount({ address: sender.address })
    await proxy.script([{ method: '*', action: { lag: { blocks: 3 } } }])
    expect(await head(via)).toBe((await head(direct)) - 3n)
    await expect(via.getTransactionReceipt({ hash })).rejects.toThrow()
    expect(await via.getTransactionCount({ address: sender.address })).toBe(nonceNow - 1)
    const latest = await via.getBlock({ blockTag: 'latest' })
    expect(latest.number).toBe((await head(direct)) - 3n)
    expect(
      await via.request({ method: 'eth_getBlockByNumber', params: [`0x${(await head(direct)).toString(16)}`, false] }),
    ).toBeNull()
    // an old receipt is served
    await mine(5)
    expect((await via.getTransactionReceipt({ hash })).status).toBe('success')
    expect((await proxy.stats()).eth_getTransactionReceipt?.intercepted).toBe(2)
  })

  it('nullRecent: only a recent receipt is missing, the head and the nonce are current', async () => {
    await proxy.reset()
    const hash = await pay()
    await proxy.script([{ method: 'eth_getTransactionReceipt', action: { nullRecent: { blocks: 2 } } }])
    expect(await head(via)).toBe(await head(direct))
    expect(await via.getTransactionCount({ address: sender.address })).toBe(
      await direct.getTransactionCount({ address: sender.address }),
    )
    await expect(via.getTransactionReceipt({ hash })).rejects.toThrow()
    await mine(3)
    expect((await via.getTransactionReceipt({ hash })).status).toBe('success')
  })

  it('httpError fails the HTTP request with its status; times and after bound the rule', async () => {
    await proxy.reset()
    await proxy.script([{ method: 'eth_chainId', action: { httpError: { status: 429 } }, after: 1, times: 2 }])
    expect(await via.getChainId()).toBe(chain.chainId) // skipped: after 1
    for (let i = 0; i < 2; i++) {
      const err = await via.request({ method: 'eth_chainId' }).catch((e: unknown) => e)
      expect(err).toBeInstanceOf(HttpRequestError)
      expect((err as HttpRequestError).status).toBe(429)
    }
    expect(await via.getChainId()).toBe(chain.chainId) // expired
  })

  it('rpcError answers one call of a batch with an error; the other calls of the batch are the node’s', async () => {
    await proxy.reset()
    await proxy.script([{ method: 'eth_gasPrice', action: { rpcError: { code: -32005, message: 'limit exceeded' } } }])
    const batching = createPublicClient({ transport: http(proxy.url, { batch: { wait: 5 }, retryCount: 0 }) })
    const [id, price, n] = await Promise.allSettled([
      batching.request({ method: 'eth_chainId' }),
      batching.request({ method: 'eth_gasPrice' }),
      batching.request({ method: 'eth_blockNumber' }),
    ])
    expect(id.status === 'fulfilled' && Number(id.value)).toBe(chain.chainId)
    expect(price.status).toBe('rejected')
    expect(String((price as PromiseRejectedResult).reason)).toMatch(/limit exceeded/)
    expect(n.status === 'fulfilled' && BigInt(n.value)).toBe(await head(direct))
  })

  it('maxLogRange: eth_getLogs over a wider range is refused as a hosted provider refuses it; a narrow one is the node’s', async () => {
    await proxy.reset()
    await proxy.script([{ method: 'eth_getLogs', action: { maxLogRange: { blocks: 3 } } }])
    const to = await head(direct)
    const narrow = await via.request({
      method: 'eth_getLogs',
      params: [{ fromBlock: toHex(to - 2n), toBlock: toHex(to) }],
    })
    expect(narrow).toEqual(
      await direct.request({ method: 'eth_getLogs', params: [{ fromBlock: toHex(to - 2n), toBlock: toHex(to) }] }),
    )
    const wide = await via
      .request({ method: 'eth_getLogs', params: [{ fromBlock: toHex(to - 3n), toBlock: toHex(to) }] })
      .catch((e: unknown) => e)
    expect(String(wide)).toMatch(/exceeds max block range 3/)
    expect(await head(via)).toBe(to) // other methods pass
    expect((await proxy.stats()).eth_getLogs).toEqual({ seen: 2, forwarded: 0, intercepted: 2 }) // both under the rule
  })

  it('hang: the client gives up at its timeout; the proxy still resets and serves', async () => {
    await proxy.reset()
    await proxy.script([{ method: 'eth_blockNumber', action: { hang: true }, times: 1 }])
    const impatient = createPublicClient({ transport: http(proxy.url, { timeout: 200, retryCount: 0 }) })
    const started = performance.now()
    const err = await impatient.request({ method: 'eth_blockNumber' }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(TimeoutError)
    expect(performance.now() - started).toBeLessThan(5_000)
    await proxy.reset()
    expect(await head(via)).toBe(await head(direct))
  })

  it('flipFlop: two backends behind one balancer answer from two heights in turn', async () => {
    await proxy.reset()
    await proxy.script([{ method: 'eth_blockNumber', action: { flipFlop: { blocks: 4 } } }])
    const now = await head(direct)
    expect([await head(via), await head(via), await head(via), await head(via)]).toEqual([now, now - 4n, now, now - 4n])
  })

  it('every: an intermittent fault hits one matching call in N', async () => {
    await proxy.reset()
    await proxy.script([{ method: 'eth_chainId', action: { rpcError: { code: -32000, message: 'flaky' } }, every: 3 }])
    const outcomes: string[] = []
    for (let i = 0; i < 7; i++)
      outcomes.push(
        await via.getChainId().then(
          () => 'ok',
          () => 'err',
        ),
      )
    expect(outcomes).toEqual(['ok', 'ok', 'err', 'ok', 'ok', 'err', 'ok'])
  })

  it('delayMs answers late', async () => {
    await proxy.reset()
    await proxy.script([{ method: 'eth_chainId', action: { delayMs: 300 }, times: 1 }])
    const started = performance.now()
    expect(await via.getChainId()).toBe(chain.chainId)
    expect(performance.now() - started).toBeGreaterThanOrEqual(290)
  })
})
