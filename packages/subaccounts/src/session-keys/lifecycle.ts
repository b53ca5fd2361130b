/**
 * A session key's lifecycle, as the operator runs it (docs/operations.md "Exchange session keys";
 * the commands are the worker's src/cli/session-keys.ts): the service prepares what only the owner may sign, an
 * operator signs it with the owner's key (an EOA: `sign`; a multisig: the prepared L1 call, proposed
 * to its signers), and the service sends it. Renewal: a new key is made, registered with its duty's
 * scopes while the old one still works (both valid: the worker signs with whichever lives longer),
 * then the old one is retired (re-registered with no scope, expiring within the hour).
 */
import type { Config } from '@wh/config'
import {
  type DeriveClient,
  type KeyDuty,
  l1SetSessionKeyCall,
  OWNER_ACTION_TTL_SEC,
  type PreparedOwnerAction,
  SESSION_KEY_DUTIES,
  signedOwnerAction,
} from '@wh/exchange'
import { type Address, getAddress, type Hex } from 'viem'
import { privateKeyToAccount, sign } from 'viem/accounts'

/** A renewed key lives this long unless the operator says otherwise. */
export const DEFAULT_KEY_LIFE_DAYS = 90

/** Registers `key` for `duty`: its scopes, and for the payout key the funding subaccount alone. */
export function prepareGrant(
  config: Config,
  exchange: DeriveClient,
  p: { duty: KeyDuty; key: Address; days?: number; nowMs: number; label?: string },
): PreparedOwnerAction {
  const funding = config.exchange.fundingSubaccountId
  if (p.duty === 'payout' && funding === undefined)
    throw new Error('a payout key reaches the funding subaccount only: EXCHANGE_FUNDING_SUBACCOUNT_ID is not set')
  return exchange.prepareSetSessionKey({
    key: getAddress(p.key),
    expirySec: Math.floor(p.nowMs / 1000) + (p.days ?? DEFAULT_KEY_LIFE_DAYS) * 86_400,
    scopes: [...SESSION_KEY_DUTIES[p.duty]],
    ...(p.duty === 'payout' && { subaccountIds: [funding as number] }),
    label: p.label ?? `wheelhouse-${p.duty}`,
  })
}

/**
 * Retires `key`: registered again with no protocol scope (it can sign nothing from the moment this
 * lands) and an expiry just past the action's own life, the nearest Derive takes over the API (at
 * least five minutes after the action is sent). Its L1 form deletes the key outright (expiry 0).
 */
export function prepareRetire(exchange: DeriveClient, p: { key: Address; nowMs: number }): PreparedOwnerAction {
  const prepared = exchange.prepareSetSessionKey({
    key: getAddress(p.key),
    expirySec: Math.floor(p.nowMs / 1000) + OWNER_ACTION_TTL_SEC + 300,
    scopes: [],
    label: 'retired',
  })
  // on L1 a zero expiry deletes the key outright (derive-ts onchainActions.revokeSessionKey)
  const l1 = l1SetSessionKeyCall({ key: getAddress(p.key), expirySec: 0, scopes: [] })
  return {
    ...prepared,
    l1: { data: l1, note: 'call OnchainActionManager with this data from the owner: deletes the key' },
  }
}

/**
 * The operator's signature with the owner's key (an EOA owner): over the prepared typed data, checked
 * to be the owner's. Runs on the operator's machine; the key is read there, never by the service.
 */
export async function signAsOwner(p: PreparedOwnerAction, ownerKey: Hex): Promise<Hex> {
  const owner = privateKeyToAccount(ownerKey).address
  if (getAddress(owner) !== getAddress(p.owner)) throw new Error(`this key is ${owner}, not the owner ${p.owner}`)
  const signature = await sign({ hash: p.typedDataHash, privateKey: ownerKey, to: 'hex' })
  await signedOwnerAction(p, signature) // the same check the sending side makes
  return signature
}

/** The prepared actions of a renewal step, read back from a file (the operator's hands in between). */
export function parsePrepared(text: string): PreparedOwnerAction {
  const p = JSON.parse(text) as PreparedOwnerAction
  if (p.kind !== 'set_session_key' && p.kind !== 'update_whitelisted_recipients')
    throw new Error('not a prepared owner action')
  return p
}
