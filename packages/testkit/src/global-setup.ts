/**
 * Starts one real Postgres and one real Redis for the integration suite, migrates a
 * template database that each test file clones, and hands the URLs to the tests.
 * TEST_PG_URL / TEST_REDIS_URL point at servers already running instead.
 */
import { processEnv } from '@wh/config'
import { grantAppRole, runMigrations } from '@wh/db'
import type { TestProject } from 'vitest/node'
import { APP_LOGIN, createTemplate, type RunningServer, startPostgres, startRedis, withUser } from './index'

export default async function setup(project: TestProject) {
  const env = processEnv()
  const started: RunningServer[] = []
  let pgUrl = env.TEST_PG_URL
  let redisUrl = env.TEST_REDIS_URL
  if (!pgUrl) {
    const pg = await startPostgres()
    started.push(pg)
    pgUrl = pg.url
  }
  if (!redisUrl) {
    const redis = await startRedis()
    started.push(redis)
    redisUrl = redis.url
  }
  // migrated as the owner; the tests connect as APP_LOGIN (context.ts)
  await createTemplate(pgUrl, runMigrations, (url) => grantAppRole(url, withUser(url, APP_LOGIN)))
  project.provide('pgAdminUrl', pgUrl)
  project.provide('redisUrl', redisUrl)
  return async () => {
    for (const s of started.reverse()) await s.stop()
  }
}
