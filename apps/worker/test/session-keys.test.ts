/**
 * The service's session keys at the exchange (docs/operations.md "Exchange session keys"), against the
 * simulator over HTTP with Postgres and Redis: a worker whose key holds more than its duty refuses to
 * start (the real main.ts, as a process); the session-keys tick alerts days before a key expires, once
 * a day; and a renewal in the middle of a run: the trading key expires while a position is being sold
 * and a user is funded, the next key registered by the owner's signature (an operator's) takes over,
 * and nothing stops. The old key is then retired.
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SESSION_KEY_DUTIES } from '@wh/exchange'
import { strategyEventsOn } from '@wh/market'
import { checkSessionKeys, prepareGrant, prepareRetire, runFunding, runSessionKeys, signAsOwner } from '@wh/subaccounts'
import { TEST_OWNER_PRIVATE_KEY, testEnv } from '@wh/testkit'
import { requestPosition, runPlacing, tradingProfile } from '@wh/trading'
import { getAddress, type Hex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { creditDeposit, type ExchangeStack, silent, startExchangeStack } from './fixtures/exchange-stack'

const USDC = (n: number) => BigInt(n) * 1_000_000n
const DAY = 86_400_000
// a Monday 09:00 UTC: the balanced profile's first expiry is Wednesday 08:00
const START = Date.UTC(2026, 10, 23, 9, 0, 0)
const WORKER_MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url))
const KEYS_CLI = fileURLToPath(new URL('../src/cli/session-keys.ts', import.meta.url))

/** The operator's command: its one JSON line and exit code. */
function cli(args: string[], env: Record<string, string | undefined>, stdin?: string) {
  return new Promise<{ code: number | null; json: Record<string, unknown> | undefined; output: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', KEYS_CLI, ...args], {
      env: { PATH: process.env.PATH, WH_ENV_FILE: 'none', ...env } as NodeJS.ProcessEnv,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (d) => {
      output += String(d)
    })
    child.stderr.on('data', (d) => {
      output += String(d)
    })
    child.stdin.end(stdin ?? '')
    child.on('exit', (code) => {
      const line = output.trim().split('\n').at(-1) ?? ''
      let json: Record<string, unknown> | undefined
      try {
        json = JSON.parse(line)
      } catch {
        json = undefined
      }
      resolve({ code, json, output })
    })
  })
}

/**
 * Runs the worker's main.ts until it exits, or until it says it started (then it is stopped, and the
 * test's assertions say why that is wrong): a state to wait on, never a time, so a slow start on a
 * loaded machine is not taken for a refusal.
 */
function startWorker(env: Record<string, string | undefined>) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER_MAIN], {
      env: { PATH: process.env.PATH, WH_ENV_FILE: 'none', ...env } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    const read = (d: unknown) => {
      output += String(d)
      if (output.includes('worker started')) child.kill('SIGTERM')
    }
    child.stdout.on('data', read)
    child.stderr.on('data', read)
    child.on('exit', (code) => resolve({ code, output }))
  })
}

const linesOf = (c: Awaited<ReturnType<typeof checkSessionKeys>>) => ('lines' in c ? c.lines : [c.unreadable])

