/**
 * What the platform expects a deposit address to hold in ETH, from its own records alone: the
 * one owner of this calculation (docs/chains.md "Every deposit is accounted for"). The deposit
 * audit compares it with the chain; the sweep spends no more than it (surplus ETH nobody credited
 * must stay where it is, not pay for gas).
 *
 *   expected = credited ETH deposits (`deposits`)
 *            + mined gas top-ups received (`outbound_txs`, purpose 'gas_topup', to the address)
 *            − everything mined from the address (value + gas used × effective gas price)
 *
 * A transaction counts once mined (its row carries the receipt's block, gas used and price, which
 * describe the mined version when it was replaced: migration 0012's outbound_tx_versions). Its
 * value is read from the signed bytes of that version (outbound_txs keeps no value column), and a
 * transaction that reverted moved no value, only its fee.
 *
 * The cost follows the addresses asked: every read is an index lookup by address (deposits
 * (chain, address), outbound_txs (chain, from_address, nonce) and (chain, to_address) of top-ups).
 */
import type { Sql } from '@wh/db'
import { type Address, type Hex, type PublicClient, parseTransaction } from 'viem'
import type { ChainName } from './chains'

export interface ExpectedEth {
  /** credited ETH deposits to the address */
  readonly credited: bigint
  /** mined gas top-ups it received */
  readonly toppedUp: bigint
  /** value and fees of the transactions mined from it */
  readonly spent: bigint
  /** credited + toppedUp − spent */
  readonly expected: bigint
}

export interface ExpectedEthQuery {
  readonly chain: ChainName
  /** as stored in deposit_addresses (EIP-55); matched exactly */
  readonly addresses: readonly string[]
  /** count only what is in blocks at or below this one (a balance read at that block); all when omitted */
  readonly atBlock?: bigint
}

interface MovementRow {
  side: 'in' | 'out'
  address: string
  state: string
  raw_tx: string
  gas_used: string
  effective_gas_price: string
}

/** The value a signed transaction carries, from its raw bytes. */
function valueOfRaw(raw: string): bigint {
  return parseTransaction(raw as Hex).value ?? 0n
}

/**
 * Per address (keyed as given): credited, topped up, spent and the expected ETH balance. Two
 * queries whatever the number of addresses.
 *
 * @example
 *   const m = await expectedEthBalances(sql, { chain: 'base', addresses: [a, b], atBlock: 19_000_000n })
 *   m.get(a)?.expected // wei the platform can account for at a
 */
export async function expectedEthBalances(sql: Sql, q: ExpectedEthQuery): Promise<Map<string, ExpectedEth>> {
  const addresses = [...new Set(q.addresses)]
  const out = new Map<string, ExpectedEth>()
  if (addresses.length === 0) return out
  // without a block, every block: a bigint far above any chain's height
  const atBlock = (q.atBlock ?? 2n ** 62n).toString()
  const [deposits, movements] = await Promise.all([
    sql<{ address: string; credited: string }[]>`
      select address, sum(amount)::text as credited from deposits
      where chain = ${q.chain} and address = any(${addresses}::text[]) and token = 'ETH' and block_number <= ${atBlock}
      group by address`,
    // the version whose hash the row carries is the mined one (a replacement's bytes live in
    // outbound_tx_versions; the row's raw_tx when nothing was replaced)
    sql<MovementRow[]>`
      select 'out' as side, o.from_address as address, o.state, coalesce(v.raw_tx, o.raw_tx) as raw_tx,
        o.gas_used::text, o.effective_gas_price::text
      from outbound_txs o left join outbound_tx_versions v on v.tx_hash = o.tx_hash
      where o.chain = ${q.chain} and o.from_address = any(${addresses}::text[])
        and o.block_number is not null and o.block_number <= ${atBlock}
      union all
      select 'in', o.to_address, o.state, coalesce(v.raw_tx, o.raw_tx), o.gas_used::text, o.effective_gas_price::text
      from outbound_txs o left join outbound_tx_versions v on v.tx_hash = o.tx_hash
      where o.chain = ${q.chain} and o.purpose = 'gas_topup' and o.to_address = any(${addresses}::text[])
        and o.block_number is not null and o.block_number <= ${atBlock}`,
  ])
  const credited = new Map(deposits.map((d) => [d.address, BigInt(d.credited)]))
  const toppedUp = new Map<string, bigint>()
  const spent = new Map<string, bigint>()
  for (const m of movements) {
    // a reverted transaction moved no value; it still paid its fee
    const value = m.state === 'failed' ? 0n : valueOfRaw(m.raw_tx)
    if (m.side === 'in') {
      toppedUp.set(m.address, (toppedUp.get(m.address) ?? 0n) + value)
    } else {
      const fee = BigInt(m.gas_used) * BigInt(m.effective_gas_price)
      spent.set(m.address, (spent.get(m.address) ?? 0n) + value + fee)
    }
  }
  for (const a of addresses) {
    const c = credited.get(a) ?? 0n
    const t = toppedUp.get(a) ?? 0n
    const s = spent.get(a) ?? 0n
    out.set(a, { credited: c, toppedUp: t, spent: s, expected: c + t - s })
  }
  return out
}

