/** Regenerates src/contracts/{pool,test-weth}.ts from contracts/*.sol, formatted as the repo formats. */
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { artifactPath, compileSwapContracts, renderArtifact } from './solc'

for (const compiled of compileSwapContracts()) {
  const path = artifactPath(compiled.name)
  writeFileSync(path, renderArtifact(compiled))
  execFileSync('pnpm', ['exec', 'biome', 'format', '--write', path], { stdio: 'inherit' })
  console.log(`wrote ${path} (solc ${compiled.compilerVersion}, ${(compiled.bytecode.length - 2) / 2} bytes)`)
}
