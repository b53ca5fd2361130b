/**
 * Preloaded into the API process by load.bench.ts (`--expose-gc --import`): a full collection when
 * the bench asks over IPC, so the heap it then reads from GET /metrics is what is still live. The
 * API itself (src/main.ts) runs unchanged.
 */
process.on('message', (m) => {
  if (m !== 'gc') return
  ;(globalThis as { gc?: () => void }).gc?.()
  process.send?.('gc-done')
})