describe('a key per duty, read back from the exchange', () => {
  let stack: ExchangeStack
  beforeAll(async () => {
    // on the wall clock: the worker process below signs its auth with it
    stack = await startExchangeStack()
  })
  afterAll(async () => stack?.close())

  it("the operator's commands: a new key, its grant prepared, signed with the owner's key on stdin, submitted; listed", async () => {
    const env = testEnv({ ...stack.ctx.env })
    const dir = mkdtempSync(join(tmpdir(), 'keys-'))
    const made = await cli(['new', '--out', join(dir, 'next.key')], env)
    expect(made.code).toBe(0)
    const address = made.json?.address as string
    const key = readFileSync(join(dir, 'next.key'), 'utf8').trim()
    expect(privateKeyToAccount(key as Hex).address).toBe(address)
    expect(made.output).not.toContain(key.slice(2)) // the key is in the file only
    const prepared = await cli(['grant', '--duty', 'trading', '--key', address, '--out', join(dir, 'grant.json')], env)
    expect(prepared).toMatchObject({ code: 0, json: { prepared: 'set_session_key' } })
    // a key that is not the owner's is refused before anything is sent
    expect((await cli(['sign', join(dir, 'grant.json')], {}, generatePrivateKey())).code).toBe(1)
    const signed = await cli(['sign', join(dir, 'grant.json')], {}, TEST_OWNER_PRIVATE_KEY)
    expect(signed.code).toBe(0)
    const sent = await cli(['submit', join(dir, 'grant.json'), '--signature', signed.json?.signature as string], env)
    expect(sent).toMatchObject({ code: 0, json: { submitted: true } })
    const listed = (await stack.deps.exchange.sessionKeys()).find((k) => k.public_session_key === address)
    expect(listed?.protocol_scopes).toEqual([...SESSION_KEY_DUTIES.trading])
    const list = await cli(['list'], env)
    expect(list).toMatchObject({ code: 0, json: { problems: [] } })
  })

  it('the keys as the fixtures register them fit their duties; an admin key, a payout key reaching everything, an unregistered key do not', async () => {
    const { config } = stack.ctx
    const now = stack.sim.control.nowMs()
    expect(await checkSessionKeys(config, stack.deps.exchange, now)).toMatchObject({ lines: [] })
    const wallet = config.exchange.walletAddress
    const trading = privateKeyToAccount(config.keys.sessionPrivateKey).address
    const payout = privateKeyToAccount(config.keys.payoutSessionKey as Hex).address
    stack.sim.control.registerWallet({
      wallet,
      sessionKeys: [trading, { address: payout, scopes: [...SESSION_KEY_DUTIES.payout] }],
    })
    const next = generatePrivateKey()
    const withNext = { ...config, keys: { ...config.keys, payoutSessionKeyNext: next } }
    const lines = linesOf(await checkSessionKeys(withNext, stack.deps.exchange, now))
    expect(lines).toEqual([
      `SESSION_PRIVATE_KEY (${trading}) holds admin, beyond its trading duty (trade:orderbook:option, transfer:existing_subaccount, transfer:new_subaccount)`,
      expect.stringMatching(
        new RegExp(
          `^EXCHANGE_PAYOUT_SESSION_KEY \\(${payout}\\) reaches subaccounts .*; a payout key reaches the funding subaccount ${config.exchange.fundingSubaccountId} only$`,
        ),
      ),
    ])
    const unregistered = { ...config, keys: { ...config.keys, payoutSessionKey: next } }
    expect(linesOf(await checkSessionKeys(unregistered, stack.deps.exchange, now))).toContain(
      `EXCHANGE_PAYOUT_SESSION_KEY (${privateKeyToAccount(next).address}) is not registered at the exchange`,
    )
  })

  it('main.ts refuses to start with a key beyond its duty, naming the setting and the address, never the key', async () => {
    // the fixture's trading key is admin now (the test above): the worker must not run with it
    const env = testEnv({ ...stack.ctx.env, LOG_LEVEL: 'info' })
    const { code, output } = await startWorker(env)
    expect(code).toBe(1)
    expect(output).toContain('exchange session keys do not fit their duties')
    expect(output).toContain('SESSION_PRIVATE_KEY (')
    expect(output).toContain('holds admin, beyond its trading duty')
    for (const secret of [env.SESSION_PRIVATE_KEY, env.EXCHANGE_PAYOUT_SESSION_KEY])
      expect(output).not.toContain((secret as string).slice(2))
    expect(output).not.toContain('worker started')
  })
})

