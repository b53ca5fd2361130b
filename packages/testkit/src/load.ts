/** Helpers for benchmarks that fill a local chain with traffic: repeatable data, batched JSON-RPC. */

/** A small seeded PRNG (mulberry32): the same data every run. */
export function prng(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A random 20-byte address drawn from `random`. */
export function randomAddressFrom(random: () => number): `0x${string}` {
  return `0x${Array.from({ length: 5 }, () =>
    Math.floor(random() * 2 ** 32)
      .toString(16)
      .padStart(8, '0'),
  ).join('')}`
}

/** One HTTP request carrying several JSON-RPC calls; results in call order. */
export async function rpcBatch(url: string, calls: { method: string; params: unknown[] }[]): Promise<unknown[]> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(calls.map((c, id) => ({ jsonrpc: '2.0', id, ...c }))),
  })
  const body = (await res.json()) as { id: number; result?: unknown; error?: { message: string } }[]
  const failed = body.find((r) => r.error)
  if (failed) throw new Error(`${calls[failed.id]?.method}: ${failed.error?.message}`)
  return body.sort((a, b) => a.id - b.id).map((r) => r.result)
}
