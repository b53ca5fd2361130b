/**
 * Dispatches a JSON-RPC call to its method and turns failures into Derive's error envelope.
 * Private methods need an authenticated wallet (HTTP headers or a logged-in WebSocket).
 */
import { RPC, type RpcErrorBody } from '../protocol/rpc-codes'
import type { SimEngine } from './engine'
import type { Handler } from './handler'
import { accountMethods } from './methods-account'
import { historyMethods } from './methods-history'
import { publicMethods } from './methods-public'
import { tradingMethods } from './methods-trading'
import { SimRpcError } from './rpc-error'
import type { SimWallet } from './sim-types'

const METHODS: Record<string, Handler> = { ...publicMethods, ...accountMethods, ...tradingMethods, ...historyMethods }

export type RpcOutcome = { result: unknown } | { error: RpcErrorBody }

export function isPrivate(method: string): boolean {
  return method.startsWith('private/')
}

export function knownMethod(method: string): boolean {
  return method in METHODS
}

export async function dispatch(
  engine: SimEngine,
  method: string,
  params: unknown,
  wallet: SimWallet | null,
): Promise<RpcOutcome> {
  const handler = METHODS[method]
  if (!handler) return { error: { code: RPC.METHOD_NOT_FOUND, message: 'Method not found', data: method } }
  const p = (params && typeof params === 'object' ? params : {}) as Record<string, unknown>
  try {
    return { result: await handler({ engine, wallet }, p) }
  } catch (err) {
    if (err instanceof SimRpcError) return { error: { code: err.code, message: err.message, data: err.data } }
    return { error: { code: RPC.INTERNAL, message: 'Internal error', data: String(err) } }
  }
}

/** Consumes one injected failure matching the method, if any (the control API sets them). */
export function takeFailure(engine: SimEngine, method: string) {
  const i = engine.failures.findIndex((f) => f.remaining > 0 && (f.method === undefined || f.method === method))
  if (i < 0) return undefined
  const f = engine.failures[i]!
  f.remaining--
  if (f.remaining === 0) engine.failures.splice(i, 1)
  return f
}
