/**
 * `pnpm bench` (api): the latency of one sign-in (POST /auth/verify over HTTP, one at a time) by an
 * EOA, by a deployed ERC-1271 wallet and by a counterfactual account (ERC-6492), against a real
 * anvil, Postgres (fsync on) and Redis. A contract account costs one `eth_call` to the chain the
 * message names; an EOA none (docs/architecture.md "Sign-in").
 */
import { randomBytes } from 'node:crypto'
import { loadConfig } from '@wh/config'
import { createDatabase, runMigrations } from '@wh/db'
import { startChain, startPostgres, startRedis, TEST_PRIVATE_KEYS, testEnv } from '@wh/testkit'
import {
  buildChainRegistry,
  DepositKeyring,
  testErc1271WalletFactoryAbi,
  testErc1271WalletFactoryBytecode,
} from '@wh/wallet'
import { Redis } from 'ioredis'
import postgres from 'postgres'
import { SiweMessage } from 'siwe'
import {
  type Address,
  concatHex,
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  type Hex,
  http,
  type PublicClient,
} from 'viem'
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts'
import { contractSignatureCheck } from '../src/routes/auth/contract-signature'
import type { SiweFields } from '../src/routes/auth/siwe-message'
import { checkSiweMessage, signedByKey } from '../src/routes/auth/siwe-verify'
import { buildServer } from '../src/server'

const SAMPLES = 300
const WARM_UP = 30
const DOMAIN = 'bench.example'
const CHAIN_ID = 8453

interface Signer {
  readonly address: Address
  sign(message: string): Promise<Hex>
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number
}

async function deployFactory(rpcUrl: string): Promise<{ factory: Address; client: PublicClient }> {
  const client = createPublicClient({ transport: http(rpcUrl) }) as PublicClient
  const wallet = createWalletClient({ account: privateKeyToAccount(TEST_PRIVATE_KEYS[0]), transport: http(rpcUrl) })
  const hash = await wallet.deployContract({
    abi: testErc1271WalletFactoryAbi,
    bytecode: testErc1271WalletFactoryBytecode,
    chain: null,
  })
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50 })
  return { factory: receipt.contractAddress as Address, client }
}

/** A deployed wallet (deployed: true) or a counterfactual one signing ERC-6492-wrapped. */
async function contractSigner(
  rpcUrl: string,
  factory: Address,
  client: PublicClient,
  deployed: boolean,
): Promise<Signer> {
  const owner = privateKeyToAccount(generatePrivateKey())
  const salt = `0x${randomBytes(32).toString('hex')}` as Hex
  const args = [owner.address, salt] as const
  const create = encodeFunctionData({ abi: testErc1271WalletFactoryAbi, functionName: 'createWallet', args })
  const address = (await client.readContract({
    address: factory,
    abi: testErc1271WalletFactoryAbi,
    functionName: 'walletAddress',
    args,
  })) as Address
  if (deployed) {
    const wallet = createWalletClient({ account: privateKeyToAccount(TEST_PRIVATE_KEYS[0]), transport: http(rpcUrl) })
    const hash = await wallet.sendTransaction({ to: factory, data: create, chain: null })
    await client.waitForTransactionReceipt({ hash, pollingInterval: 50 })
  }
  const sign = async (message: string): Promise<Hex> => {
    const inner = await owner.signMessage({ message })
    if (deployed) return inner
    const wrapped = encodeAbiParameters(
      [{ type: 'address' }, { type: 'bytes' }, { type: 'bytes' }],
      [factory, create, inner],
    )
    return concatHex([wrapped, `0x${'6492'.repeat(16)}`])
  }
  return { address, sign }
}

function eoaSigner(account: PrivateKeyAccount): Signer {
  return { address: account.address, sign: (message) => account.signMessage({ message }) }
}

function signedMessage(signer: Signer, nonce: string): string {
  return new SiweMessage({
    domain: DOMAIN,
    address: signer.address,
    uri: `https://${DOMAIN}`,
    version: '1',
    chainId: CHAIN_ID,
    nonce,
    issuedAt: new Date().toISOString(),
  }).prepareMessage()
}

