/**
 * A contract account signs in on its own chain (docs/architecture.md "Sign-in"), against two real
 * anvils: the same address holds a wallet of the user on base and someone else's on arbitrum (one
 * deployer, nonce 0 on both: CREATE gives the same address whatever the owner). The user's first
 * contract sign-in binds them to base; arbitrum's wallet at that address is refused before any call
 * to arbitrum. A key signs in on every chain. The nonce is read before any contract call, and the
 * validator's call carries its gas cap.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type RunningChain, startChain } from '@wh/testkit'
import { testErc1271WalletAbi, testErc1271WalletBytecode } from '@wh/wallet'
import { type Address, createPublicClient, createWalletClient, getAddress, type Hex, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONTRACT_SIGNATURE_GAS } from '../src/routes/auth/contract-signature'
import { type Api, getNonce, newAccount, siweMessage, startApi, verify } from './support'

const BASE = 8453
const ARBITRUM = 42161
const REJECTED = { statusCode: 401, code: 'SIWE_REJECTED', error: 'Unauthorized', message: 'Sign-in rejected' }

/** A JSON-RPC relay to `upstream` that keeps the calls it relayed (method and params). */
async function recordingRelay(upstream: string) {
  const calls: Array<{ method: string; params: unknown[] }> = []
  const server: Server = createServer(async (req, res) => {
    let body = ''
    for await (const chunk of req) body += String(chunk)
    const parsed = JSON.parse(body) as
      | { method: string; params: unknown[] }
      | Array<{ method: string; params: unknown[] }>
    for (const c of Array.isArray(parsed) ? parsed : [parsed]) calls.push({ method: c.method, params: c.params })
    const answer = await fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    res.writeHead(answer.status, { 'content-type': 'application/json' })
    res.end(await answer.text())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

describe('a contract account signs in on its own chain', () => {
  let base: RunningChain
  let arbitrum: RunningChain
  let baseRelay: Awaited<ReturnType<typeof recordingRelay>>
  let arbitrumRelay: Awaited<ReturnType<typeof recordingRelay>>
  let api: Api
  const user = newAccount()
  const attacker = newAccount()
  let wallet: Address

  beforeAll(async () => {
    base = await startChain({ chainId: BASE })
    arbitrum = await startChain({ chainId: ARBITRUM })
    baseRelay = await recordingRelay(base.rpcUrl)
    arbitrumRelay = await recordingRelay(arbitrum.rpcUrl)
    api = await startApi({ RPC_URL_BASE: baseRelay.url, RPC_URL_ARBITRUM: arbitrumRelay.url })
    // one deployer at nonce 0 on both chains, funded on both: the same address, two owners
    const deployer = privateKeyToAccount(generatePrivateKey())
    const deploy = async (chain: RunningChain, owner: Address) => {
      const transport = http(chain.rpcUrl)
      const publicClient = createPublicClient({ transport })
      await publicClient.request({
        method: 'anvil_setBalance' as never,
        params: [deployer.address, '0x56bc75e2d63100000'] as never,
      })
      const hash = await createWalletClient({ account: deployer, transport }).deployContract({
        abi: testErc1271WalletAbi,
        bytecode: testErc1271WalletBytecode,
        args: [owner],
        chain: null,
      })
      return getAddress(
        (await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })).contractAddress as Address,
      )
    }
    wallet = await deploy(base, user.address)
    expect(await deploy(arbitrum, attacker.address)).toBe(wallet)
  }, 60_000)
  afterAll(async () => {
    await api?.close()
    await baseRelay?.close()
    await arbitrumRelay?.close()
    await base?.stop()
    await arbitrum?.stop()
  })

  const signIn = async (signer: typeof user, chainId: number, address: Address = wallet) => {
    const message = siweMessage({ address }, await getNonce(api.app), { chainId })
    return verify(api.app, message, await signer.signMessage({ message }))
  }
  const boundChain = async (address: Address) =>
    (
      await api.ctx.database.sql<{ contract_chain_id: number | null }[]>`
        select contract_chain_id from users where wallet_address = ${address}`
    )[0]?.contract_chain_id

  it("the user's wallet signs in on base and the user is bound to base; the validator's call is gas-capped", async () => {
    const res = await signIn(user, BASE)
    expect(res.statusCode).toBe(200)
    expect(await boundChain(wallet)).toBe(BASE)
    const validatorCall = baseRelay.calls.find((c) => c.method === 'eth_call')
    expect((validatorCall?.params[0] as { gas?: Hex } | undefined)?.gas).toBe(
      `0x${CONTRACT_SIGNATURE_GAS.toString(16)}`,
    )
  })

  it("someone else's wallet at the same address on arbitrum is refused, without a call to arbitrum", async () => {
    const before = arbitrumRelay.calls.length
    const res = await signIn(attacker, ARBITRUM)
    expect(res.json()).toEqual(REJECTED)
    expect(arbitrumRelay.calls.length).toBe(before)
    // the user's own signature does not move the binding either: base it is
    expect((await signIn(user, ARBITRUM)).json()).toEqual(REJECTED)
    expect((await signIn(user, BASE)).statusCode).toBe(200)
    expect(await boundChain(wallet)).toBe(BASE)
  })

  it('a key signs in on every chain, bound to none', async () => {
    const eoa = newAccount()
    const subs = new Set<string>()
    for (const chainId of [BASE, ARBITRUM, 1, 10]) {
      const message = siweMessage(eoa, await getNonce(api.app), { chainId })
      const res = await verify(api.app, message, await eoa.signMessage({ message }))
      expect(res.statusCode, `chain ${chainId}`).toBe(200)
      subs.add((api.app.jwt.decode(res.json().token) as { sub: string }).sub)
    }
    expect(subs.size).toBe(1)
    expect(await boundChain(eoa.address)).toBeNull()
  })

  it('a nonce that is unknown or used is refused before any contract call', async () => {
    const calls = baseRelay.calls.length + arbitrumRelay.calls.length
    const other = newAccount()
    for (const nonce of ['unknownnonce00000000', await getNonce(api.app)]) {
      const message = siweMessage({ address: wallet }, nonce, { chainId: BASE })
      if (nonce !== 'unknownnonce00000000') {
        // the nonce is used first, by someone's key
        const own = siweMessage(other, nonce, { chainId: BASE })
        expect((await verify(api.app, own, await other.signMessage({ message: own }))).statusCode).toBe(200)
      }
      expect((await verify(api.app, message, await user.signMessage({ message }))).json()).toEqual(REJECTED)
    }
    expect(baseRelay.calls.length + arbitrumRelay.calls.length).toBe(calls)
  })
})
