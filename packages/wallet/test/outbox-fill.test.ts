/**
 * Never sign what cannot be mined, never leave a nonce gap (docs/hostile-world.md "One policy for
 * every outbound transaction"), against a real anvil and Postgres: a signed transaction the node
 * refuses for good has its nonce filled by a no-op recorded before its broadcast; the row fails
 * only once that no-op is at confirmed depth; a fee bump of an unminable gas limit is never signed;
 * bytes refused with an unknown error are filled past a bound, and only while the chain answers.
 */
import {
  createRpcProxyServer,
  integrationContext,
  type RpcProxyServer,
  startChain,
  TEST_PRIVATE_KEYS,
} from '@wh/testkit'
import {
  type Address,
  createPublicClient,
  createTestClient,
  createWalletClient,
  getAddress,
  http,
  parseTransaction,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  buildChainClients,
  buildChainRegistry,
  ChainUnavailableError,
  confirmOutbound,
  deployTestUsdc,
  OUTBOUND_REFUSALS_BEFORE_FILL,
  type OutboundTransfer,
  type OutboxDeps,
  sendOnce,
  testUsdcAbi,
} from '../src/index'

const deployer = privateKeyToAccount(TEST_PRIVATE_KEYS[0])
const CONFIRMATIONS = 1
const FULL_BLOCK = 30_000_000n

