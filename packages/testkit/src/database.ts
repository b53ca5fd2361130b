/**
 * One migrated template database per test run; each test file clones it
 * (CREATE DATABASE … TEMPLATE), which takes tens of milliseconds.
 */
import { randomBytes } from 'node:crypto'
import postgres from 'postgres'

export const TEMPLATE_DB = 'wh_template'

export function withDatabase(url: string, db: string): string {
  const u = new URL(url)
  u.pathname = `/${db}`
  return u.toString()
}

export async function createTemplate(adminUrl: string, migrate: (url: string) => Promise<void>): Promise<void> {
  const sql = postgres(adminUrl, { max: 1, onnotice: () => {} })
  try {
    await sql.unsafe(`drop database if exists ${TEMPLATE_DB}`)
    await sql.unsafe(`create database ${TEMPLATE_DB}`)
  } finally {
    await sql.end()
  }
  await migrate(withDatabase(adminUrl, TEMPLATE_DB))
}

/** A fresh migrated database for one test file; returns its URL. */
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
