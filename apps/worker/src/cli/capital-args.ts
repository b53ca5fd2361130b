/**
 * The capital CLI's arguments (capital.ts) as the movement they name: checked here, apart from the
 * tool's start, so a test can read what an operator's typing books. The reference is parsed into its
 * parts and written by the ledger in one spelling (capitalReference), so the same transaction typed
 * twice, once as an explorer shows its hash and once in lower case, is one movement.
 */
import { decimalsOf, toBaseUnits } from '@wh/core'
import { parseCapitalReference } from '@wh/ledger'
import type { CapitalMovement } from '@wh/ops'

export const CAPITAL_USAGE =
  'usage: capital.ts (--contribute | --withdraw) --holding hot|gas --chain <chain> --currency <USDC|ETH|BTC> --amount <decimal> --reference tx:<chain id>:<hash>|treasury:<ref> --reason "<why>" --operator <name>'

export interface CapitalArgs {
  readonly contribute?: boolean
  readonly withdraw?: boolean
  readonly holding?: string
  readonly chain?: string
  readonly currency?: string
  readonly amount?: string
  readonly reference?: string
  readonly reason?: string
}

/**
 * The movement `values` name (its actor is the operator who signs in), or why they name none.
 *
 * @example
 *   capitalMovementOf({ contribute: true, holding: 'hot', chain: 'ethereum', currency: 'USDC', amount: '50000',
 *     reference: 'tx:1:0xAB…', reason: 'hot wallet float' })
 */
export function capitalMovementOf(values: CapitalArgs): Omit<CapitalMovement, 'actor'> | { readonly usage: string } {
  if (Boolean(values.contribute) === Boolean(values.withdraw)) return { usage: 'say --contribute or --withdraw' }
  if (values.holding !== 'hot' && values.holding !== 'gas') return { usage: '--holding is hot or gas' }
  if (!values.chain || !/^[a-z][a-z0-9-]{0,31}$/.test(values.chain))
    return { usage: '--chain names a chain (derive: the funding subaccount)' }
  const currency = values.currency ?? ''
  const decimals = decimalsOf(currency)
  if (decimals === undefined) return { usage: '--currency is USDC, ETH or BTC' }
  let amount: bigint
  try {
    amount = toBaseUnits(values.amount ?? '', decimals)
  } catch {
    return { usage: '--amount is a decimal in the currency, with no more decimals than it has' }
  }
  if (amount <= 0n) return { usage: '--amount is positive' }
  const reference = parseCapitalReference(values.reference ?? '')
  if (!reference)
    return {
      usage:
        '--reference names the movement: tx:<chain id>:<transaction hash>, or treasury:<its reference> (letters, digits and : . _ -)',
    }
  const reason = values.reason?.trim()
  if (!reason) return { usage: '--reason is required: it is journaled and recorded' }
  return {
    direction: values.contribute ? 'contributed' : 'withdrawn',
    holding: values.holding,
    chain: values.chain,
    currency,
    amount,
    reference,
    reason,
  }
}