/**
 * The ETH at `address` the platform may spend now: min(balance on chain, expected), never below 0.
 * What lies above the expected balance nobody credited (docs/chains.md "Every deposit is
 * accounted for"): it stays at the address for the audit to explain, and never pays for gas.
 *
 * @example
 *   const wei = await spendableEthBalance(sql, client, 'base', deposit.address)
 */
export async function spendableEthBalance(
  sql: Sql,
  client: Pick<PublicClient, 'getBalance'>,
  chain: ChainName,
  address: string,
): Promise<bigint> {
  const [onChain, expected] = await Promise.all([
    client.getBalance({ address: address as Address }),
    expectedEthBalances(sql, { chain, addresses: [address] }),
  ])
  const e = expected.get(address)?.expected ?? 0n
  const spendable = onChain < e ? onChain : e
  return spendable > 0n ? spendable : 0n
}

/**
 * The deposit addresses of `chain` that should hold something now: those with a deposit not swept
 * yet (detected, sweeping, retry, failed) and those with an open surplus episode of the deposit
 * audit (ETH no record explains). What a solvency run reads there; the cost follows the deposits
 * in flight and the open episodes, not the users.
 */
export async function depositAddressesToRead(sql: Sql, chain: ChainName): Promise<string[]> {
  const rows = await sql<{ address: string }[]>`
    select distinct address from deposits where chain = ${chain} and state <> 'swept'
    union
    select address from deposit_surpluses where chain = ${chain} and state = 'open'
    order by 1`
  return rows.map((r) => r.address)
}

/**
 * Per address (keyed as given): the USDC (or another token's) base units the platform expects it to
 * hold at `atBlock`: credited deposits of the token − its mined transfers out (sweeps), a reverted
 * one moving nothing.
 */
export async function expectedTokenBalances(
  sql: Sql,
  q: { chain: ChainName; token: string; addresses: readonly string[]; atBlock?: bigint },
): Promise<Map<string, bigint>> {
  const addresses = [...new Set(q.addresses)]
  const out = new Map<string, bigint>(addresses.map((a) => [a, 0n]))
  if (addresses.length === 0) return out
  const atBlock = (q.atBlock ?? 2n ** 62n).toString()
  const rows = await sql<{ address: string; v: string }[]>`
    select address, sum(v)::text as v from (
      select address, amount as v from deposits
      where chain = ${q.chain} and address = any(${addresses}::text[]) and token = ${q.token} and block_number <= ${atBlock}
      union all
      select from_address, -amount from outbound_txs
      where chain = ${q.chain} and from_address = any(${addresses}::text[]) and token = ${q.token}
        and state <> 'failed' and block_number is not null and block_number <= ${atBlock}
    ) m group by address`
  for (const r of rows) out.set(r.address, BigInt(r.v))
  return out
}