describe('renewal: a key expires during a run, and nothing stops', () => {
  let stack: ExchangeStack
  const next = generatePrivateKey()
  const nextAddress = privateKeyToAccount(next).address
  beforeAll(async () => {
    stack = await startExchangeStack({
      sim: { startMs: START },
      env: { SESSION_PRIVATE_KEY_NEXT: next, EXCHANGE_SESSION_KEY_ALERT_DAYS: '14', TRADING_PROFILE: 'balanced' },
    })
    stack.sim.control.setPrice('ETH', '3000')
  })
  afterAll(async () => stack?.close())

  /** The operator's part: the owner's key signs what the service prepared, the service sends it. */
  async function ownerSigns(prepared: ReturnType<typeof prepareRetire>) {
    await stack.deps.exchange.submitOwnerAction(prepared, await signAsOwner(prepared, TEST_OWNER_PRIVATE_KEY))
  }

  it('the old key, a day from expiry, alerts once; the next, registered by the owner, takes over before it expires; retired afterwards', async () => {
    const { deps, sim, sql } = stack
    const config = stack.ctx.config
    const old = privateKeyToAccount(config.keys.sessionPrivateKey).address
    const clock = () => sim.control.nowMs()
    // the current key registered (by the owner) to expire in a day: what a real deployment meets
    await ownerSigns(prepareGrant(config, deps.exchange, { duty: 'trading', key: old, days: 1, nowMs: clock() }))
    const tick = () => runSessionKeys({ ...deps, redis: stack.redis, alerter: deps.alerter })
    const first = await tick()
    expect(stack.alerts.map((a) => a.text)).toEqual([
      expect.stringMatching(
        new RegExp(`^exchange session key SESSION_PRIVATE_KEY \\(${old}\\) expires at .*: renew it`),
      ),
    ])
    expect(first.alerted).toEqual(['SESSION_PRIVATE_KEY: expires soon'])
    expect((await tick()).alerted).toEqual([]) // once a day

    // a position selling through the maker window, signed by the old key
    const place = {
      sql,
      exchange: deps.exchange,
      redis: stack.redis,
      clock: deps.clock,
      platformFeeRate: '0.1',
      strategyEvents: strategyEventsOn(stack.redis),
    }
    const placing = { ...place, profile: tradingProfile('balanced') }
    const userId = randomUUID()
    await creditDeposit(sql, userId, USDC(10_000), { at: new Date(clock()) })
    const pos = await requestPosition(sql, { userId, asset: 'ETH', side: 'put', amount: USDC(5_000) })
    for (let i = 0; i < 6; i++) {
      await runFunding({ ...deps, redis: stack.redis, log: silent })
      await runPlacing(placing)
    }
    const signers = () => [...sim.engine.orders.values()].map((o) => getAddress(o.signer))
    expect(new Set(signers())).toEqual(new Set([old]))

    // the renewal: the next key registered for 90 days while the old one still works
    await ownerSigns(prepareGrant(config, deps.exchange, { duty: 'trading', key: nextAddress, nowMs: clock() }))
    // a day and an hour later the old key has expired; the run goes on
    sim.control.advance(DAY + 3_600_000)
    const before = signers().length
    const { locked, steps } = await runPlacing(placing)
    expect([locked, steps.error ?? 0]).toEqual([false, 0])
    expect(signers().slice(before)).toEqual(expect.arrayContaining([nextAddress]))
    expect(new Set(signers().slice(before))).toEqual(new Set([nextAddress]))
    // and a second user's first funding (a new subaccount) lands, signed by the next key
    const second = randomUUID()
    await creditDeposit(sql, second, USDC(2_000), { at: new Date(clock()) })
    await requestPosition(sql, { userId: second, asset: 'ETH', side: 'put', amount: USDC(1_000) })
    await runFunding({ ...deps, redis: stack.redis, log: silent })
    const [funded] = await sql<{ state: string }[]>`
      select t.state from subaccount_transfers t join subaccounts s on s.id = t.subaccount_id where s.user_id = ${second}`
    expect(funded?.state).toMatch(/^(accepted|funded)$/)
    expect(await deps.exchange.signingKeys()).toMatchObject({ trading: nextAddress })

    // retired: registered again with no scope, it signs nothing any more
    await ownerSigns(prepareRetire(deps.exchange, { key: old, nowMs: clock() }))
    const listed = (await deps.exchange.sessionKeys()).find((k) => getAddress(k.public_session_key) === old)
    expect(listed?.protocol_scopes).toEqual([])
    expect(pos.id).toBeTruthy()
  })
})
