/**
 * Native balances of many addresses at one block, one `eth_call` per batch: a deployless read
 * (docs/chains.md "Every deposit is accounted for"). The call has no `to`; its data is the creation
 * code of contracts/BalanceReader.sol with the addresses as its argument (packed, 20 bytes each),
 * and the constructor returns their balances (16 bytes each) instead of runtime code. Nothing is deployed and no contract address has
 * to exist on the chain, so the same bytes work on every chain and on every node that serves
 * `eth_call` at that block. `eth_getBalance` would cost one call per address: 100,000 users are
 * 100,000 calls, against 100 of these.
 */
import { concatHex, encodeAbiParameters, type Hex, numberToHex, type PublicClient, size } from 'viem'
import { balanceReaderBytecode } from './contracts/balance-reader.gen'

/**
 * Addresses per `eth_call` by default. Each costs a cold BALANCE (2,600 gas), 20 bytes of calldata
 * and 16 of return data: 1,000 are about 3 M gas, 20 kB in and 16 kB out, well inside the 50 M gas
 * cap common nodes put on `eth_call`.
 */
export const BALANCE_READ_BATCH = 1_000
/**
 * The most one call can read: a constructor's return data is code, at most 24,576 bytes (EIP-170),
 * 16 bytes per balance. (The creation code and its argument, 20 bytes per address, stay under the
 * 49,152 bytes of EIP-3860 up to about 2,400 addresses.)
 */
export const BALANCE_READ_MAX_BATCH = 1_536

/** Bytes per balance in the reader's answer (contracts/BalanceReader.sol). */
const BALANCE_BYTES = 16

/** A node answered a balance read with something that is not one balance per address asked. */
export class BalanceReadError extends Error {
  readonly code = 'BALANCE_READ_FAILED'
  constructor(message: string) {
    super(message)
    this.name = 'BalanceReadError'
  }
}

/** The data of the deployless call for `addresses`: the creation code, then the addresses packed. */
export function balanceReadCallData(addresses: readonly string[]): Hex {
  const packed = concatHex(addresses.map((a) => a.toLowerCase() as Hex))
  if (size(packed) !== addresses.length * 20) throw new RangeError('every address must be 20 bytes')
  return concatHex([balanceReaderBytecode, encodeAbiParameters([{ type: 'bytes' }], [packed])])
}

/** The balances in a reader's answer, 16 bytes each. */
export function decodeBalances(answer: Hex, want: number): bigint[] {
  const hex = answer.slice(2)
  if (hex.length !== want * BALANCE_BYTES * 2) {
    throw new BalanceReadError(`a balance read of ${want} addresses returned ${hex.length / 2} bytes`)
  }
  const out: bigint[] = []
  for (let i = 0; i < want; i++) {
    out.push(BigInt(`0x${hex.slice(i * BALANCE_BYTES * 2, (i + 1) * BALANCE_BYTES * 2)}`))
  }
  return out
}

/**
 * The balance of each address at `blockNumber`, in the order given: ⌈n / batchSize⌉ `eth_call`s,
 * issued together (the chain's transport batches them into one HTTP request when they fit).
 *
 * @example
 *   const wei = await readBalances(client, ['0xab…', '0xcd…'], 19_000_000n)
 *   wei[0] // bigint, the first address's balance at that block
 */
export async function readBalances(
  client: Pick<PublicClient, 'request'>,
  addresses: readonly string[],
  blockNumber: bigint,
  batchSize = BALANCE_READ_BATCH,
): Promise<bigint[]> {
  if (!Number.isSafeInteger(batchSize) || batchSize < 1 || batchSize > BALANCE_READ_MAX_BATCH) {
    throw new RangeError(`batchSize must be an integer from 1 to ${BALANCE_READ_MAX_BATCH}`)
  }
  const block = numberToHex(blockNumber)
  const batches: string[][] = []
  for (let i = 0; i < addresses.length; i += batchSize) batches.push(addresses.slice(i, i + batchSize))
  const answers = await Promise.all(
    batches.map((batch) =>
      client.request({ method: 'eth_call', params: [{ data: balanceReadCallData(batch) }, block] }),
    ),
  )
  return answers.flatMap((answer, i) => decodeBalances(answer as Hex, (batches[i] as string[]).length))
}
