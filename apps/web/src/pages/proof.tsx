/**
 * Proof: both sides of solvency, checked in the browser (docs/solvency.md). The liabilities: the
 * latest published root with its date and totals, and, signed in, the caller's own proof fetched
 * and verified against that public root with @wh/client's light client (WebCrypto; nothing is
 * trusted from the answer itself). A user in no tree yet is told when the next root comes. The
 * assets: the latest complete solvency run's totals per currency, and where they were read.
 */
import {
  ApiError,
  checkOwnBalances,
  type LiabilityRootBody,
  type PublicSolvencyResponse,
  verifyLiabilityProof,
} from '@wh/client'
import { useEffect, useState } from 'preact/hooks'
import { errorText } from '../errors'
import { formatAmount, formatLocalTime } from '../format'
import { api, signedIn } from '../session'
import { summary } from '../state/account'
import { Result, useAction } from '../ui/action'
import { Card, Figure, Loading, ScrollRegion } from '../ui/common'
import { Amount, Time } from '../ui/values'

type Read<T> = { kind: 'loading' } | { kind: 'ok'; value: T } | { kind: 'none'; text: string }

/** A public read once: its value, or why there is none, in words (404 NO_LIABILITY_ROOT reads as a sentence too). */
function useRead<T>(read: () => Promise<T>): Read<T> {
  const [state, setState] = useState<Read<T>>({ kind: 'loading' })
  useEffect(() => {
    read().then(
      (value) => setState({ kind: 'ok', value }),
      (e) => setState({ kind: 'none', text: errorText(e) }),
    )
  }, [])
  return state
}

/** The next publication: the first run of the next UTC day (the tick runs hourly; docs/solvency.md "Publishing it"). */
export function nextRootAt(nowMs: number): string {
  const d = new Date(nowMs)
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString()
}

function Root({ r }: { r: LiabilityRootBody }) {
  return (
    <>
      <dl class="facts" data-testid="liability-root">
        <dt>Root</dt>
        <dd>
          <code class="address">{r.root}</code>
        </dd>
        <dt>Published</dt>
        <dd>
          <Time iso={r.publishedAt} /> (balances of <Time iso={r.balancesAt} plain />)
        </dd>
        <dt>Users in it</dt>
        <dd>{r.leafCount.toLocaleString('en-US')}</dd>
      </dl>
      <div class="figures">
        {r.totals.map((t) => (
          <Figure key={t.currency} label={`Owed to users, ${t.currency}`}>
            <Amount value={t.value} currency={t.currency} />
          </Figure>
        ))}
      </div>
    </>
  )
}

function MyProof({ root }: { root: LiabilityRootBody | undefined }) {
  const [outcome, act] = useAction()
  const check = () =>
    act(async () => {
      let mine: Awaited<ReturnType<typeof api.portfolioProof>>
      try {
        mine = await api.portfolioProof()
      } catch (e) {
        if (e instanceof ApiError && e.code === 'NOT_IN_LIABILITY_TREE') {
          const next = `${formatLocalTime(nextRootAt(Date.now()))} (within the hour after)`
          return root
            ? `You are not in a tree yet: the latest root was built before you held anything. The next root is published at ${next}: you will be in it.`
            : `No root has been published yet. The first is published at ${next}.`
        }
        throw e
      }
      // checked against the root published for everyone, not the one this answer carries
      const published = root ?? (await api.liabilityRoot())
      if (published.id !== mine.root.id) return 'A newer root was published meanwhile: reload the page and check again.'
      const v = await verifyLiabilityProof(mine.proof, published)
      if (!v.ok) return `✗ Your proof does NOT verify: ${v.reason}. Keep this page and contact support.`
      const held = mine.proof.currencies
        .map((c, i) => `${c} ${mine.proof.balances[i]}`)
        .filter((s) => !s.endsWith(' 0'))
      const now = summary.value ? checkOwnBalances(mine.proof, summary.value) : { ok: true as const }
      const steps = mine.proof.path.length
      return `✓ Verified in your browser: your balances are in root ${published.root.slice(0, 12)}… (${steps} ${steps === 1 ? 'step' : 'steps'} up to it recomputed, every sum checked)${held.length ? '' : ', with nothing held'}. ${
        now.ok
          ? 'They match your balances now.'
          : 'Your balances moved since the root was built (a deposit, a fill): they differ from now, as expected.'
      }`
    }, 'Fetching and checking your proof…')
  return (
    <>
      <p>Fetch your proof of inclusion and check it here, against the root everyone sees.</p>
      <button type="button" class="primary" onClick={check}>
        Check my inclusion
      </button>
      <Result outcome={outcome} testId="proof-result" />
    </>
  )
}

function Solvency({ s }: { s: PublicSolvencyResponse }) {
  return (
    <>
      <p>
        Checked <Time iso={s.finishedAt} />.
      </p>
      <ScrollRegion label="Solvency per currency">
        <table data-testid="solvency">
          <thead>
            <tr>
              <th scope="col">Currency</th>
              <th scope="col">Held (assets)</th>
              <th scope="col">Owed (liabilities)</th>
              <th scope="col">Surplus</th>
            </tr>
          </thead>
          <tbody>
            {s.totals.map((t) => (
              <tr key={t.currency}>
                <th scope="row">{t.currency}</th>
                <td>{formatAmount(t.assets, t.currency)}</td>
                <td>{formatAmount(t.liabilities, t.currency)}</td>
                <td>
                  <Amount value={t.surplus} currency={t.currency} signed />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
      <details>
        <summary>
          Where the assets were read ({s.addresses.length} {s.addresses.length === 1 ? 'address' : 'addresses'})
        </summary>
        <ul class="small">
          {s.addresses.map((a) => (
            <li key={`${a.chain}:${a.address}`}>
              {a.chain} {a.role}: <code>{a.address}</code>
            </li>
          ))}
          {s.exchangeAccount && (
            <li>
              exchange account: <code>{s.exchangeAccount}</code>
            </li>
          )}
        </ul>
      </details>
    </>
  )
}

export function ProofPage() {
  const root = useRead(() => api.liabilityRoot())
  const solvency = useRead(() => api.solvency())
  return (
    <div class="grid">
      <Card title="What the platform owes its users" id="proof-root">
        {root.kind === 'loading' ? (
          <Loading what="the latest root" />
        ) : root.kind === 'ok' ? (
          <Root r={root.value} />
        ) : (
          <p>{root.text}</p>
        )}
      </Card>
      <Card title="Your inclusion" id="proof-mine">
        {signedIn.value ? (
          <MyProof root={root.kind === 'ok' ? root.value : undefined} />
        ) : (
          <p>Sign in to fetch your proof and check it in this browser.</p>
        )}
      </Card>
      <Card title="What the platform holds" id="proof-solvency" wide>
        {solvency.kind === 'loading' ? (
          <Loading what="the latest solvency check" />
        ) : solvency.kind === 'ok' ? (
          <Solvency s={solvency.value} />
        ) : (
          <p>{solvency.text}</p>
        )}
      </Card>
    </div>
  )
}
