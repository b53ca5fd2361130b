/** What a simulated JSON-RPC method (v3/) gets: the engine, the authenticated account (private methods) and params. */
import type { TSchema } from 'typebox'
import Value from 'typebox/value'
import type { SimEngine } from './engine'
import { rpcErr } from './rpc-error'
import { requireRead, type Signer } from './session-keys'
import type { SimSubaccount, SimWallet } from './sim-types'

export interface Ctx {
  engine: SimEngine
  wallet: SimWallet | null
  /** who signed the request's auth (the owner or a session key); null on public calls */
  signer: Signer | null
}

export type Handler = (ctx: Ctx, params: Record<string, unknown>) => unknown | Promise<unknown>

/** Validates params against a schema, answering Derive's -32602 on failure. */
export function check<T>(schema: TSchema, params: unknown): T {
  if (!Value.Check(schema, params)) {
    const first = Value.Errors(schema, params)[0]
    throw rpcErr.params(first ? `${first.instancePath || '/'} ${first.message}` : 'invalid params')
  }
  return params as T
}

/**
 * The caller's own subaccount, or Derive's "subaccount not found"; a session key must also be
 * allowed to reach it (its subaccount list, 14031).
 */
export function ownSubaccount(ctx: Ctx, id: unknown): SimSubaccount {
  const sub = ctx.engine.subaccounts.get(Number(id))
  if (!sub || !ctx.wallet || sub.wallet.toLowerCase() !== ctx.wallet.wallet.toLowerCase())
    throw rpcErr.subaccount(Number(id))
  if (ctx.signer) requireRead(ctx.signer, sub.id)
  return sub
}

/** Who signed the request's auth; private methods only. */
export function requireSigner(ctx: Ctx): Signer {
  if (!ctx.signer) throw rpcErr.params('authentication required')
  return ctx.signer
}

export function requireWallet(ctx: Ctx): SimWallet {
  if (!ctx.wallet) throw rpcErr.params('authentication required')
  return ctx.wallet
}
