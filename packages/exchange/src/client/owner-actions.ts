/**
 * What only the owner may sign (docs/operations.md "Exchange session keys"): registering a session
 * key and changing the recipient whitelist, prepared by the service and signed by an operator, never
 * by a process of the service (the owner key reaches none). A prepared action holds the request
 * without its signature, the EIP-712 typed data an owner EOA signs (any wallet's
 * `eth_signTypedData_v4`, or `tsx apps/worker/src/cli/session-keys.ts sign`), and, for a multisig
 * owner, the L1 call its signers propose instead (`OnchainActionManager.submit(51, data)`, derive-ts
 * `src/api/onchainActions.ts`; a zero expiry deletes the key). Signed, it is sent as it is.
 */
import { type Address, encodeFunctionData, getAddress, type Hex, recoverAddress } from 'viem'
import { ACTION_TYPES, type ActionFields, v3TypedDataHash } from '../protocol/action'
import { PROTOCOL_SCOPES, type ProtocolScope, V3_MODULES, v3Domain } from '../protocol/constants'
import { encodeSessionKeyData, encodeWhitelistedRecipients, ONCHAIN_ACTION_MANAGER_ABI } from '../protocol/module-data'
import { SESSION_KEY_MIN_LIFETIME_SEC } from '../protocol/nonce'
import { scopeWire } from '../protocol/scopes'

/** An action signed on subaccount 0 lives this long: prepared, signed by a person, then sent. */
export const OWNER_ACTION_TTL_SEC = 3_000

/** The L1 action type of a session key set from the OnchainActionManager (derive-ts ONCHAIN_ACTION_TYPE.SetSessionKey). */
export const L1_SET_SESSION_KEY_ACTION = 51n

export interface SessionKeyGrantRequest {
  /** the key's address */
  key: Address
  /** unix seconds; over the API at least now + 5 minutes */
  expirySec: number
  scopes: readonly ProtocolScope[]
  /** empty: every subaccount, current and future */
  subaccountIds?: readonly number[]
  label?: string
  offchainScopes?: readonly string[]
}

export interface PreparedOwnerAction {
  readonly kind: 'set_session_key' | 'update_whitelisted_recipients'
  readonly method: 'private/set_session_key' | 'private/update_whitelisted_recipients'
  readonly owner: Address
  readonly chainId: number
  /** the request, `signature` left out; nonces and expiries as decimal strings */
  readonly params: Record<string, unknown>
  /** what an owner EOA signs (eth_signTypedData_v4), integers as decimal strings */
  readonly typedData: {
    domain: ReturnType<typeof v3Domain>
    types: typeof ACTION_TYPES
    primaryType: 'Action'
    message: Record<string, string>
  }
  readonly typedDataHash: Hex
  /** for a multisig owner: the call its signers propose on the OnchainActionManager (set_session_key only) */
  readonly l1?: { readonly data: Hex; readonly note: string }
}

interface Envelope {
  owner: Address
  chainId: number
  nonce: bigint
  nowMs: number
}

function prepared(
  kind: PreparedOwnerAction['kind'],
  env: Envelope,
  module: Address,
  data: Hex,
  params: Record<string, unknown>,
): PreparedOwnerAction {
  const expirySec = BigInt(Math.floor(env.nowMs / 1000) + OWNER_ACTION_TTL_SEC)
  const fields: ActionFields = {
    subaccountId: 0n,
    nonce: env.nonce,
    module,
    data,
    expirySec,
    owner: env.owner,
    signer: env.owner,
  }
  return {
    kind,
    method: `private/${kind}`,
    owner: env.owner,
    chainId: env.chainId,
    params: {
      wallet: env.owner,
      ...params,
      nonce: env.nonce.toString(),
      signer: env.owner,
      signature_expiry_sec: Number(expirySec),
    },
    typedData: {
      domain: v3Domain(env.chainId),
      types: ACTION_TYPES,
      primaryType: 'Action',
      message: {
        subaccountId: '0',
        nonce: env.nonce.toString(),
        module,
        data,
        expiry: expirySec.toString(),
        owner: env.owner,
        signer: env.owner,
      },
    },
    typedDataHash: v3TypedDataHash(fields, { chainId: env.chainId }),
  }
}

