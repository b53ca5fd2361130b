/** The `swaps` rows (packages/db/src/schema/swaps.ts): the ladder's persisted progress. */
import type { Sql } from '@wh/db'
import type { PriceRatio } from './math'

export type SwapState =
  | 'running'
  | 'executed'
  | 'exhausted'
  | 'deadline'
  | 'refused_sanity'
  | 'refused_gas'
  | 'abandoned'

export interface StoredSwap {
  id: string
  userId: string
  subaccountId: string
  chain: string
  sellCurrency: string
  buyCurrency: string
  amountIn: bigint
  indexPrice: PriceRatio
  state: SwapState
  run: number
  step: number
  runStartedAt: Date
  firstAttemptAt: Date
  txHash: string | null
  sellAmount: bigint | null
  buyAmount: bigint | null
  lastError: string | null
}

interface Row {
  id: string
  user_id: string
  subaccount_id: string
  chain: string
  sell_currency: string
  buy_currency: string
  amount_in: string
  index_price_num: string
  index_price_den: string
  state: SwapState
  run: number
  step: number
  run_started_at: Date
  first_attempt_at: Date
  tx_hash: string | null
  sell_amount: string | null
  buy_amount: string | null
  last_error: string | null
}

const big = (v: string | null) => (v === null ? null : BigInt(v))

function toStored(r: Row): StoredSwap {
  return {
    id: r.id,
    userId: r.user_id,
    subaccountId: r.subaccount_id,
    chain: r.chain,
    sellCurrency: r.sell_currency,
    buyCurrency: r.buy_currency,
    amountIn: BigInt(r.amount_in),
    indexPrice: { num: BigInt(r.index_price_num), den: BigInt(r.index_price_den) },
    state: r.state,
    run: r.run,
    step: r.step,
    runStartedAt: r.run_started_at,
    firstAttemptAt: r.first_attempt_at,
    txHash: r.tx_hash,
    sellAmount: big(r.sell_amount),
    buyAmount: big(r.buy_amount),
    lastError: r.last_error,
  }
}

type Queryable = Pick<Sql, 'unsafe'>

export async function loadSwap(sql: Queryable, id: string): Promise<StoredSwap | undefined> {
  const [row] = await sql.unsafe<Row[]>('select * from swaps where id = $1', [id])
  return row ? toStored(row) : undefined
}

/** Inserts the swap in state running, run 0, step 0, unless it exists; returns the stored row. */
export async function createOrLoadSwap(
  sql: Queryable,
  s: Pick<
    StoredSwap,
    'id' | 'userId' | 'subaccountId' | 'chain' | 'sellCurrency' | 'buyCurrency' | 'amountIn' | 'indexPrice'
  >,
  now: Date,
): Promise<{ swap: StoredSwap; created: boolean }> {
  const inserted = await sql.unsafe<Row[]>(
    `insert into swaps (id, user_id, subaccount_id, chain, sell_currency, buy_currency, amount_in, index_price_num,
       index_price_den, state, run, step, run_started_at, first_attempt_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'running', 0, 0, $10, $10)
     on conflict (id) do nothing returning *`,
    [
      s.id,
      s.userId,
      s.subaccountId,
      s.chain,
      s.sellCurrency,
      s.buyCurrency,
      s.amountIn.toString(),
      s.indexPrice.num.toString(),
      s.indexPrice.den.toString(),
      now,
    ],
  )
  if (inserted[0]) return { swap: toStored(inserted[0]), created: true }
  return { swap: (await loadSwap(sql, s.id)) as StoredSwap, created: false }
}

/**
 * Compare-and-set on (id, run, step, state): two workers on one swap cannot both move it; the
 * loser's update matches nothing and it reloads. Returns the updated row, or undefined when lost.
 */
export async function updateSwapIf(
  sql: Queryable,
  expect: Pick<StoredSwap, 'id' | 'run' | 'step' | 'state'>,
  set: Partial<{
    state: SwapState
    run: number
    step: number
    runStartedAt: Date
    indexPrice: PriceRatio
    txHash: string
    sellAmount: bigint
    buyAmount: bigint
    lastError: string | null
  }>,
): Promise<StoredSwap | undefined> {
  const cols: string[] = []
  const params: unknown[] = [expect.id, expect.run, expect.step, expect.state]
  const add = (col: string, v: unknown) => {
    params.push(v)
    cols.push(`${col} = $${params.length}`)
  }
  if (set.state !== undefined) add('state', set.state)
  if (set.run !== undefined) add('run', set.run)
  if (set.step !== undefined) add('step', set.step)
  if (set.runStartedAt !== undefined) add('run_started_at', set.runStartedAt)
  if (set.indexPrice !== undefined) {
    add('index_price_num', set.indexPrice.num.toString())
    add('index_price_den', set.indexPrice.den.toString())
  }
  if (set.txHash !== undefined) add('tx_hash', set.txHash)
  if (set.sellAmount !== undefined) add('sell_amount', set.sellAmount.toString())
  if (set.buyAmount !== undefined) add('buy_amount', set.buyAmount.toString())
  if (set.lastError !== undefined) add('last_error', set.lastError)
  const [row] = await sql.unsafe<Row[]>(
    `update swaps set ${[...cols, 'updated_at = now()'].join(', ')}
     where id = $1 and run = $2 and step = $3 and state = $4 returning *`,
    params as never[],
  )
  return row ? toStored(row) : undefined
}
