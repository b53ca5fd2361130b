import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createAlerter } from './alerts'

interface Captured {
  method: string
  url: string
  body: unknown
}

/** A local stand-in for the Bot API on 127.0.0.1: records requests, answers as `respond` says. */
async function captureServer(respond: (req: IncomingMessage, res: ServerResponse) => void = okReply) {
  const requests: Captured[] = []
  const server: Server = createServer((req, res) => {
    let raw = ''
    req.on('data', (c) => {
      raw += c
    })
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', body: raw ? JSON.parse(raw) : undefined })
      respond(req, res)
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}
function okReply(_req: IncomingMessage, res: ServerResponse) {
  res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"result":{}}')
}

function memoryLog() {
  const lines: Array<{ obj: Record<string, unknown>; msg?: string }> = []
  return { lines, warn: (obj: object, msg?: string) => lines.push({ obj: obj as Record<string, unknown>, msg }) }
}

const TOKEN = '123456:SECRET-bot-token-value'

describe('alerts (spec 6.2)', () => {
  const closers: Array<() => Promise<void>> = []
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((c) => c()))
  })

  it('sends a Bot API sendMessage to the chat when token and chat id are both set', async () => {
    const srv = await captureServer()
    closers.push(srv.close)
    const log = memoryLog()
    const alerter = createAlerter({ botToken: TOKEN, chatId: '-10042', log, apiBaseUrl: srv.baseUrl })
    expect(alerter.channel).toBe('telegram')
    await alerter.alert('withdrawal stuck', { withdrawalId: 'w-1', minutes: 31, amount: 5n })
    expect(srv.requests).toEqual([
      {
        method: 'POST',
        url: `/bot${TOKEN}/sendMessage`,
        body: {
          chat_id: '-10042',
          text: 'withdrawal stuck\nwithdrawalId: w-1\nminutes: 31\namount: 5',
          disable_web_page_preview: true,
        },
      },
    ])
    expect(log.lines).toEqual([])
  })

  it('falls back to one warn line when the chat is not configured (one of the two is not enough)', async () => {
    for (const opts of [{}, { botToken: TOKEN }, { chatId: '-100' }]) {
      const log = memoryLog()
      const alerter = createAlerter({ ...opts, log })
      expect(alerter.channel).toBe('log')
      await alerter.alert('hot wallet low', { chain: 'base', balance: 12n })
      expect(log.lines).toEqual([{ obj: { alert: 'hot wallet low', chain: 'base', balance: '12' }, msg: 'alert' }])
      expect(JSON.stringify(log.lines)).not.toContain(TOKEN)
    }
  })

  it('a refused delivery is logged without the token and does not throw', async () => {
    const srv = await captureServer((_req, res) =>
      res.writeHead(401).end(`{"ok":false,"description":"Unauthorized for ${TOKEN}"}`),
    )
    closers.push(srv.close)
    const log = memoryLog()
    const alerter = createAlerter({ botToken: TOKEN, chatId: '1', log, apiBaseUrl: srv.baseUrl })
    await expect(alerter.alert(`text that mentions ${TOKEN}`)).resolves.toBeUndefined()
    expect(srv.requests).toHaveLength(1)
    expect(JSON.stringify(srv.requests[0]?.body)).not.toContain(TOKEN)
    expect(log.lines).toHaveLength(1)
    expect(log.lines[0]?.obj.status).toBe(401)
    expect(JSON.stringify(log.lines)).not.toContain(TOKEN)
  })

  it('an unreachable or silent chat API times out, is logged and swallowed', async () => {
    // a server that never answers
    const srv = await captureServer(() => {})
    closers.push(srv.close)
    const log = memoryLog()
    const alerter = createAlerter({ botToken: TOKEN, chatId: '1', log, apiBaseUrl: srv.baseUrl, timeoutMs: 200 })
    const started = Date.now()
    await expect(alerter.alert('x')).resolves.toBeUndefined()
    expect(Date.now() - started).toBeLessThan(3_000)
    expect(log.lines).toHaveLength(1)
    expect(log.lines[0]?.msg).toBe('alert delivery failed')
    expect(JSON.stringify(log.lines)).not.toContain(TOKEN)

    // nothing listening at all
    const closed = await captureServer()
    await closed.close()
    const log2 = memoryLog()
    await createAlerter({ botToken: TOKEN, chatId: '1', log: log2, apiBaseUrl: closed.baseUrl }).alert('y')
    expect(log2.lines).toHaveLength(1)
    expect(JSON.stringify(log2.lines)).not.toContain(TOKEN)
  })
})
