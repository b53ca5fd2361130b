/**
 * JSON-RPC over a WebSocket (Derive's `EXCHANGE_WS_URL`): requests `{ id, method, params }`,
 * answers matched by id, and `subscription` notifications `{ method, params: { channel, data } }`.
 * Login (`public/login`) authenticates the connection for private calls.
 */
import WebSocket from 'ws'
import { v3WsLoginParams } from '../protocol/auth'
import type { AuthProof } from '../protocol/auth-message'
import type { RpcErrorBody } from '../protocol/rpc-codes'
import { ExchangeUnavailableError, errorFromRpc } from './errors'
import { type ExchangeLogger, silentLogger } from './logger'

type Handler = (channel: string, data: unknown) => void

export interface WsClientOptions {
  timeoutMs?: number
  logger?: ExchangeLogger
}

export class DeriveWsClient {
  readonly #ws: WebSocket
  readonly #timeoutMs: number
  readonly #logger: ExchangeLogger
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; method: string }>()
  readonly #handlers = new Map<string, Set<Handler>>()
  #id = 0

  private constructor(ws: WebSocket, opts: WsClientOptions) {
    this.#ws = ws
    this.#timeoutMs = opts.timeoutMs ?? 10_000
    this.#logger = opts.logger ?? silentLogger
    ws.on('message', (raw) => this.#onMessage(String(raw)))
    ws.on('close', () => this.#failAll('connection closed'))
    ws.on('error', () => this.#failAll('connection error'))
  }

  /** Opens a connection; rejects with ExchangeUnavailableError when it cannot. */
  static connect(url: string, opts: WsClientOptions = {}): Promise<DeriveWsClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url)
      ws.once('open', () => resolve(new DeriveWsClient(ws, opts)))
      ws.once('error', (err) =>
        reject(new ExchangeUnavailableError({ method: 'ws/connect', message: 'ws/connect: failed', cause: err })),
      )
    })
  }

  /** Sends one request and waits for its answer. */
  call<T>(method: string, params: object): Promise<T> {
    const id = ++this.#id
    const started = performance.now()
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id)
        reject(new ExchangeUnavailableError({ method, message: `${method}: timed out` }))
      }, this.#timeoutMs)
      this.#pending.set(id, {
        method,
        resolve: (v) => {
          clearTimeout(timer)
          this.#logger.info(this.#entry(method, started, true), 'exchange call')
          resolve(v as T)
        },
        reject: (e) => {
          clearTimeout(timer)
          this.#logger.warn(this.#entry(method, started, false), 'exchange call failed')
          reject(e)
        },
      })
      this.#ws.send(JSON.stringify({ id, method, params }))
    })
  }

  /** Authenticates the connection (the timestamp travels as a number); resolves with the subaccount ids it may act for. */
  login(proof: AuthProof): Promise<number[]> {
    return this.call<number[]>('public/login', v3WsLoginParams(proof))
  }

  /** Subscribes to channels (e.g. `ticker_slim.ETH-PERP.100`); returns the unsubscribe function. */
  async subscribe(channels: string[], onData: Handler): Promise<() => Promise<void>> {
    for (const c of channels) {
      const set = this.#handlers.get(c) ?? new Set()
      set.add(onData)
      this.#handlers.set(c, set)
    }
    await this.call('subscribe', { channels })
    return async () => {
      for (const c of channels) this.#handlers.get(c)?.delete(onData)
      await this.call('unsubscribe', { channels })
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.#ws.readyState === WebSocket.CLOSED) return resolve()
      this.#ws.once('close', () => resolve())
      this.#ws.close()
    })
  }

  #entry(method: string, started: number, ok: boolean) {
    return { transport: 'ws' as const, method, attempt: 1, ok, durationMs: Math.round(performance.now() - started) }
  }

  #onMessage(text: string): void {
    let msg: {
      id?: number
      result?: unknown
      error?: RpcErrorBody
      method?: string
      params?: { channel: string; data: unknown }
    }
    try {
      msg = JSON.parse(text)
    } catch {
      return
    }
    if (msg.method === 'subscription' && msg.params) {
      for (const h of this.#handlers.get(msg.params.channel) ?? []) h(msg.params.channel, msg.params.data)
      return
    }
    if (typeof msg.id !== 'number') return
    const p = this.#pending.get(msg.id)
    if (!p) return
    this.#pending.delete(msg.id)
    if (msg.error) p.reject(errorFromRpc(p.method, msg.error))
    else p.resolve(msg.result)
  }

  #failAll(reason: string): void {
    for (const [id, p] of this.#pending) {
      this.#pending.delete(id)
      p.reject(new ExchangeUnavailableError({ method: p.method, message: `${p.method}: ${reason}` }))
    }
  }
}
