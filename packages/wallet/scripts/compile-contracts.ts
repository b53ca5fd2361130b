/** Regenerates src/contracts/test-usdc.ts from contracts/TestUSDC.sol, formatted as the repo formats. */
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { ARTIFACT_PATH, compileTestUsdc, renderArtifact } from './solc'

const compiled = compileTestUsdc()
writeFileSync(ARTIFACT_PATH, renderArtifact(compiled))
execFileSync('pnpm', ['exec', 'biome', 'format', '--write', ARTIFACT_PATH], { stdio: 'inherit' })
console.log(`wrote ${ARTIFACT_PATH} (solc ${compiled.compilerVersion}, ${(compiled.bytecode.length - 2) / 2} bytes)`)
