/** Regenerates the artifacts in src/contracts/ from contracts/*.sol, formatted as the repo formats. */
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { CONTRACTS, compileContract, renderArtifact } from './solc'

for (const spec of CONTRACTS) {
  const compiled = compileContract(spec)
  writeFileSync(spec.artifactPath, renderArtifact(compiled))
  execFileSync('pnpm', ['exec', 'biome', 'format', '--write', spec.artifactPath], { stdio: 'inherit' })
  console.log(
    `wrote ${spec.artifactPath} (solc ${compiled.compilerVersion}, ${(compiled.bytecode.length - 2) / 2} bytes)`,
  )
}
