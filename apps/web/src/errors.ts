/**
 * Every error the API answers, in words (docs/console.md "Errors in words"). The API's `code` picks
 * a sentence; the error's `details` fill in what a person can act on (a minimum, a balance). The
 * list of codes is the API's own (test/error-codes.ts reads it from the source; errors.test.ts fails on
 * a code without a sentence here). An unknown code still reads as a sentence, with the API's message.
 */
import { ApiError } from '@wh/client'
import { formatAmount, unitsToDecimal } from './format'

type Details = Readonly<Record<string, string | number | boolean | null>> | undefined
type Sentence = string | ((d: Details) => string)

const str = (d: Details, k: string) => (d?.[k] === undefined || d?.[k] === null ? '' : String(d[k]))
const DECIMALS: Readonly<Record<string, number>> = { USDC: 6, ETH: 18, BTC: 8 }
/** A details amount in base units (the ledger's refusals) as people read it. */
const baseUnits = (d: Details, k: string, currency: string) =>
  formatAmount(unitsToDecimal(str(d, k) || '0', DECIMALS[currency] ?? 0), currency)
const TRY_AGAIN = 'Nothing was changed; try again in a moment.'
const INTERNAL =
  'Something went wrong on our side and nothing was changed. Please try again; if it persists, contact support.'

