/**
 * Deposit audit benchmark (docs/chains.md "Every deposit is accounted for"), on a real anvil node,
 * a throwaway durable Postgres and Redis: 100,000 deposit addresses, 1,000 of them with activity
 * (a credited ETH deposit, a gas top-up received and a USDC sweep's fee paid, as rows of deposits
 * and outbound_txs), 10 of those holding ETH no record explains. It runs auditDepositBalances as
 * the tick does and prints, per tick: addresses read, RPC calls, HTTP requests and ms; then the
 * ticks and time a full rotation over every address takes.
 *
 *   pnpm --filter @wh/worker exec tsx bench/audit.ts               100,000 addresses, 1,000 active
 *   pnpm --filter @wh/worker exec tsx bench/audit.ts 20000 200     smaller: addresses, active
 */
import { loadConfig } from '@wh/config'
import { createDatabase, runMigrations } from '@wh/db'
import { AUDIT_ROTATION_BATCH, auditDepositBalances, DEPOSIT_AUDIT_EVERY_MS } from '@wh/deposits'
import { localStackEnv, rpcBatch, startChain, startPostgres, startRedis } from '@wh/testkit'
import { Redis } from 'ioredis'
import { type Hex, numberToHex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { buildWorkerDeps } from '../src/deps'

const ADDRESSES = Number(process.argv[2] ?? 100_000)
const ACTIVE = Math.min(Number(process.argv[3] ?? 1_000), ADDRESSES)
const SURPLUS = Math.min(10, ACTIVE)
const DEPOSIT_WEI = 5n * 10n ** 16n
const TOPUP_WEI = 10n ** 15n
const GAS_PRICE = 1_000_000_000n
const SWEEP_GAS = 50_000n
const SURPLUS_WEI = 3n * 10n ** 16n

const rows: string[][] = []
const row = (...cells: Array<string | number>) => rows.push(cells.map(String))
const fmt = (n: number) => Math.round(n).toLocaleString('en-US')

const pg = await startPostgres({ durable: true })
const redisServer = await startRedis()
const chain = await startChain()
try {
  await runMigrations(pg.url)
  const database = createDatabase(pg.url, { max: 12, appName: 'audit-bench' })
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 })
  const config = loadConfig(
    localStackEnv({
      DATABASE_URL: pg.url,
      CACHE_URL: redisServer.url,
      LOG_LEVEL: 'silent',
      // base's node alone: the benchmark measures one chain
      RPC_URL_BASE: chain.rpcUrl,
    }),
  )
  let httpRequests = 0
  const deps = buildWorkerDeps(
    config,
    { sql: database.sql, redis, log: { info() {}, warn() {} } },
    {
      chains: { base: { chainId: chain.chainId, confirmations: 0 } },
      clientOptions: {
        onFetchRequest: () => {
          httpRequests++
        },
      },
    },
  )
  const sql = database.sql

  // --- 100,000 users and deposit addresses (synthetic: the audit reads stored addresses)
  const t = performance.now()
  await sql`insert into users (wallet_address, hd_index)
    select '0xb' || lpad(to_hex(i), 39, '0'), i from generate_series(1, ${ADDRESSES}) as i`
  await sql`insert into deposit_addresses (hd_index, address, user_id)
    select u.hd_index, '0xc' || lpad(to_hex(u.hd_index), 39, '0'), u.id from users u`
  const active = await sql<{ hd_index: number; address: string; user_id: string }[]>`
    select hd_index, address, user_id from deposit_addresses
    order by hd_index desc limit ${ACTIVE}`

  // --- the active addresses' history, in blocks 1..20: a credited ETH deposit, a mined gas top-up
  // received and a mined USDC sweep paid from the address (the raw bytes carry the values)
  await rpcBatch(chain.rpcUrl, [{ method: 'anvil_mine', params: [numberToHex(20)] }])
  const signer = privateKeyToAccount(generatePrivateKey())
  const sign = (nonce: number, value: bigint) =>
    signer.signTransaction({
      type: 'eip1559',
      chainId: chain.chainId,
      nonce,
      to: signer.address,
      value,
      gas: 60_000n,
      maxFeePerGas: GAS_PRICE,
      maxPriorityFeePerGas: GAS_PRICE,
    })
  const topupRaw = await sign(0, TOPUP_WEI)
  const sweepRaw = await sign(1, 0n)
  const gasWallet = deps.gasWallet.address
  const history = active.map((a, i) => ({
    ...a,
    block: 1 + (i % 20),
    tx: `0x${(i + 1).toString(16).padStart(64, '0')}`,
  }))
  await sql`
    insert into deposits (chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount, state)
    select 'base', x.tx, 4294967295, x.block, x.user_id, x.hd_index, x.address, 'ETH', ${DEPOSIT_WEI.toString()}, 'swept'
    from jsonb_to_recordset(${sql.json(history)}::jsonb) as x(tx text, block bigint, user_id uuid, hd_index int, address text)`
  await sql`
    insert into outbound_txs (chain, purpose, ref_id, step, from_address, to_address, token, amount, nonce, raw_tx,
      tx_hash, state, gas_used, effective_gas_price, block_number)
    select 'base', 'gas_topup', x.tx, 0, ${gasWallet}, x.address, 'ETH', ${TOPUP_WEI.toString()}, x.hd_index,
      ${topupRaw}, x.tx, 'confirmed', 21000, ${GAS_PRICE.toString()}, x.block
    from jsonb_to_recordset(${sql.json(history)}::jsonb) as x(tx text, block bigint, hd_index int, address text)`
  await sql`
    insert into outbound_txs (chain, purpose, ref_id, step, from_address, to_address, token, amount, nonce, raw_tx,
      tx_hash, state, gas_used, effective_gas_price, block_number)
    select 'base', 'sweep', x.tx, 1, x.address, ${gasWallet}, 'USDC', 1000000, 0, ${sweepRaw}, x.tx, 'confirmed',
      ${SWEEP_GAS.toString()}, ${GAS_PRICE.toString()}, x.block
    from jsonb_to_recordset(${sql.json(history)}::jsonb) as x(tx text, block bigint, address text)`
  // on chain: what the records explain, and a surplus at SURPLUS of them
  const expectedWei = DEPOSIT_WEI + TOPUP_WEI - SWEEP_GAS * GAS_PRICE
  await rpcBatch(
    chain.rpcUrl,
    history.map((h, i) => ({
      method: 'anvil_setBalance',
      params: [h.address, numberToHex(expectedWei + (i < SURPLUS ? SURPLUS_WEI : 0n))],
    })),
  )
  await rpcBatch(chain.rpcUrl, [{ method: 'anvil_mine', params: [numberToHex(1)] }])
  const head = BigInt((await rpcBatch(chain.rpcUrl, [{ method: 'eth_blockNumber', params: [] }]))[0] as Hex)
  // the scan has recorded everything up to the head; the last audit tick ran before the activity
  await sql`insert into chain_cursors (chain, next_block) values ('base', ${(head + 1n).toString()})`
  await sql`insert into deposit_audit_cursors (chain, activity_block) values ('base', 0)`
  const setupMs = performance.now() - t

  // --- the ticks
  const tick = async (label: string) => {
    const before = httpRequests
    const start = performance.now()
    const r = await auditDepositBalances(deps, 'base')
    const ms = performance.now() - start
    if (label) row(label, r.read, r.priority, r.surpluses, r.rpcCalls, httpRequests - before, fmt(ms))
    return { r, ms }
  }
  const first = await tick(`tick 1: ${fmt(ACTIVE)} active + rotation (first reading of ${SURPLUS} surpluses)`)
  if (first.r.priority !== ACTIVE || first.r.surpluses !== SURPLUS) {
    throw new Error(
      `expected ${ACTIVE} active and ${SURPLUS} surpluses, got ${first.r.priority} / ${first.r.surpluses}`,
    )
  }
  const second = await tick(`tick 2: second reading, ${SURPLUS} surpluses traced (unexplained: alerted)`)
  if (second.r.alerted !== SURPLUS) throw new Error(`expected ${SURPLUS} alerts, got ${second.r.alerted}`)
  await tick('tick 3: open surpluses + rotation (already alerted)')
  // then the rest of a full rotation, timed as a whole
  const [{ rotations: r0 }] = (await sql`select rotations from deposit_audit_cursors`) as unknown as [
    { rotations: number },
  ]
  let ticks = 3
  let rotationMs = first.ms + second.ms
  let rpcCalls = 0
  const beforeRotation = httpRequests
  for (;;) {
    const { r, ms } = await tick('')
    ticks++
    rotationMs += ms
    rpcCalls += r.rpcCalls
    const [{ rotations }] = (await sql`select rotations from deposit_audit_cursors`) as unknown as [
      { rotations: number },
    ]
    if (rotations > r0) break
  }
  const rest = ticks - 3
  row(
    `rotation ticks (${rest}, per tick)`,
    AUDIT_ROTATION_BATCH + SURPLUS,
    SURPLUS,
    SURPLUS,
    (rpcCalls / rest).toFixed(1),
    ((httpRequests - beforeRotation) / rest).toFixed(1),
    fmt(rotationMs / ticks),
  )
  const [{ read }] = (await sql`select count(*)::int as read from deposit_balance_audits`) as unknown as [
    { read: number },
  ]
  if (read !== ADDRESSES) throw new Error(`a full rotation read ${read} of ${ADDRESSES} addresses`)

  const header = ['tick', 'read', 'priority', 'surpluses', 'RPC calls', 'HTTP requests', 'ms']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`
  console.log(
    `\ndeposit audit: ${ADDRESSES.toLocaleString('en-US')} deposit addresses, ${ACTIVE.toLocaleString('en-US')} active, ${SURPLUS} with a surplus (set up in ${fmt(setupMs)} ms)`,
  )
  console.log(line(header))
  console.log(`| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`)
  for (const r of rows) console.log(line(r))
  console.log(
    `full rotation: ${ticks} ticks, ${fmt(rotationMs)} ms of work; every ${DEPOSIT_AUDIT_EVERY_MS / 1000} s that is ${fmt((ticks * DEPOSIT_AUDIT_EVERY_MS) / 60_000)} minutes`,
  )
  redis.disconnect()
  await database.close()
} finally {
  await chain.stop()
  await redisServer.stop()
  await pg.stop()
}
