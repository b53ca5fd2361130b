import { describe, expect, it } from 'vitest'
import { CONVERSION_TRANSITIONS, type ConversionState } from './store'

describe('the conversion round state machine', () => {
  it('goes from planned to done through swapping, depositing and withdrawing; done and failed are final', () => {
    const reachable = new Set<ConversionState>(['planned'])
    for (const s of reachable) for (const n of CONVERSION_TRANSITIONS[s]) reachable.add(n)
    expect([...reachable].sort()).toEqual(['depositing', 'done', 'failed', 'planned', 'swapping', 'withdrawing'])
    expect(CONVERSION_TRANSITIONS.done).toEqual([])
    expect(CONVERSION_TRANSITIONS.failed).toEqual([])
    // once the swap executed, money moved: a round past swapping never fails, it is signed again
    expect(CONVERSION_TRANSITIONS.depositing).not.toContain('failed')
    expect(CONVERSION_TRANSITIONS.withdrawing).not.toContain('failed')
  })
})
