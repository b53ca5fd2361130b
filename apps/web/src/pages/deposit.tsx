/**
 * Deposit: the caller's address (the same on every chain listed) with its QR code and a copy
 * button, the chains and tokens it accepts, and each deposit's progress (detected → confirmed →
 * credited → swept; docs/chains.md "A deposit's progress"), live from the account stream.
 */
import { generate } from 'lean-qr'
import { toSvgDataURL } from 'lean-qr/extras/svg'
import { useState } from 'preact/hooks'
import { depositAddress, deposits } from '../state/account'
import { Card, Loading, SignedIn, Steps } from '../ui/common'
import { Amount, Time } from '../ui/values'

function CopyButton({ text, what }: { text: string; what: string }) {
  const [said, setSaid] = useState('')
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
      setSaid('Copied.')
    } catch {
      setSaid('Copy it by hand: your browser did not allow it.')
    }
  }
  return (
    <>
      <button type="button" onClick={copy} aria-label={`Copy ${what}`}>
        Copy
      </button>{' '}
      <span role="status" class="muted">
        {said}
      </span>
    </>
  )
}

function Address() {
  const d = depositAddress.value
  if (!d) return <Loading what="your address" />
  const qr = toSvgDataURL(generate(d.address), { on: 'black', off: 'white', padX: 2, padY: 2 })
  const confirmations = [...new Set(d.chains.map((c) => c.confirmations))]
  return (
    <div class="address-card">
      <img src={qr} width={176} height={176} alt="QR code of your deposit address" data-testid="deposit-qr" />
      <div>
        <p>Send USDC or ETH to:</p>
        <p>
          <code class="address" data-testid="deposit-address" data-address={d.address}>
            {d.address}
          </code>
        </p>
        <CopyButton text={d.address} what="your deposit address" />
        <p class="muted small">
          The same address on every chain below. A deposit shows here once its block is{' '}
          {confirmations.length === 1 ? confirmations[0] : confirmations.join(' to ')} blocks deep, and is credited at
          once.
        </p>
      </div>
    </div>
  )
}

function Chains() {
  const d = depositAddress.value
  if (!d) return null
  return (
    <ul class="chains" data-testid="deposit-chains">
      {d.chains.map((c) => (
        <li key={c.chain}>
          <strong>{c.chain}</strong> <span class="muted">(chain id {c.chainId})</span>:{' '}
          {c.tokens.map((t, i) => (
            <span key={t.symbol}>
              {i > 0 && ', '}
              {t.symbol} from <Amount value={t.minDeposit} currency={t.symbol} />
            </span>
          ))}
          ; counted after {c.confirmations} {c.confirmations === 1 ? 'confirmation' : 'confirmations'}
        </li>
      ))}
    </ul>
  )
}

function DepositList() {
  const list = deposits.value
  if (!list) return <Loading what="your deposits" />
  if (list.items.length === 0) return <p class="muted">No deposit yet. It appears here by itself once it arrives.</p>
  return (
    <ul class="progress-list" data-testid="deposits">
      {list.items.map((d) => (
        <li key={d.id} data-stage={d.stage}>
          <p>
            <strong>
              <Amount value={d.amount} currency={d.asset} />
            </strong>{' '}
            on {d.chain} · <Time iso={d.detectedAt} /> ·{' '}
            <span class="muted" title={d.txHash}>
              tx {d.txHash.slice(0, 10)}…
            </span>
          </p>
          <Steps
            label={`Progress of the deposit of ${d.amount} ${d.asset}`}
            steps={[
              { name: 'Detected', done: true, at: d.detectedAt },
              { name: `Confirmed (${d.confirmations} blocks)`, done: true, at: d.confirmedAt },
              { name: 'Credited', done: true, at: d.creditedAt },
              { name: 'Swept', done: d.sweptAt !== null, at: d.sweptAt },
            ]}
          />
        </li>
      ))}
    </ul>
  )
}

export function DepositPage() {
  return (
    <SignedIn what="Your deposit address">
      <div class="grid">
        <Card title="Your deposit address" id="deposit-address-card">
          <Address />
        </Card>
        <Card title="Chains and tokens" id="deposit-chains-card">
          <Chains />
        </Card>
        <Card title="Your deposits" id="deposit-list" wide>
          <DepositList />
        </Card>
      </div>
    </SignedIn>
  )
}
