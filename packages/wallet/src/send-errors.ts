/**
 * What a failure to prepare or send a transaction says about the next try (docs/hostile-world.md
 * "Fair queues"): a dry run that reverts will revert again for the same call, a sender short of
 * funds waits for a refill, and anything else (a refused, rate-limited, slow or unreachable RPC) is
 * the provider's and passes.
 */
import {
  BaseError,
  ContractFunctionRevertedError,
  ExecutionRevertedError,
  HttpRequestError,
  InsufficientFundsError,
  TimeoutError,
} from 'viem'

export type SendFailure = 'reverts' | 'insufficient-funds' | 'unavailable'

/** Every error in a cause chain (viem wraps; plain Errors carry `cause` too). */
function* causes(e: unknown): Generator<unknown> {
  const seen = new Set<unknown>()
  let cur = e
  while (cur && typeof cur === 'object' && !seen.has(cur)) {
    seen.add(cur)
    yield cur
    cur = (cur as { cause?: unknown }).cause
  }
}

/**
 * Classifies an error thrown while estimating, signing or broadcasting a transaction.
 * Transport failures win over what the message says: an HTTP 5xx whose body mentions "revert" is
 * still the provider's failure.
 *
 * @example
 *   sendFailureOf(err) === 'reverts' // the node's dry run reverts: the same call will fail again
 */
export function sendFailureOf(e: unknown): SendFailure {
  let reverts = false
  let insufficient = false
  for (const c of causes(e)) {
    if (c instanceof HttpRequestError || c instanceof TimeoutError) return 'unavailable'
    if (c instanceof ExecutionRevertedError || c instanceof ContractFunctionRevertedError) reverts = true
    if (c instanceof InsufficientFundsError) insufficient = true
    const text = c instanceof BaseError ? `${c.details ?? ''} ${c.shortMessage}` : String((c as Error).message ?? '')
    if (/execution reverted|revert/i.test(text)) reverts = true
    if (/insufficient funds|exceeds balance/i.test(text)) insufficient = true
  }
  if (insufficient) return 'insufficient-funds'
  return reverts ? 'reverts' : 'unavailable'
}
