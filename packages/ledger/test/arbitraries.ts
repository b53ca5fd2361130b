/** fast-check arbitraries for events of every type, over a small pool of users and subaccounts. */
import fc from 'fast-check'
import type { EventInput } from '../src/index'

const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`))
const txHash = hex(64).map((h) => `0x${h}`)
const amount = fc.bigInt({ min: 1n, max: 10n ** 12n })
const fee = fc.bigInt({ min: 0n, max: 10n ** 6n })
const signed = fc.bigInt({ min: -(10n ** 9n), max: 10n ** 9n })
const chain = fc.constantFrom('ethereum', 'base', 'arbitrum', 'derive')
const currency = fc.constantFrom('USDC', 'ETH')
const sub = fc.constantFrom('1', '2')
const id = fc.stringMatching(/^[a-z0-9]{1,12}$/)
const seconds = fc.integer({ min: 1_700_000_000, max: 1_800_000_000 })
const minute = seconds.map((s) => s - (s % 60))

export function eventArbitrary(users: readonly string[]): fc.Arbitrary<EventInput> {
  const userId = fc.constantFrom(...users)
  const at = fc.date({ min: new Date('2026-01-01'), max: new Date('2026-03-01'), noInvalidDate: true })
  const ev = <T extends EventInput['type']>(
    type: T,
    payload: fc.Arbitrary<Extract<EventInput, { type: T }>['payload']>,
  ) => fc.record({ type: fc.constant(type), payload, occurredAt: at }) as unknown as fc.Arbitrary<EventInput>
  return fc.oneof(
    ev('deposit_detected', fc.record({ userId, chain, txHash, logIndex: fc.nat(5), currency, amount })),
    ev('deposit_swept', fc.record({ userId, chain, txHash, currency, amount })),
    ev(
      'bridged',
      fc
        .record({ fromChain: chain, toChain: chain, txHash, currency, amount, feeAmount: fee })
        .filter((p) => p.fromChain !== p.toChain && p.feeAmount <= p.amount),
    ),
    ev(
      'subaccount_funded',
      fc.record(
        { userId, subaccountId: sub, transactionId: id, currency, amount, feeAmount: fee, feeExcess: fee },
        { requiredKeys: ['userId', 'subaccountId', 'transactionId', 'currency', 'amount'] },
      ),
    ),
    ev('subaccount_released', fc.record({ userId, subaccountId: sub, rowId: id, currency, amount })),
    ev(
      'option_sold',
      fc.oneof(
        fc.record({
          userId,
          subaccountId: sub,
          tradeId: id,
          instrument: fc.constant('ETH-X-P'),
          currency,
          premium: amount,
          exchangeFee: fee,
          platformFee: fee,
        }),
        // a buy-back: the premium paid, the exchange's fee, no platform fee
        fc.record({
          userId,
          subaccountId: sub,
          tradeId: id,
          instrument: fc.constant('ETH-X-P'),
          currency,
          side: fc.constant('buy' as const),
          premium: amount,
          exchangeFee: fee,
        }),
      ),
    ),
    ev(
      'option_settled',
      fc.oneof(
        fc.record({
          userId,
          subaccountId: sub,
          instrument: fc.constant('ETH-X-P'),
          expirySec: seconds,
          outcome: fc.constant('itm' as const),
          currency,
          amount,
        }),
        fc.record({
          userId,
          subaccountId: sub,
          instrument: fc.constant('ETH-X-C'),
          expirySec: seconds,
          outcome: fc.constant('otm' as const),
        }),
      ),
    ),
    ev(
      'swap_executed',
      fc.record({
        userId,
        subaccountId: sub,
        chain,
        txHash,
        sellCurrency: fc.constant('USDC'),
        sellAmount: amount,
        buyCurrency: fc.constant('ETH'),
        buyAmount: amount,
      }),
    ),
    ev('swap_reverted', fc.record({ chain, txHash })),
    ev(
      'interest_accrued',
      fc.record(
        { userId, subaccountId: sub, currency, bucketTs: seconds, amount: signed },
        { requiredKeys: ['subaccountId', 'currency', 'bucketTs', 'amount'] },
      ),
    ),
    ev('funding_paid', fc.record({ userId, subaccountId: sub, currency, bucketTs: seconds, amount: signed })),
    ev('withdrawal_sent', fc.record({ userId, withdrawalId: id, chain, txHash, currency, amount })),
    ev('withdrawal_gas_charged', fc.record({ userId, withdrawalId: id, chain, txHash, currency, amount })),
    ev(
      'gas_spent',
      fc.record(
        { chain, txHash, slot: fc.constantFrom(0 as const, 1 as const), currency: fc.constant('ETH'), amount, userId },
        { requiredKeys: ['chain', 'txHash', 'slot', 'currency', 'amount'] },
      ),
    ),
    ev('trade_rejected', fc.record({ subaccountId: sub, orderId: id, instrument: fc.constant('ETH-X-P'), reason: id })),
    ev('signal_received', fc.record({ signalId: id, source: fc.constant('tv'), data: fc.constant({ side: 'buy' }) })),
    ev(
      'reconciliation_adjustment',
      fc.record(
        { userId, subaccountId: sub, currency, bucket: minute, delta: signed.filter((d) => d !== 0n) },
        { requiredKeys: ['subaccountId', 'currency', 'bucket', 'delta'] },
      ),
    ),
    ev(
      'stop_raised',
      fc.oneof(
        fc.record({
          source: fc.constant('reconciliation' as const),
          subaccountId: sub,
          bucket: minute,
          divergences: fc.array(fc.record({ account: id, delta: signed }), { minLength: 1, maxLength: 3 }),
        }),
        fc.record({ source: fc.constant('operator' as const), subaccountId: sub, minuteBucket: minute, reason: id }),
      ),
    ),
    ev('stop_cleared', fc.record({ subaccountId: sub, minuteBucket: minute, reason: id })),
    ...(['capital_contributed', 'capital_withdrawn'] as const).map((type) =>
      ev(
        type,
        fc.record({
          holding: fc.constantFrom('hot' as const, 'gas' as const),
          chain: fc.constantFrom('ethereum', 'base', 'derive'),
          currency,
          amount,
          reference: fc.oneof(
            fc.stringMatching(/^tx:[1-9][0-9]{0,5}:0x[0-9a-f]{64}$/),
            fc.stringMatching(/^treasury:[a-z0-9][a-z0-9._:-]{0,40}$/),
          ),
          reason: id,
        }),
      ),
    ),
  )
}