/**
 * The L1 form of a key's registration, for an owner that is a contract (a multisig): the
 * OnchainActionManager's `submit(51, abi.encode(key, expiry, scopes, subaccounts))`, sent by the owner.
 * No signature, nonce or envelope: the sender is the owner. An expiry of 0 deletes the key.
 */
export function l1SetSessionKeyCall(g: Omit<SessionKeyGrantRequest, 'label' | 'offchainScopes'>): Hex {
  const data = encodeSessionKeyData({
    sessionKey: getAddress(g.key),
    expirySec: BigInt(g.expirySec),
    scopes: g.scopes.map((s) => PROTOCOL_SCOPES[s]),
    subaccountIds: (g.subaccountIds ?? []).map(BigInt),
  })
  return encodeFunctionData({
    abi: ONCHAIN_ACTION_MANAGER_ABI,
    functionName: 'submit',
    args: [L1_SET_SESSION_KEY_ACTION, data],
  })
}

/** `private/set_session_key` for the owner to sign: `g`'s scopes, subaccounts and expiry, signed on subaccount 0. */
export function prepareSetSessionKey(g: SessionKeyGrantRequest, env: Envelope): PreparedOwnerAction {
  const nowSec = Math.floor(env.nowMs / 1000)
  if (BigInt(g.expirySec) < BigInt(nowSec) + SESSION_KEY_MIN_LIFETIME_SEC)
    throw new Error('a session key registered over the API must live at least 5 minutes (Derive refuses it, 14039)')
  const signed = {
    sessionKey: getAddress(g.key),
    expirySec: BigInt(g.expirySec),
    scopes: g.scopes.map((s) => PROTOCOL_SCOPES[s]),
    subaccountIds: (g.subaccountIds ?? []).map(BigInt),
  }
  const data = encodeSessionKeyData(signed)
  const action = prepared('set_session_key', env, V3_MODULES.setSessionKey, data, {
    public_session_key: signed.sessionKey,
    expiry_sec: g.expirySec,
    protocol_scopes: g.scopes.map(scopeWire),
    offchain_scopes: [...(g.offchainScopes ?? ['account_info'])],
    subaccount_ids: g.subaccountIds && g.subaccountIds.length > 0 ? [...g.subaccountIds] : null,
    label: g.label ?? null,
  })
  const l1 = l1SetSessionKeyCall(g)
  return { ...action, l1: { data: l1, note: 'call OnchainActionManager with this data from the owner (a multisig)' } }
}

/** `private/update_whitelisted_recipients` for the owner to sign (the resulting list is (current ∪ add) \ remove). */
export function prepareWhitelist(
  change: { add?: readonly Address[]; remove?: readonly Address[] },
  env: Envelope,
): PreparedOwnerAction {
  const add = (change.add ?? []).map((a) => getAddress(a))
  const remove = (change.remove ?? []).map((a) => getAddress(a))
  if (add.length + remove.length === 0) throw new Error('a whitelist change needs an address to add or remove')
  const data = encodeWhitelistedRecipients(add, remove)
  return prepared('update_whitelisted_recipients', env, V3_MODULES.whitelistedRecipient, data, { add, remove })
}

/**
 * The request with the owner's signature, once it is checked to be the owner's over this very action
 * (a signature of anything else, or by anyone else, is refused here rather than at the exchange).
 */
export async function signedOwnerAction(p: PreparedOwnerAction, signature: Hex): Promise<Record<string, unknown>> {
  const signer = await recoverAddress({ hash: p.typedDataHash, signature }).catch(() => undefined)
  if (!signer || getAddress(signer) !== getAddress(p.owner))
    throw new Error(`the signature is not the owner's (${p.owner}) over this ${p.kind}`)
  const params: Record<string, unknown> = { ...p.params, signature }
  // the spec types this nonce an integer (set_session_key's a string): an exact literal past 2^53
  if (p.kind === 'update_whitelisted_recipients')
    params.nonce = (JSON as unknown as { rawJSON(t: string): unknown }).rawJSON(String(p.params.nonce))
  return params
}
