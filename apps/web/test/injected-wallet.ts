/**
 * Installed in every page before its scripts run: an EIP-1193 provider like a wallet extension's.
 * Accounts and signatures come from the test process (page.exposeFunction), where the key lives.
 */
export function injectedWallet() {
  type Listener = (...args: unknown[]) => void
  // globalThis is the page's window; named so, the helper type-checks without the DOM lib (apps/api's tests use it)
  const w = globalThis as unknown as {
    __walletAccount(): Promise<string>
    __walletSign(messageHex: string, address: string): Promise<string>
    ethereum: unknown
  }
  const listeners = new Map<string, Set<Listener>>()
  let connected = false
  w.ethereum = {
    isTestWallet: true,
    on(event: string, fn: Listener) {
      if (!listeners.has(event)) listeners.set(event, new Set())
      listeners.get(event)?.add(fn)
    },
    removeListener(event: string, fn: Listener) {
      listeners.get(event)?.delete(fn)
    },
    /** the test calls this after switching the account, as a wallet would */
    emit(event: string, ...args: unknown[]) {
      for (const fn of listeners.get(event) ?? []) fn(...args)
    },
    async request({ method, params }: { method: string; params?: unknown[] }) {
      switch (method) {
        case 'eth_requestAccounts':
          connected = true
          return [await w.__walletAccount()]
        case 'eth_accounts':
          return connected ? [await w.__walletAccount()] : []
        case 'eth_chainId':
          return '0x1'
        case 'personal_sign':
          return w.__walletSign(String(params?.[0]), String(params?.[1]))
        default:
          throw Object.assign(new Error(`unsupported method ${method}`), { code: 4200 })
      }
    },
  }
}
