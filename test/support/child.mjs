// A real child process that hashes what it reads on stdin (a pipe).
import { spawn } from 'node:child_process'
import { once } from 'node:events'

const HASH_STDIN = `
  const hash = require('crypto').createHash('sha256'); let n = 0
  process.stdin.on('data', (d) => { n += d.length; hash.update(d) })
  process.stdin.on('end', () => process.stdout.write(JSON.stringify({ bytes: n, sha256: hash.digest('hex') })))
`

// → { stdin, received }: end stdin, then `received` resolves { bytes, sha256 }.
export function startHashingChild () {
  const child = spawn(process.execPath, ['-e', HASH_STDIN], { stdio: ['pipe', 'pipe', 'inherit'] })
  let output = ''
  child.stdout.on('data', (d) => { output += d })
  return {
    stdin: child.stdin,
    received: once(child, 'close').then(() => JSON.parse(output))
  }
}
