/**
 * The built console under /console/ (apps/api/src/plugins/console.ts): served from CONSOLE_DIR
 * with an immutable year for hashed assets and no-cache for index.html, hidden from the OpenAPI
 * document, and nothing at all when CONSOLE_DIR is unset. A folder laid out as `vite build` lays
 * it out stands in for the build here; apps/web/test/served.test.ts serves a real one to Chromium.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { consolePlugin, IMMUTABLE_CACHE, NO_CACHE } from '../src/plugins/console'
import { type Api, startApi } from './support'

const INDEX = '<!doctype html><title>console</title><script type="module" src="./assets/index-AbC123.js"></script>'
const SCRIPT = 'console.log("built")\n'

describe('the web console served by the API', () => {
  let dir: string
  let served: Api
  let unset: Api

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wh-console-'))
    mkdirSync(join(dir, 'assets'))
    writeFileSync(join(dir, 'index.html'), INDEX)
    writeFileSync(join(dir, 'assets', 'index-AbC123.js'), SCRIPT)
    writeFileSync(join(dir, '.env'), 'SECRET=1')
    served = await startApi({ CONSOLE_DIR: dir })
    unset = await startApi()
  })
  afterAll(async () => {
    await served?.close()
    await unset?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('answers /console/ with index.html, never cached without revalidation', async () => {
    const res = await served.app.inject({ method: 'GET', url: '/console/' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^text\/html/)
    expect(res.headers['cache-control']).toBe(NO_CACHE)
    expect(res.body).toBe(INDEX)
    const direct = await served.app.inject({ method: 'GET', url: '/console/index.html' })
    expect(direct.headers['cache-control']).toBe(NO_CACHE)
    // the built page's URLs are relative: /console needs its slash
    const bare = await served.app.inject({ method: 'GET', url: '/console' })
    expect(bare.statusCode).toBe(301)
    expect(bare.headers.location).toBe('/console/')
  })

  it('serves hashed assets as immutable for a year, and revalidates by etag', async () => {
    const res = await served.app.inject({ method: 'GET', url: '/console/assets/index-AbC123.js' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toMatch(/^(text|application)\/javascript/)
    expect(res.headers['cache-control']).toBe(IMMUTABLE_CACHE)
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(res.body).toBe(SCRIPT)
    const again = await served.app.inject({
      method: 'GET',
      url: '/console/assets/index-AbC123.js',
      headers: { 'if-none-match': String(res.headers.etag) },
    })
    expect(again.statusCode).toBe(304)
  })

  it('answers 404 in the one error shape for what the build does not hold, dotfiles and escapes included', async () => {
    for (const url of ['/console/missing.js', '/console/.env', '/console/../package.json', '/console/%2e%2e/x']) {
      const res = await served.app.inject({ method: 'GET', url })
      expect([403, 404], url).toContain(res.statusCode)
      expect(res.body).not.toContain('SECRET')
      expect(res.json(), url).toMatchObject({ statusCode: res.statusCode, code: expect.any(String) })
    }
  })

  it('is not an API operation: the OpenAPI document does not list it', async () => {
    const doc = (await served.app.inject({ method: 'GET', url: '/docs/json' })).json() as { paths: object }
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/console'))).toEqual([])
    expect(Object.keys(doc.paths).length).toBeGreaterThan(10)
  })

  it('serves nothing when CONSOLE_DIR is unset', async () => {
    expect(unset.ctx.config.consoleDir).toBeUndefined()
    for (const url of ['/console/', '/console', '/console/assets/index-AbC123.js']) {
      const res = await unset.app.inject({ method: 'GET', url })
      expect(res.statusCode, url).toBe(404)
    }
  })

  it('refuses to start with a CONSOLE_DIR that holds no build', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'wh-console-empty-'))
    try {
      const app = Fastify({ logger: false })
      await expect(app.register(consolePlugin, { dir: empty }).ready()).rejects.toThrow(/holds no index\.html/)
      await app.close()
    } finally {
      rmSync(empty, { recursive: true, force: true })
    }
  })
})
