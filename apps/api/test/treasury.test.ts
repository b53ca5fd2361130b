import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, newAccount, signIn, startApi } from './support'

describe('GET /deposit-address (spec 2.1 rules 2-4)', () => {
  let api: Api
  beforeAll(async () => {
    api = await startApi()
  })
  afterAll(() => api.close())

  it("answers the caller's address derived at m/44'/60'/0'/0/{hd_index}, with the chains it accepts", async () => {
    const account = newAccount()
    const token = await signIn(api.app, account)
    const res = await api.app.inject({
      method: 'GET',
      url: '/deposit-address',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(res.statusCode).toBe(200)
    const body = res.json()
    const [user] = await api.ctx.database.sql`select hd_index from users where wallet_address = ${account.address}`
    expect(body.address).toBe(api.keyring.address(user?.hd_index))
    expect(body.address).not.toBe(account.address)
    expect(body.chains.map((c: { chain: string }) => c.chain)).toEqual(['ethereum', 'optimism', 'base', 'arbitrum'])
    expect(body.chains[0].tokens.map((t: { symbol: string }) => t.symbol)).toEqual(['ETH', 'USDC'])
    expect(body.chains[0].tokens[1]).toMatchObject({ decimals: 6, minDeposit: '1' })
  })

  it('the first users of the standard test mnemonic get the standard vectors, and the sweep signer matches', async () => {
    // a fresh database: the sequence starts at 0
    const fresh = await startApi()
    try {
      const addresses: string[] = []
      for (let i = 0; i < 2; i++) {
        const token = await signIn(fresh.app, newAccount())
        const res = await fresh.app.inject({
          method: 'GET',
          url: '/deposit-address',
          headers: { authorization: `Bearer ${token}` },
        })
        addresses.push(res.json().address)
      }
      expect(addresses).toEqual([
        '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
        '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      ])
      // the key that will sign the sweep of index 0 is the one whose address the user was shown
      const signer = fresh.keyring.signer(0)
      expect(signer.account.address).toBe(addresses[0])
      expect(privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80').address).toBe(
        addresses[0],
      )
    } finally {
      await fresh.close()
    }
  })

  it('answers 404 in the error shape for a valid token whose user does not exist', async () => {
    const token = api.app.jwt.sign({ sub: '00000000-0000-4000-8000-000000000000' })
    const res = await api.app.inject({
      method: 'GET',
      url: '/deposit-address',
      headers: { authorization: `Bearer ${token}` },
    })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' })
  })
})
