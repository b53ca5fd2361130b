/**
 * What an ERC-20 `transfer` of the outbox moved, read from its receipt's logs (docs/hostile-world.md
 * "Destinations, kind by kind"). A token may answer `false` instead of reverting: the transaction
 * succeeds and nothing moves. Taken as sent, the journal would record a withdrawal that never
 * left the hot wallet, and a sweep of money still at the deposit address. So a successful receipt
 * of a `transfer(to, amount)` counts only when the token logged a Transfer out of the sender;
 * one that logged none failed (nothing moved), like a revert.
 */
import { decodeEventLog, erc20Abi, getAddress, type Hex, type Log, parseTransaction, size, slice } from 'viem'

/** `transfer(address,uint256)` */
const TRANSFER_SELECTOR = '0xa9059cbb'

/** Why a successful receipt of a token transfer still failed: nothing left the sender. */
export const TOKEN_MOVED_NOTHING = 'the token moved nothing (it answered without a Transfer)'

/**
 * The token units `from` sent in `logs` by the contract the raw transaction called, when that
 * transaction is an ERC-20 `transfer`; undefined for anything else (a native payment, a call).
 */
export function tokenUnitsSent(raw: Hex, from: string, logs: readonly Log[]): bigint | undefined {
  const tx = parseTransaction(raw)
  if (!tx.to || tx.data === undefined || size(tx.data) < 4 || slice(tx.data, 0, 4) !== TRANSFER_SELECTOR)
    return undefined
  const token = getAddress(tx.to)
  const sender = getAddress(from)
  let sent = 0n
  for (const log of logs) {
    if (getAddress(log.address) !== token) continue
    try {
      const e = decodeEventLog({ abi: erc20Abi, data: log.data, topics: log.topics })
      if (e.eventName === 'Transfer' && getAddress(e.args.from) === sender) sent += e.args.value
    } catch {
      // another event of the token
    }
  }
  return sent
}