describe('a nonce the node refuses for good is filled, never left as a gap', () => {
  let chain: Awaited<ReturnType<typeof startChain>>
  let proxy: RpcProxyServer
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let anvil: ReturnType<typeof createTestClient>
  let usdc: Address
  let n = 0
  const ref = () => `fill-${Date.now()}-${n++}`

  /** A fresh sender (so no test shares its nonces) holding ETH and USDC, and the outbox deps that sign for it. */
  async function sender(tuning: Partial<OutboxDeps> = {}) {
    const account = privateKeyToAccount(generatePrivateKey())
    await anvil.setBalance({ address: account.address, value: 10n ** 19n })
    const transport = http(chain.rpcUrl)
    const wallet = createWalletClient({ account: deployer, transport })
    const mint = await wallet.writeContract({
      chain: null,
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [account.address, 10n ** 12n],
    })
    await createPublicClient({ transport }).waitForTransactionReceipt({ hash: mint, pollingInterval: 20 })
    const registry = buildChainRegistry(ctx.config, {
      base: { chainId: chain.chainId, usdc, confirmations: CONFIRMATIONS },
    })
    const viaProxy = new Map([...registry].map(([k, v]) => [k, { ...v, rpcUrl: proxy.url }]))
    const deps: OutboxDeps = {
      sql: ctx.database.sql,
      clients: buildChainClients(viaProxy),
      registry: viaProxy,
      signerOf: async (a) => (getAddress(a) === account.address ? account : undefined),
      ...tuning,
    }
    return { account, deps }
  }
  const pay = (signer: OutboundTransfer['signer'], token: 'ETH' | 'USDC', amount: bigint): OutboundTransfer => ({
    chain: 'base',
    purpose: 'withdrawal',
    refId: ref(),
    signer,
    to: privateKeyToAccount(generatePrivateKey()).address,
    token,
    amountBaseUnits: amount,
  })
  const versions = (id: string) =>
    ctx.database.sql<{ version: number; fills_nonce: boolean; raw_tx: `0x${string}` }[]>`
      select version, fills_nonce, raw_tx from outbound_tx_versions where outbound_id = ${id} order by version`
  const setBlockGasLimit = async (gas: bigint) => {
    await anvil.request({ method: 'evm_setBlockGasLimit', params: [`0x${gas.toString(16)}`] } as never)
    await anvil.mine({ blocks: 1 })
  }

  beforeAll(async () => {
    chain = await startChain({ chainId: 8453 })
    proxy = await createRpcProxyServer({ upstream: chain.rpcUrl })
    ctx = await integrationContext({ RPC_URL_BASE: chain.rpcUrl })
    const transport = http(chain.rpcUrl)
    anvil = createTestClient({ mode: 'anvil', transport })
    usdc = await deployTestUsdc(createWalletClient({ account: deployer, transport }), createPublicClient({ transport }))
  })
  afterAll(async () => {
    await proxy?.close()
    await ctx?.database.close()
    await chain?.stop()
  })

  it('the block gas limit falls under a pooled transaction: a recorded no-op takes its nonce; the row fails only at depth; the next transaction mines', async () => {
    const { account, deps } = await sender()
    await anvil.setAutomine(false)
    try {
      const stuck = await sendOnce(deps, pay(account, 'USDC', 1_000_000n))
      const next = await sendOnce(deps, pay(account, 'ETH', 10n ** 15n))
      expect(next.nonce).toBe(stuck.nonce + 1)
      // the chain can no longer mine the USDC transfer's gas limit (~62,000): every later
      // transaction of this sender would wait behind its nonce forever
      await setBlockGasLimit(50_000n)
      const refused = await confirmOutbound(deps, stuck.id)
      expect(refused.state).toBe('broadcast')
      const [original, fill] = await versions(stuck.id)
      expect(original?.fills_nonce).toBe(false)
      expect(fill?.fills_nonce).toBe(true)
      const noop = parseTransaction(fill?.raw_tx as `0x${string}`)
      expect(getAddress(noop.to as Address)).toBe(account.address)
      expect(noop.value ?? 0n).toBe(0n)
      expect(noop.gas).toBe(21_000n)
      expect(noop.nonce).toBe(stuck.nonce)
      await anvil.mine({ blocks: 1 })
      // mined, not deep enough: the original bytes could still win somewhere; nothing is released
      const mined = await confirmOutbound(deps, stuck.id)
      expect(mined.state).toBe('broadcast')
      expect(mined.filled).toBeUndefined()
      await anvil.mine({ blocks: CONFIRMATIONS })
      const failed = await confirmOutbound(deps, stuck.id)
      expect(failed).toMatchObject({ state: 'failed', filled: true, gasUsed: 21_000n })
      expect(failed.txHash).not.toBe(stuck.txHash)
      // no gap: the next transaction of the sender (re-broadcast by its confirmation, as the
      // tick does) is mined and final
      await confirmOutbound(deps, next.id)
      await anvil.mine({ blocks: 1 + CONFIRMATIONS })
      expect((await confirmOutbound(deps, next.id)).state).toBe('confirmed')
    } finally {
      await anvil.setAutomine(true)
      await setBlockGasLimit(FULL_BLOCK)
    }
  })

  it('a stuck transaction whose gas limit the chain can no longer mine is not bumped (a bump keeps the gas limit): it is filled', async () => {
    const { account, deps } = await sender({ replaceAfterMs: 0 })
    await anvil.setAutomine(false)
    try {
      const stuck = await sendOnce(deps, pay(account, 'USDC', 1_000_000n))
      await setBlockGasLimit(50_000n)
      await confirmOutbound(deps, stuck.id)
      const all = await versions(stuck.id)
      expect(all.map((v) => v.fills_nonce)).toEqual([false, true])
      // never a version with the unminable gas limit and higher fees
      for (const v of all.slice(1)) expect(parseTransaction(v.raw_tx).gas).toBe(21_000n)
      await anvil.mine({ blocks: 1 + CONFIRMATIONS })
      expect(await confirmOutbound(deps, stuck.id)).toMatchObject({ state: 'failed', filled: true })
    } finally {
      await anvil.setAutomine(true)
      await setBlockGasLimit(FULL_BLOCK)
    }
  })

  it('bytes refused with an unknown error while the chain answers are filled past the bound; a chain that does not answer counts nothing', async () => {
    const { account, deps } = await sender()
    // the chain does not answer its probe: the refusal says nothing about the row
    proxy.script([
      { method: 'eth_sendRawTransaction', action: { rpcError: { code: -32000, message: 'backend busy' } }, times: 1 },
      { method: 'eth_chainId', action: { httpError: { status: 503 } } },
    ])
    const first = pay(account, 'ETH', 10n ** 15n)
    await expect(sendOnce(deps, first)).rejects.toBeInstanceOf(ChainUnavailableError)
    const [row] = await ctx.database.sql<{ refusals: number; state: string }[]>`
      select refusals, state from outbound_txs where ref_id = ${first.refId}`
    expect(row).toEqual({ refusals: 0, state: 'signed' })
    proxy.reset()
    // its bytes go out once the chain answers (the next send's nonce is after it)
    await sendOnce(deps, first)
    // the chain answers; its node keeps refusing the bytes with an error nobody knows
    proxy.script([
      {
        method: 'eth_sendRawTransaction',
        action: { rpcError: { code: -32000, message: 'transaction rejected by policy 7' } },
        times: OUTBOUND_REFUSALS_BEFORE_FILL,
      },
    ])
    const t = pay(account, 'ETH', 10n ** 15n)
    for (let i = 1; i < OUTBOUND_REFUSALS_BEFORE_FILL; i++) await expect(sendOnce(deps, t)).rejects.toThrow(/policy 7/)
    const filled = await sendOnce(deps, t)
    expect((await versions(filled.id)).map((v) => v.fills_nonce)).toEqual([false, true])
    proxy.reset()
    await anvil.mine({ blocks: CONFIRMATIONS })
    expect(await confirmOutbound(deps, filled.id)).toMatchObject({ state: 'failed', filled: true })
  })
})
