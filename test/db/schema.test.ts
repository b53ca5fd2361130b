import { integrationContext } from '@wh/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

describe('users table (spec 2.1)', () => {
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  beforeAll(async () => {
    ctx = await integrationContext()
  })
  afterAll(() => ctx.database.close())

  it('allocates hd_index from the sequence, distinct under concurrency', async () => {
    const { sql } = ctx.database
    const addrs = Array.from({ length: 50 }, (_, i) => `0x${i.toString(16).padStart(40, '0')}`)
    await Promise.all(addrs.map((a) => sql`insert into users (wallet_address) values (${a})`))
    const rows = await sql<{ hd_index: number }[]>`select hd_index from users`
    expect(new Set(rows.map((r) => r.hd_index)).size).toBe(50)
  })

  it('refuses a second row for one wallet address', async () => {
    const { sql } = ctx.database
    await sql`insert into users (wallet_address) values ('0xdup')`
    await expect(sql`insert into users (wallet_address) values ('0xdup')`).rejects.toThrow(/users_wallet_address_key/)
  })

  it('refuses a nonce longer than 64 characters', async () => {
    const { sql } = ctx.database
    const long = 'a'.repeat(65)
    await expect(
      sql`insert into siwe_nonces (nonce, issued_at, expires_at) values (${long}, now(), now())`,
    ).rejects.toThrow()
  })
})
