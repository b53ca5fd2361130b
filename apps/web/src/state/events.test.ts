import { describe, expect, it } from 'vitest'
import { wheelsStale } from './events'

describe('the wheels an account event makes stale', () => {
  const legs = [
    { id: 'p-wheel-a', wheelId: 'wheel-a' },
    { id: 'p-wheel-b', wheelId: 'wheel-b' },
    { id: 'p-single', wheelId: null },
  ]

  it('is the wheel the event names', () => {
    expect(wheelsStale({ wheelId: 'wheel-b', positionId: 'p-wheel-a' }, legs)).toEqual(['wheel-b'])
  })

  it('is the wheel of the leg a fill names, and no wheel for a leg of none', () => {
    expect(wheelsStale({ positionId: 'p-wheel-a', tradeId: 't1' }, legs)).toEqual(['wheel-a'])
    expect(wheelsStale({ positionId: 'p-single' }, legs)).toEqual([])
  })

  it('is every wheel when the leg was not read yet or the event names nothing', () => {
    expect(wheelsStale({ positionId: 'p-new' }, legs)).toBe('all')
    expect(wheelsStale({ amount: '1' }, legs)).toBe('all')
  })
})
