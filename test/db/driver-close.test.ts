/**
 * The Postgres driver when the server ends a connection (a restart, a failover, an operator's
 * pg_terminate_backend). postgres.js 3.4.9 defers a small write to the next turn of the event loop;
 * on a connection already closed, that turn read a null socket and threw from the immediate, where
 * no caller can catch it: the API or worker process died. The project's patch
 * (patches/postgres@3.4.9.patch, docs/architecture.md "Libraries added") drops that write. Without
 * the patch this test fails with "Cannot read properties of null (reading 'write')".
 */
import postgres from 'postgres'
import { afterAll, describe, expect, inject, it } from 'vitest'

describe('a connection the server ended', () => {
  const admin = postgres(inject('pgAdminUrl'), { max: 1, onnotice: () => {} })
  afterAll(() => admin.end({ timeout: 5 }))

  it('a query written on it after the close never throws where nobody can catch it', async () => {
    const uncaught: unknown[] = []
    const onUncaught = (e: unknown) => uncaught.push(e)
    process.on('uncaughtException', onUncaught)
    let closed!: () => void
    const isClosed = new Promise<void>((resolve) => {
      closed = resolve
    })
    const sql = postgres(inject('pgAdminUrl'), { max: 1, onnotice: () => {}, onclose: () => closed() })
    try {
      const reserved = await sql.reserve()
      const [row] = await reserved<{ pid: number }[]>`select pg_backend_pid() as pid`
      await admin`select pg_terminate_backend(${row?.pid ?? 0})`
      // the client has seen its connection close
      await isClosed
      // a small query on it: its write is deferred to the next turn (not awaited: postgres.js 3.4.9
      // never settles a query on a reserved connection whose server ended, a separate upstream issue)
      void reserved`select 1`.catch(() => {})
      // that turn and the next come and go
      for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve))
      expect(uncaught.map((e) => (e as Error).message)).toEqual([])
    } finally {
      process.off('uncaughtException', onUncaught)
      void sql.end({ timeout: 0 }).catch(() => {})
    }
  })
})
