/**
 * The web console (docs/console.md): Preact, signals for the live state, one module per page.
 * Everything from the API is rendered as text by Preact (nothing is parsed as HTML).
 */
import { render } from 'preact'
import { App } from './app'
import { refreshWallet } from './session'
import { startMarketStreams } from './state/market'
import './style.css'

startMarketStreams()
void refreshWallet()
render(<App />, document.getElementById('app') as HTMLElement)