/** code → what a person reads. */
export const SENTENCES: Readonly<Record<string, Sentence>> = {
  // sign-in and access
  SIWE_REJECTED: 'The sign-in was refused: the signed message did not match. Sign in again from this page.',
  UNAUTHORIZED: 'Your session has ended. Sign in again with your wallet.',
  RATE_LIMITED: 'Too many attempts in a short time. Wait a minute, then try again.',
  NOT_FOUND: 'That was not found. It may belong to another account, or no longer exist.',
  // input
  VALIDATION_ERROR: 'Something in the form is not valid. Check the amounts and addresses, then send it again.',
  BAD_REQUEST: 'The request could not be read. Reload the page and try again.',
  PAYLOAD_TOO_LARGE: 'The request was too large to accept.',
  URI_TOO_LONG: 'The request address was too long to accept.',
  UNSUPPORTED_MEDIA_TYPE: 'The request was sent in a format the API does not read. Reload the page.',
  INVALID_AMOUNT: (d) =>
    `That amount cannot be used${d?.input ? ` (${str(d, 'input')})` : ''}: it must be positive, with no more decimals than the currency has.`,
  INVALID_CURSOR: 'The list could not continue from where it was. It starts again from the beginning.',
  INVALID_LIMIT: 'That page size is not allowed.',
  INVALID_PERIOD: 'That period cannot be shown: its start must come before its end, within a year.',
  INVALID_CHART_RANGE: 'That chart range cannot be shown. Pick a shorter one.',
  UNKNOWN_ASSET: (d) => `${str(d, 'asset') || 'That asset'} is not offered here.`,
  IDEMPOTENCY_KEY_REUSED: 'This request repeats an earlier one with different figures. Reload the page and try again.',
  // money in and out
  INSUFFICIENT_FREE_BALANCE: (d) =>
    `Not enough free balance: you have ${baseUnits(d, 'freeBalance', str(d, 'currency'))} free to use.`,
  INSUFFICIENT_COLLATERAL: (d) =>
    `Not enough ${str(d, 'currency')} to secure this: ${baseUnits(d, 'available', str(d, 'currency'))} is available.`,
  WITHDRAWAL_BELOW_MINIMUM: (d) =>
    `The smallest withdrawal is ${str(d, 'minAmount')} ${str(d, 'asset')} (${str(d, 'minUsd')} USD).`,
  WITHDRAWAL_ABOVE_MAXIMUM: (d) =>
    `The largest withdrawal is ${str(d, 'maxAmount')} ${str(d, 'asset')} (${str(d, 'maxUsd')} USD). Split it into several.`,
  TOO_MANY_OPEN_WITHDRAWALS: (d) =>
    `You already have ${str(d, 'max') || 'several'} withdrawals waiting to be sent. Wait for one to be sent first.`,
  INVALID_DESTINATION: 'That destination address is not valid for this route.',
  UNKNOWN_ROUTE: 'That chain and asset is not a withdrawal route. Pick one from the list.',
  DESTINATION_REFUSES_ETH: 'That address is a contract that refuses this ETH payment. Send to another address.',
  PRICE_UNAVAILABLE: 'No recent price to check the withdrawal limits. Try again in a minute.',
  PLATFORM_STOPPED:
    'Trading and large withdrawals are paused while the platform checks its books. Smaller withdrawals still go through.',
  // failed withdrawals (GET /withdrawals failureCode)
  DESTINATION_REFUSED:
    'The destination refused the transfer (a contract that does not accept it, or an address the token blocks). The amount is back in your balance.',
  PLATFORM_ADDRESS: 'The destination is an address of this service. The amount is back in your balance.',
  REVERTED: 'The transaction failed on chain. The amount is back in your balance.',
  INCOMPLETE: 'The request had no route or destination. The amount is back in your balance.',
  REVERTED_CHARGED:
    'The transaction failed on chain when it was mined: the destination refused it. Its network fee was taken from the amount; the rest is back in your balance.',
  NOT_SENT: 'The network refused this transfer for good and nothing was sent. The amount is back in your balance.',
  SEND_ERROR: 'The network kept refusing this transfer, so nothing was sent. The amount is back in your balance.',
  DESTINATION_GAS_ABOVE_BUDGET:
    'That address is a contract that needs more gas to receive a payment than a withdrawal may spend. Send to another address.',
  CONTRACT_DESTINATIONS_COOLING:
    'Two of your withdrawals failed on chain in the last 24 hours, so withdrawals to contract addresses are paused for now. Withdrawals to ordinary addresses still go through.',
  TOO_MANY_WITHDRAWAL_REQUESTS: 'Too many withdrawal requests in a short time. Wait a minute, then try again.',
  FEES_ABOVE_AMOUNT: 'The network fee is above the amount right now; the withdrawal waits until fees fall.',
  // positions and the wheel
  SELLING_PAUSED: (d) =>
    `Selling ${str(d, 'side') ? `${str(d, 'side')}s` : 'this side'}${d?.asset ? ` on ${str(d, 'asset')}` : ''} is paused by a market signal. Try again later.`,
  SUBACCOUNT_STOPPED: (d) =>
    `Trading on your ${str(d, 'asset') || 'exchange'} subaccount is stopped while its balances are checked. Your money is safe; support will resume it.`,
  RELEASE_IN_PROGRESS: (d) =>
    `Your ${str(d, 'asset')} subaccount is being released back to your balance; start again once that is done.`,
  RELEASE_ALREADY_OPEN: 'A release of this subaccount is already under way.',
  WHEEL_ALREADY_RUNNING:
    'A wheel on this asset is already running. Stop it (or wait until it has stopped) to start another.',
  WHEEL_STOPPING: 'This wheel is still stopping. Resume it once it shows as stopped.',
  ANOTHER_WHEEL_RUNNING: (d) => `Another wheel on ${str(d, 'asset') || 'this asset'} is running. Stop it first.`,
  NOTHING_TO_WHEEL: (d) =>
    `Your ${str(d, 'asset')} subaccount holds nothing for the wheel to sell. Start a new wheel with an amount instead.`,
  SETTINGS_ONLY_FOR_WHEEL: 'Settings apply to a wheel only.',
  SETTING_OUT_OF_BOUNDS: (d) => `That setting is outside what this profile allows (${str(d, 'setting')}).`,
  POSITION_FINISHED: 'This position has already ended.',
  POSITION_SOLD: 'This option is already sold: it can only be bought back.',
  CLOSE_UNAVAILABLE: 'It cannot be bought back now: it is expired, not sold yet, or nothing is left to buy.',
  QUOTE_UNAVAILABLE: 'The exchange could not give a price right now. Try again in a few seconds.',
  NO_QUOTE: (d) => `Nothing would be sold right now${d?.reason ? `: ${str(d, 'reason')}` : ''}.`,
  FEES_EXCEED_PREMIUM_SHARE: (d) =>
    `Fees would take ${d?.feeShareBps === null || d?.feeShareBps === undefined ? 'all' : `${Number(d.feeShareBps) / 100} %`} of the premium, more than the ${Number(d?.maxFeeShareBps ?? 0) / 100} % allowed. Commit a larger amount.`,
  FEES_NOT_CHECKED: 'The fees could not be checked right now; the order waits for a price anyway.',
  // proof and solvency
  NO_LIABILITY_ROOT: 'No proof of liabilities has been published yet. The first comes with the next daily publication.',
  NOT_IN_LIABILITY_TREE:
    'You are not in the latest proof yet: it was built before you held anything. You will be in the next one.',
  NO_SOLVENCY_RUN: 'No solvency check has completed yet.',
  // streams
  MALFORMED_MESSAGE: 'The live connection received a message it could not read. It reconnects by itself.',
  MESSAGE_TOO_LARGE: 'A live message was too large. The connection reconnects by itself.',
  NOT_AUTHENTICATED: 'The live connection needs you signed in. Sign in again.',
  ALREADY_SUBSCRIBED: 'The live connection was already following your account.',
  UPGRADE_REQUIRED: 'That address is for a live connection only.',
  // the platform's own parts (an operator's matter; the user reads that nothing changed)
  SERVICE_UNAVAILABLE: `A part of the service is briefly unavailable. ${TRY_AGAIN}`,
  RPC_UNAVAILABLE: `A blockchain node did not answer. ${TRY_AGAIN}`,
  EXCHANGE_UNAVAILABLE: `The exchange did not answer. ${TRY_AGAIN}`,
  EXCHANGE_RATE_LIMITED: `The exchange asked us to slow down. ${TRY_AGAIN}`,
  EXCHANGE_AUTH: `The exchange refused our credentials; support has been told. ${TRY_AGAIN}`,
  EXCHANGE_INSUFFICIENT_MARGIN: 'The exchange found too little margin for this order; nothing was sold.',
  EXCHANGE_ORDER_REJECTED: 'The exchange rejected the order; nothing was sold.',
  EXCHANGE_REQUEST_REJECTED: 'The exchange rejected the request; nothing was changed.',
  EXCHANGE_UNKNOWN_INSTRUMENT: 'The exchange no longer lists that option.',
  BRIDGE_UNAVAILABLE: `Moving funds to the exchange is unavailable right now. ${TRY_AGAIN}`,
  HOT_WALLET_SHORT: 'The platform wallet is being refilled; your withdrawal is sent as soon as it is.',
  SWAP_ADAPTER_NOT_CONFIGURED: 'Conversions are not configured on this platform yet.',
  SWAP_APPROVAL_FAILED: 'A conversion could not be approved on chain; it is retried.',
  SWAP_GAS_BELOW_FLOOR: 'A conversion waits for gas; it is retried.',
  SWAP_MISMATCH: 'A conversion did not match its plan and was stopped; support has been told.',
  SWAP_RECEIPT_UNEXPECTED: 'A conversion returned an unexpected receipt and was stopped; support has been told.',
  SWAP_SANITY_REFUSED: 'A conversion was refused: its price was too far from the index.',
  SWAP_WALLET_SHORT: 'The conversion wallet is being refilled; the conversion waits.',
  INVALID_SWAP_REQUEST: INTERNAL,
  INVALID_EXCHANGE_ID: INTERNAL,
  UNKNOWN_CURRENCY_DECIMALS: INTERNAL,
  CHAIN_ID_MISMATCH: 'A blockchain node answered for the wrong network; that chain is paused. Support has been told.',
  CHAIN_NOT_HALTED: 'That chain is not paused.',
  NO_EXCHANGE_ID: 'Your exchange subaccount is not created yet. It is created with your first position.',
  SUBACCOUNT_NOT_FOUND: 'That exchange subaccount was not found.',
  SUBACCOUNT_NOT_STOPPED: 'That subaccount is not stopped.',
  STOP_CLEAR_TOO_SOON: 'That stop cannot be cleared yet.',
  INVALID_STOP_REASON: 'That stop reason is not valid.',
  OUTBOUND_NOT_FOUND: 'That transaction was not found.',
  OUTBOUND_NOT_HELD: 'That transaction is not held for review.',
  SWEEP_FAILED: INTERNAL,
  SWEEP_NOT_FAILED: 'Only a failed sweep can be retried.',
  OUTBOUND_MINED: 'The chain shows that transaction mined, so it cannot be failed; nothing was released.',
  OUTBOUND_MAY_STILL_MINE:
    'That transaction may still be mined (its nonce is not used at confirmed depth yet), so nothing was released. Try again later.',
  OUTBOUND_NONCE_TAKER_UNKNOWN:
    'The chain used that nonce, but the transaction that took it could not be found, so nothing was released. Try again later.',
  OUTBOUND_RECEIPT_NOT_FINAL:
    'The chain does not show that receipt at confirmed depth yet, so nothing was recorded. Try again later.',
  CHAIN_NOT_CONFIGURED: 'That chain is not configured on this service, so its transactions cannot be checked.',
  // the operator desk's sign-in and roles
  SIGN_IN_REJECTED: 'Wrong name or password. Check both, then sign in again.',
  SIGN_IN_THROTTLED: 'Too many failed sign-ins for this name or address. Wait, then try again.',
  SIGN_IN_BY_PROXY: 'Operators sign in through the company proxy here, not with a password.',
  ROLE_REQUIRED: (d) => `Your role cannot do this${d?.needed ? `: it needs the ${str(d, 'needed')} role` : ''}.`,
  INVALID_OPERATOR:
    'That operator name, role or password is not valid (a password needs at least 15 characters, 6 of them different, and not the name).',
  OPERATOR_EXISTS: 'An operator with that name already exists.',
  // four eyes on money (docs/operations.md "Approvals")
  FOUR_EYES: 'A proposal is approved by operators other than the one who proposed it.',
  NOT_ENOUGH_APPROVALS: 'That proposal does not have enough approvals yet; nothing was done.',
  PROPOSAL_DECIDED: 'That proposal was already decided.',
  PROPOSAL_EXPIRED: 'That proposal expired before it was approved; propose it again if it is still needed.',
  UNKNOWN_ACTION: 'That is not an action that can be proposed.',
  INVALID_REASON: 'Give a reason of 1 to 500 characters.',
  PLATFORM_NOT_STOPPED: 'The platform is not stopped.',
  OUTBOX_CONFIG: INTERNAL,
  OUTBOX_MISMATCH: INTERNAL,
  OUTBOUND_GAS_ABOVE_CAP: 'That transfer would need more gas than this kind of transfer may spend; nothing was sent.',
  OUTBOUND_FEE_ABOVE_LIMIT: 'Network fees are above the limit for this transfer right now; it waits until they fall.',
  OUTBOUND_SENDER_SHORT: 'The platform wallet is being refilled with gas; the transfer is sent as soon as it is.',
  CHAIN_UNAVAILABLE: `A blockchain network did not answer. ${TRY_AGAIN}`,
  SIGNAL_REJECTED: 'The trading signal was refused.',
  SIGNAL_REPLAYED: 'The trading signal was already received.',
  UNKNOWN_TRADING_PROFILE: INTERNAL,
  INVALID_LEDGER_ACCOUNT: INTERNAL,
  INVALID_LEDGER_EVENT: INTERNAL,
  INVALID_LEDGER_KEY: INTERNAL,
  LEDGER_BATCH_TOO_LARGE: INTERNAL,
  UNBALANCED_POSTINGS: INTERNAL,
  INTERNAL_ERROR: INTERNAL,
  // made by the client when an answer carries no code
  HTTP_ERROR: `The API answered with an error we could not read. ${TRY_AGAIN}`,
}

/** The sentence of an API error code, with its details; undefined for a code without one. */
export function sentenceOf(code: string, details?: Details): string | undefined {
  const s = Object.hasOwn(SENTENCES, code) ? SENTENCES[code] : undefined
  return typeof s === 'function' ? s(details) : s
}

/** A refusal the console itself says (a form field out of bounds): its message is the sentence. */
export class Refusal extends Error {}

/** Any failure as one sentence a person reads: the API's code in words, a network failure as such. */
export function errorText(e: unknown): string {
  if (e instanceof Refusal) return e.message
  if (e instanceof ApiError) return sentenceOf(e.code, e.details) ?? `The request was refused: ${e.message}.`
  if (e instanceof DOMException && (e.name === 'TimeoutError' || e.name === 'AbortError'))
    return `The API took too long to answer. ${TRY_AGAIN}`
  if (e instanceof TypeError) return `The API could not be reached. Check your connection; ${TRY_AGAIN.toLowerCase()}`
  const m = e instanceof Error ? e.message : String(e)
  if (/user rejected|denied/i.test(m)) return 'The wallet request was declined.'
  return `Something went wrong: ${m}`
}
