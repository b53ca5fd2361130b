/**
 * WS /ws/account for a frontend (docs/account-stream.md "Amounts", "Events"): every message with
 * amounts names their unit and the decimals that convert them; a withdrawal whose hash is recorded
 * in the same update that marks it mined still says `withdrawal.sent` before `withdrawal.confirmed`
 * (migration 0038); a deposit's sweep is `deposit.swept`.
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { type Msg, waitFor } from './market-support'
import { type Api, fundedUser, startApi } from './support'

const DEST = '0x52908400098527886E0F7030069857D2E4169EE7'

describe('WS /ws/account: units and the events a console follows', () => {
  let api: Api
  const sockets: WebSocket[] = []

  beforeAll(async () => {
    api = await startApi()
    await api.seedPrice('ETH', '3000')
    await api.app.listen({ port: 0, host: '127.0.0.1' })
  })
  afterAll(async () => {
    for (const s of sockets) s.terminate()
    await api?.close()
  })

  async function subscribed(token: string): Promise<Msg[]> {
    const addr = api.app.server.address()
    if (!addr || typeof addr === 'string') throw new Error('not listening')
    const ws = new WebSocket(`ws://127.0.0.1:${addr.port}/ws/account`)
    sockets.push(ws)
    const messages: Msg[] = []
    ws.on('message', (d) => messages.push(JSON.parse(String(d))))
    await new Promise((r) => ws.once('open', r))
    ws.send(JSON.stringify({ type: 'auth', token }))
    await waitFor(() => messages.find((m) => m.type === 'authenticated'), 'authenticated')
    ws.send(JSON.stringify({ type: 'subscribe' }))
    await waitFor(() => messages.find((m) => m.type === 'snapshot'), 'snapshot')
    return messages
  }

  it('names the unit of its amounts and their decimals; every event says base_units', async () => {
    const { token, userId } = await fundedUser(api, 1_000_000_000n)
    const messages = await subscribed(token)
    const units = { unit: 'base_units', decimals: { USDC: 6, ETH: 18, BTC: 8 } }
    expect(messages.find((m) => m.type === 'authenticated')).toEqual({ type: 'authenticated', userId, ...units })
    expect(messages.find((m) => m.type === 'snapshot')).toMatchObject({
      ...units,
      balances: [{ account: 'transit', currency: 'USDC', amount: '1000000000' }],
    })
    const sql = api.ctx.database.sql
    await sql`
      insert into deposits (chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount, state)
      values ('base', ${`0x${randomBytes(32).toString('hex')}`}, 0, 1, ${userId}, 0, ${DEST}, 'USDC', '2500000', 'detected')`
    const event = await waitFor(() => messages.find((m) => m.type === 'event'), 'an event')
    expect(event).toMatchObject({ unit: 'base_units', kind: 'deposit.credited', data: { amount: '2500000' } })
  })

  it('a hash recorded with the mined state: withdrawal.sent, then withdrawal.confirmed; a sweep is deposit.swept', async () => {
    const { token, userId } = await fundedUser(api, 1_000_000_000n)
    const messages = await subscribed(token)
    const res = await api.app.inject({
      method: 'POST',
      url: '/withdrawals',
      headers: { authorization: `Bearer ${token}` },
      payload: { chain: 'base', asset: 'USDC', amount: '25', destination: DEST },
    })
    expect(res.statusCode, res.body).toBe(202)
    const id = res.json().id as string
    const sql = api.ctx.database.sql
    const hash = `0x${'cd'.repeat(32)}`
    // the send path may record the hash and the mined state in one update
    await sql`update withdrawals set state = 'sent', tx_hash = ${hash}, sent_at = now() where id = ${id}`
    const [d] = await sql<{ id: string }[]>`
      insert into deposits (chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount, state)
      values ('base', ${`0x${randomBytes(32).toString('hex')}`}, 0, 1, ${userId}, 0, ${DEST}, 'USDC', '7000000', 'detected')
      returning id`
    await sql`update deposits set state = 'sweeping' where id = ${d?.id ?? ''}`
    await sql`update deposits set state = 'swept' where id = ${d?.id ?? ''}`
    await sql`update deposits set updated_at = now() where id = ${d?.id ?? ''}`
    await waitFor(() => messages.filter((m) => m.type === 'event').length >= 5 || undefined, 'five events')
    const events = messages.filter((m) => m.type === 'event')
    expect(events.map((e) => e.kind)).toEqual([
      'withdrawal.requested',
      'withdrawal.sent',
      'withdrawal.confirmed',
      'deposit.credited',
      'deposit.swept',
    ])
    expect(events[1]?.data).toMatchObject({ withdrawalId: id, txHash: hash })
    expect(events[4]?.data).toMatchObject({ depositId: d?.id, currency: 'USDC', amount: '7000000' })
  })
})
