/**
 * One migrated template database per test run; each test file clones it
 * (CREATE DATABASE … TEMPLATE), which takes tens of milliseconds.
 */
import { randomBytes } from 'node:crypto'
import postgres from 'postgres'

export const TEMPLATE_DB = 'wh_template'

/**
 * The login the local run and the tests give the API and the worker: a member of the application
 * role (migration 0014), so every integration test runs with the rights the service has in
 * production, not the owner's (docs/architecture.md "Database access"). Passwordless: these
 * clusters trust loopback connections.
 */
export const APP_LOGIN = 'wheelhouse_service'

/** `url` with another user (and no password). */
export function withUser(url: string, user: string): string {
  const u = new URL(url)
  u.username = encodeURIComponent(user)
  u.password = ''
  return u.toString()
}

export function withDatabase(url: string, db: string): string {
  const u = new URL(url)
  u.pathname = `/${db}`
  return u.toString()
}

/**
 * Creates and migrates the template as `adminUrl`'s user (the owner); `afterMigrate` then runs
 * against it (the testkit grants the application role to APP_LOGIN there).
 */
export async function createTemplate(
  adminUrl: string,
  migrate: (url: string) => Promise<void>,
  afterMigrate?: (url: string) => Promise<unknown>,
): Promise<void> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} })
  try {
    await sql.unsafe(`drop database if exists ${TEMPLATE_DB}`)
    await sql.unsafe(`create database ${TEMPLATE_DB}`)
  } finally {
    await sql.end()
  }
  await migrate(withDatabase(adminUrl, TEMPLATE_DB))
  await afterMigrate?.(withDatabase(adminUrl, TEMPLATE_DB))
}

/** A fresh migrated database for one test file; returns its URL, as the owner (`adminUrl`'s user). */
export async function cloneTemplate(adminUrl: string): Promise<string> {
  const name = `wh_t_${randomBytes(6).toString('hex')}`
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} })
  try {
    await sql.unsafe(`create database ${name} template ${TEMPLATE_DB}`)
  } finally {
    await sql.end()
  }
  return withDatabase(adminUrl, name)
}
