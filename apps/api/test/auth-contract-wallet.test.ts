/**
 * Sign-in by contract accounts (docs/architecture.md "Sign-in"): a deployed ERC-1271 wallet, a
 * counterfactual one (ERC-6492), and every way the check can fail, against the real API and a real
 * anvil. The chain `base` (8453) is anvil behind a counting proxy; `optimism` (10) is a TCP server
 * that accepts and never answers.
 */

import type { AddressInfo } from 'node:net'
import { createServer, type Server, type Socket } from 'node:net'
import {
  createRpcProxyServer,
  type RpcProxyServer,
  type RunningChain,
  startChain,
  TEST_PRIVATE_KEYS,
} from '@wh/testkit'
import { testErc1271WalletAbi, testErc1271WalletFactoryAbi, testErc1271WalletFactoryBytecode } from '@wh/wallet'
import {
  type Address,
  concatHex,
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  type Hex,
  http,
  keccak256,
  type PublicClient,
  toHex,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONTRACT_SIGNATURE_TIMEOUT_MS } from '../src/routes/auth/contract-signature'
import { type Api, getNonce, newAccount, siweMessage, startApi, verify } from './support'

const REJECTED = { statusCode: 401, code: 'SIWE_REJECTED', error: 'Unauthorized', message: 'Sign-in rejected' }
const BASE = 8453
const OPTIMISM = 10
/** ERC-6492's detection suffix, as the standard writes it */
const ERC6492_SUFFIX = `0x${'6492'.repeat(16)}` as Hex

/**
 * A TCP server that accepts every connection and never answers: an RPC that hangs. It counts the
 * connections that sent a request (Node's fetch reopens an idle connection after an aborted one,
 * which sends nothing).
 */