function report(name: string, times: number[]): void {
  const sorted = [...times].sort((a, b) => a - b)
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length
  const ms = (v: number) => `${v.toFixed(3).padStart(8)} ms`
  console.log(
    `  ${name.padEnd(26)} p50 ${ms(percentile(sorted, 50))}   p99 ${ms(percentile(sorted, 99))}   mean ${ms(mean)}`,
  )
}

/**
 * The signature check alone, in this process, as the route makes it: local recovery, and for a
 * contract account the chain's answer (one eth_call to anvil over HTTP); an EOA never asks it.
 */
async function measureCheck(signer: Signer, check: ReturnType<typeof contractSignatureCheck>) {
  const times: number[] = []
  for (let i = 0; i < WARM_UP + SAMPLES; i++) {
    const message = signedMessage(signer, randomBytes(16).toString('hex'))
    const signature = await signer.sign(message)
    const fields = checkSiweMessage(message, { domain: DOMAIN, nowMs: Date.now() }) as SiweFields
    const started = performance.now()
    const ok = signedByKey(fields, message, signature) || (await check(fields, message, signature))
    if (i >= WARM_UP) times.push(performance.now() - started)
    if (!ok) throw new Error('the signature check failed')
  }
  return times
}

/** Sign-ins one after another; the milliseconds of each POST /auth/verify (nonce and signing excluded). */
async function measure(base: string, signer: Signer, n: number): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const { nonce } = (await (await fetch(`${base}/auth/nonce`)).json()) as { nonce: string }
    const message = signedMessage(signer, nonce)
    const signature = await signer.sign(message)
    const started = performance.now()
    const res = await fetch(`${base}/auth/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message, signature }),
    })
    await res.arrayBuffer()
    times.push(performance.now() - started)
    if (res.status !== 200) throw new Error(`sign-in answered ${res.status}`)
  }
  return times
}

async function main() {
  const [pg, redisServer, chain] = await Promise.all([
    startPostgres({ durable: true }),
    startRedis(),
    startChain({ chainId: CHAIN_ID }),
  ])
  const admin = postgres(pg.url, { max: 1, onnotice: () => {} })
  await admin`create database bench`
  const dbUrl = pg.url.replace(/\/postgres$/, '/bench')
  await runMigrations(dbUrl)
  const env = testEnv({
    DATABASE_URL: dbUrl,
    CACHE_URL: redisServer.url,
    SIWE_DOMAIN: DOMAIN,
    AUTH_RATE_LIMIT_PER_MINUTE: '100000000',
    NODE_ENV: 'production',
    RPC_URL_BASE: chain.rpcUrl,
  })
  const config = loadConfig(env)
  const database = createDatabase(config.databaseUrl, { max: 10, appName: 'bench-api' })
  const redis = new Redis(config.cacheUrl)
  const app = await buildServer({
    config,
    database,
    redis,
    keyring: DepositKeyring.fromMnemonic(config.keys.masterMnemonic).publicOnly(),
    chains: buildChainRegistry(config),
    logger: false,
  })
  const base = await app.listen({ host: '127.0.0.1', port: 0 })

  const { factory, client } = await deployFactory(chain.rpcUrl)
  // one signer per kind, signing in again and again (after its first sign-in, a returning user)
  const kinds: [string, Signer][] = [
    ['EOA (local recovery)', eoaSigner(privateKeyToAccount(generatePrivateKey()))],
    ['ERC-1271, deployed', await contractSigner(chain.rpcUrl, factory, client, true)],
    ['ERC-6492, counterfactual', await contractSigner(chain.rpcUrl, factory, client, false)],
  ]
  const check = contractSignatureCheck(buildChainRegistry(config))
  console.log(`\nthe signature check alone (in process, ${SAMPLES} each; a contract account: one eth_call to anvil)`)
  for (const [name, signer] of kinds) report(name, await measureCheck(signer, check))
  console.log(
    `\nsign-in latency, POST /auth/verify over HTTP, one at a time, ${SAMPLES} each (Postgres fsync on: a commit per sign-in)`,
  )
  for (const [name, signer] of kinds) {
    await measure(base, signer, WARM_UP)
    report(name, await measure(base, signer, SAMPLES))
  }

  await app.close()
  redis.disconnect()
  await database.close()
  await admin.end()
  await Promise.all([chain.stop(), redisServer.stop(), pg.stop()])
}

await main()
