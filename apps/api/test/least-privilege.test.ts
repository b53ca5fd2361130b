/**
 * The API as deployed holds no key (docs/architecture.md "Least privilege"): the real API process
 * (src/main.ts, NODE_ENV=production) started with only the API's variables (no private key, no
 * mnemonic; DEPOSIT_XPUB instead) and driven over HTTP through every route group. The deposit
 * address it shows is the one the worker's keyring, from the mnemonic, derives and signs for.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { generateMnemonic } from '@scure/bip39'
import { wordlist } from '@scure/bip39/wordlists/english.js'
import { API_FORBIDDEN_ENV_NAMES } from '@wh/config'
import { apiProcessEnv, freePort, integrationContext } from '@wh/testkit'
import { DepositKeyring } from '@wh/wallet'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deskSignIn, makeOperators } from './desk-support'
import { DOMAIN, siweMessage } from './support'

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url))

describe('the API process with no private key and no mnemonic', () => {
  // a mnemonic of this test only: the addresses cannot come from a default
  const mnemonic = generateMnemonic(wordlist, 128)
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let child: ChildProcess
  let base: string
  let apiEnv: Record<string, string>
  let adminPort: number
  const output: string[] = []

  beforeAll(async () => {
    ctx = await integrationContext({ MASTER_MNEMONIC: mnemonic, SIWE_DOMAIN: DOMAIN })
    // exactly what the API reads, as the local run and compose give it: nothing of the worker's
    adminPort = await freePort()
    apiEnv = {
      ...apiProcessEnv(ctx.env),
      NODE_ENV: 'production',
      PORT: '0',
      LOG_LEVEL: 'info',
      // the operator desk on its own loopback listener
      ADMIN_PORT: String(adminPort),
    }
    child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
      env: { PATH: process.env.PATH, WH_ENV_FILE: 'none', ...apiEnv } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    base = await new Promise<string>((resolve, reject) => {
      const onData = (d: Buffer) => {
        output.push(String(d))
        const text = output.join('')
        // both listeners log the same line: the public one is the port that is not the desk's
        const urls = [...text.matchAll(/Server listening at (http:\/\/127\.0\.0\.1:(\d+))/g)]
        const pub = urls.find((u) => u[2] !== String(adminPort))
        if (pub?.[1] && text.includes(`127.0.0.1:${adminPort}`)) resolve(pub[1])
      }
      child.stdout?.on('data', onData)
      child.stderr?.on('data', onData)
      child.once('exit', (code) => reject(new Error(`the API exited ${code}:\n${output.join('')}`)))
    })
  })
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r))
      child.kill('SIGTERM')
      await exited
    }
    await ctx?.database.close()
  })

  it('its environment holds none of the keys, the mnemonic or the owner URL', () => {
    for (const name of API_FORBIDDEN_ENV_NAMES) expect(apiEnv).not.toHaveProperty(name)
    expect(apiEnv.DEPOSIT_XPUB).toMatch(/^xpub/)
    // the process's own environment, as the kernel holds it
    const environ = readFileSync(`/proc/${child.pid}/environ`, 'utf8')
    for (const name of [
      'MASTER_PRIVATE_KEY',
      'SESSION_PRIVATE_KEY',
      'GAS_WALLET_PRIVATE_KEY',
      'SWAP_WALLET_PRIVATE_KEY',
    ])
      expect(environ).not.toContain((ctx.env[name] as string).slice(2))
    expect(environ).not.toContain(mnemonic)
  })

  it('serves every route group over HTTP: sign-in, deposit address, withdrawals, positions, portfolio, assets, health', async () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const call = async (path: string, init: RequestInit = {}) => {
      const res = await fetch(`${base}${path}`, init)
      const text = await res.text()
      return { status: res.status, body: text ? JSON.parse(text) : undefined }
    }

    // sign-in (SIWE)
    const nonce = await call('/auth/nonce')
    expect(nonce.status).toBe(200)
    const message = siweMessage(account, nonce.body.nonce)
    const signed = await call('/auth/verify', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message, signature: await account.signMessage({ message }) }),
    })
    expect(signed.status).toBe(200)
    const auth = { authorization: `Bearer ${signed.body.token}` }

    // the deposit address: what the worker's keyring (the mnemonic's) derives for this user
    const deposit = await call('/deposit-address', { headers: auth })
    expect(deposit.status).toBe(200)
    const [user] = await ctx.database.sql<{ hd_index: number }[]>`
      select hd_index from users where wallet_address = ${account.address}`
    expect(user).toBeDefined()
    const worker = DepositKeyring.fromMnemonic(mnemonic)
    expect(deposit.body.address).toBe(worker.address(user?.hd_index as number))
    expect(worker.signer(user?.hd_index as number).account.address).toBe(deposit.body.address)

    // withdrawals: the routes, and a request refused for a business reason (nothing deposited)
    const routes = await call('/withdrawals/routes', { headers: auth })
    expect(routes.status).toBe(200)
    expect(routes.body.routes.length).toBeGreaterThan(0)
    const withdrawal = await call('/withdrawals', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({
        chain: 'base',
        asset: 'USDC',
        amount: '25',
        destination: privateKeyToAccount(generatePrivateKey()).address,
      }),
    })
    expect(withdrawal.status).toBe(422)
    // reserved in the journal as the application role (ledger_reserve_withdrawal), refused for want of money
    expect(withdrawal.body).toMatchObject({ statusCode: 422, code: 'INSUFFICIENT_FREE_BALANCE' })

    const positions = await call('/positions', { headers: auth })
    expect(positions.status).toBe(200)
    const summary = await call('/portfolio/summary', { headers: auth })
    expect(summary.status).toBe(200)
    const assets = await call('/assets')
    expect(assets.status).toBe(200)
    // the chains and the exchange are unreachable here: degraded, and still serving
    const health = await call('/health')
    expect(health.status).toBe(200)
    expect(health.body.status).toBe('degraded')

    // the operator desk answers on its own listener only, to an operator who signed in
    const { viewer } = await makeOperators(ctx.ownerUrl, [{ name: 'viewer', role: 'viewer' }])
    const token = await deskSignIn(`http://127.0.0.1:${adminPort}`, 'viewer', viewer as string)
    const desk = await fetch(`http://127.0.0.1:${adminPort}/admin/overview`, {
      headers: { authorization: `Bearer ${token}` },
    })
    expect(desk.status).toBe(200)
    expect(await desk.json()).toMatchObject({ heldTransactions: 0, stoppedSubaccounts: 0 })
    expect((await call('/admin/overview')).status).toBe(404)

    // no key was needed for any of it, and none was logged
    const log = output.join('')
    expect(log).not.toContain(mnemonic.split(' ').slice(0, 3).join(' '))
  })
})