async function startSilentServer(): Promise<{ url: string; requests(): number; close(): Promise<void> }> {
  const sockets = new Set<Socket>()
  let requests = 0
  const server: Server = createServer((socket) => {
    sockets.add(socket)
    socket.once('data', () => requests++)
    socket.on('error', () => {})
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

/** ERC-6492: abi.encode(factory, factoryCalldata, innerSig) ++ the magic suffix. */
function wrap6492(factory: Address, factoryCalldata: Hex, signature: Hex): Hex {
  const encoded = encodeAbiParameters(
    [{ type: 'address' }, { type: 'bytes' }, { type: 'bytes' }],
    [factory, factoryCalldata, signature],
  )
  return concatHex([encoded, ERC6492_SUFFIX])
}

describe('sign-in by a contract account (ERC-1271, ERC-6492)', () => {
  let chain: RunningChain
  let proxy: RpcProxyServer
  let silent: Awaited<ReturnType<typeof startSilentServer>>
  let api: Api
  let publicClient: PublicClient
  let factory: Address
  const deployer = privateKeyToAccount(TEST_PRIVATE_KEYS[0])
  const owner = newAccount()
  let wallet: Address

  const rpcCalls = () => Object.values(proxy.stats()).reduce((n, s) => n + s.seen, 0)
  const code = async (address: Address) => (await publicClient.getCode({ address })) ?? '0x'
  const counterfactual = async (account: { address: Address }, salt: Hex) =>
    (await publicClient.readContract({
      address: factory,
      abi: testErc1271WalletFactoryAbi,
      functionName: 'walletAddress',
      args: [account.address, salt],
    })) as Address
  const createCall = (account: { address: Address }, salt: Hex) =>
    encodeFunctionData({
      abi: testErc1271WalletFactoryAbi,
      functionName: 'createWallet',
      args: [account.address, salt],
    })

  beforeAll(async () => {
    chain = await startChain({ chainId: BASE })
    proxy = await createRpcProxyServer({ upstream: chain.rpcUrl })
    silent = await startSilentServer()
    api = await startApi({ RPC_URL_BASE: proxy.url, RPC_URL_OPTIMISM: silent.url })
    // the contracts are deployed straight on the node, not through the proxy that counts the API's calls
    publicClient = createPublicClient({ transport: http(chain.rpcUrl) }) as PublicClient
    const walletClient = createWalletClient({ account: deployer, transport: http(chain.rpcUrl) })
    const deployed = async (hash: Hex) => {
      const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })
      if (receipt.status !== 'success') throw new Error(`transaction ${hash} failed`)
      return receipt
    }
    const factoryReceipt = await deployed(
      await walletClient.deployContract({
        abi: testErc1271WalletFactoryAbi,
        bytecode: testErc1271WalletFactoryBytecode,
        chain: null,
      }),
    )
    factory = factoryReceipt.contractAddress as Address
    const salt = toHex(1, { size: 32 })
    wallet = await counterfactual(owner, salt)
    await deployed(await walletClient.sendTransaction({ to: factory, data: createCall(owner, salt), chain: null }))
  }, 60_000)
  afterAll(async () => {
    await api?.close()
    await silent?.close()
    await proxy?.close()
    await chain?.stop()
  })

  it('the test wallet is deployed, owned by `owner`, and holds no key of its own', async () => {
    expect(await code(wallet)).not.toBe('0x')
    const walletOwner = await publicClient.readContract({
      address: wallet,
      abi: testErc1271WalletAbi,
      functionName: 'owner',
    })
    expect(walletOwner).toBe(owner.address)
  })

  it('a deployed wallet whose owner signs: 200, the user is the contract, a second sign-in finds it', async () => {
    proxy.reset()
    const signIn = async () => {
      const message = siweMessage({ address: wallet }, await getNonce(api.app), { chainId: BASE })
      return verify(api.app, message, await owner.signMessage({ message }))
    }
    const first = await signIn()
    expect(first.statusCode).toBe(200)
    expect(first.json().address).toBe(wallet)
    // the check went to the chain the message names
    expect(proxy.stats().eth_call?.seen).toBeGreaterThanOrEqual(1)
    const [user] = await api.ctx.database.sql`select id from users where wallet_address = ${wallet}`
    expect(user).toBeDefined()
    const second = await signIn()
    expect(second.statusCode).toBe(200)
    const sub = (res: typeof first) => (api.app.jwt.decode(res.json().token) as { sub: string }).sub
    expect(sub(first)).toBe(user?.id)
    expect(sub(second)).toBe(user?.id)
    expect(await api.ctx.database.sql`select 1 from users where wallet_address = ${owner.address}`).toHaveLength(0)
  })

  it('a counterfactual account with an ERC-6492-wrapped signature: 200, and it is still not deployed', async () => {
    const accountOwner = newAccount()
    const salt = keccak256(toHex('counterfactual'))
    const account = await counterfactual(accountOwner, salt)
    expect(await code(account)).toBe('0x')
    const message = siweMessage({ address: account }, await getNonce(api.app), { chainId: BASE })
    const signature = wrap6492(factory, createCall(accountOwner, salt), await accountOwner.signMessage({ message }))
    const res = await verify(api.app, message, signature)
    expect(res.statusCode).toBe(200)
    expect(res.json().address).toBe(account)
    // the deployment was only simulated
    expect(await code(account)).toBe('0x')
    expect(await api.ctx.database.sql`select 1 from users where wallet_address = ${account}`).toHaveLength(1)
  })

  it('a wrapped signature for a wallet already deployed is accepted too', async () => {
    const message = siweMessage({ address: wallet }, await getNonce(api.app), { chainId: BASE })
    const signature = wrap6492(factory, createCall(owner, toHex(1, { size: 32 })), await owner.signMessage({ message }))
    expect((await verify(api.app, message, signature)).statusCode).toBe(200)
  })

  it('a signature by someone other than the owner: the same 401, and the nonce is not used up', async () => {
    const before = Number((await api.ctx.database.sql`select count(*)::int as n from users`)[0]?.n)
    const message = siweMessage({ address: wallet }, await getNonce(api.app), { chainId: BASE })
    const forged = await verify(api.app, message, await newAccount().signMessage({ message }))
    expect(forged.statusCode).toBe(401)
    expect(forged.json()).toEqual(REJECTED)
    expect(Number((await api.ctx.database.sql`select count(*)::int as n from users`)[0]?.n)).toBe(before)
    // a failed signature leaves the nonce unused, as for a key's signature: the owner can still use it
    expect((await verify(api.app, message, await owner.signMessage({ message }))).statusCode).toBe(200)
  })

  it("an ERC-6492 wrapper deploying someone else's account does not sign for the one the message names", async () => {
    const victimOwner = newAccount()
    const attacker = newAccount()
    const salt = keccak256(toHex('victim'))
    const victim = await counterfactual(victimOwner, salt)
    const message = siweMessage({ address: victim }, await getNonce(api.app), { chainId: BASE })
    // the attacker's own account is deployed in the simulation, and signs; the victim's address has no code
    const signature = wrap6492(factory, createCall(attacker, salt), await attacker.signMessage({ message }))
    const res = await verify(api.app, message, signature)
    expect(res.json()).toEqual(REJECTED)
    // the victim's own owner, wrapped with the victim's factory call, but a signature by another key
    const forged = wrap6492(factory, createCall(victimOwner, salt), await attacker.signMessage({ message }))
    expect((await verify(api.app, message, forged)).json()).toEqual(REJECTED)
  })

  it('a message naming a chain that is not supported: 401 without asking any chain', async () => {
    proxy.reset()
    const requests = silent.requests()
    const message = siweMessage({ address: wallet }, await getNonce(api.app), { chainId: 999_999 })
    const res = await verify(api.app, message, await owner.signMessage({ message }))
    expect(res.statusCode).toBe(401)
    expect(res.json()).toEqual(REJECTED)
    expect(rpcCalls()).toBe(0)
    expect(silent.requests()).toBe(requests)
  })

  it('an RPC that answers an error, an HTTP 503, or refuses the connection: the same 401, never a 5xx', async () => {
    const attempt = async (chainId: number, address: Address = wallet) => {
      const message = siweMessage({ address }, await getNonce(api.app), { chainId })
      return verify(api.app, message, await owner.signMessage({ message }))
    }
    for (const action of [
      { rpcError: { code: -32000, message: 'header not found' } },
      { httpError: { status: 503 } },
    ]) {
      proxy.script([{ method: 'eth_call', action }])
      const res = await attempt(BASE)
      expect(res.json(), JSON.stringify(action)).toEqual(REJECTED)
    }
    proxy.reset()
    // ethereum (chain 1) is left at the discard port: nothing listens (an account bound to no chain yet)
    expect((await attempt(1, await counterfactual(owner, keccak256(toHex('unbound'))))).json()).toEqual(REJECTED)
    // and the same wallet, the same kind of signature, passes once the chain answers
    expect((await attempt(BASE)).statusCode).toBe(200)
  })

  it('an RPC that never answers: the same 401 within the bound, never a 5xx', async () => {
    const requests = silent.requests()
    // an account no one signed in with yet (`wallet` is bound to base by now: it would be refused before any call)
    const unbound = await counterfactual(owner, keccak256(toHex('never signed in')))
    const message = siweMessage({ address: unbound }, await getNonce(api.app), { chainId: OPTIMISM })
    const signature = await owner.signMessage({ message })
    const started = performance.now()
    const res = await verify(api.app, message, signature)
    const elapsedMs = performance.now() - started
    expect(res.statusCode).toBe(401)
    expect(res.json()).toEqual(REJECTED)
    // the chain was asked, and the answer was given up at the bound
    expect(silent.requests()).toBeGreaterThan(requests)
    expect(elapsedMs).toBeGreaterThanOrEqual(CONTRACT_SIGNATURE_TIMEOUT_MS - 50)
    expect(elapsedMs).toBeLessThan(CONTRACT_SIGNATURE_TIMEOUT_MS + 1_500)
    console.log(`hanging RPC: rejected after ${elapsedMs.toFixed(0)} ms (bound ${CONTRACT_SIGNATURE_TIMEOUT_MS} ms)`)
  }, 15_000)

  it('an EOA signs in without any RPC call, even naming a chain whose RPC hangs', async () => {
    proxy.reset()
    const requests = silent.requests()
    for (const chainId of [BASE, OPTIMISM, 1]) {
      const eoa = newAccount()
      const message = siweMessage(eoa, await getNonce(api.app), { chainId })
      const started = performance.now()
      const res = await verify(api.app, message, await eoa.signMessage({ message }))
      expect(res.statusCode, `chain ${chainId}`).toBe(200)
      expect(res.json().address).toBe(eoa.address)
      expect(performance.now() - started).toBeLessThan(CONTRACT_SIGNATURE_TIMEOUT_MS / 2)
    }
    expect(rpcCalls()).toBe(0)
    expect(silent.requests()).toBe(requests)
  })
})
