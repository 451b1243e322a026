// A variant that cannot be written (the file-size limit, as a full disk:
// EFBIG/ENOSPC in the middle of the write): the file itself is sent, one
// warning is emitted, nothing is left half-written in the cache folder, and
// the server goes on. A real child process with `ulimit -f`.

import { spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { request } from '../support/http.mjs'

const CHILD = fileURLToPath(new URL('./children/file-size-limited-server.mjs', import.meta.url))
let base, root, cacheDir

// Text that compresses by about a quarter only (base64): its variant is
// hundreds of KB, past the child's file-size limit.
function text (size) {
  return Buffer.from(crypto.randomBytes(size).toString('base64')).subarray(0, size)
}

beforeAll(() => {
  base = fs.mkdtempSync(path.join(tmpdir(), 'zcopy-disk-full-'))
  root = path.join(base, 'public')
  cacheDir = path.join(base, 'cache')
  fs.mkdirSync(root)
  fs.writeFileSync(path.join(root, 'a.js'), text(600 * 1024))
  fs.writeFileSync(path.join(root, 'b.js'), text(600 * 1024))
})
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

test('a variant the disk refuses: the file itself, one warning, nothing half-written', async () => {
  // 64 KiB per file at most (ulimit -f counts 1024-byte blocks in bash): the
  // variants (~450 KB) fail part-way.
  const child = spawn('bash', ['-c', `ulimit -f 64; exec "${process.execPath}" "${CHILD}" "$@"`, 'bash', root, cacheDir], { stdio: ['pipe', 'pipe', 'inherit'] })
  const lines = []
  let waiting = null
  child.stdout.setEncoding('utf8')
  let buffered = ''
  child.stdout.on('data', (chunk) => {
    buffered += chunk
    let at
    while ((at = buffered.indexOf('\n')) !== -1) {
      lines.push(buffered.slice(0, at))
      buffered = buffered.slice(at + 1)
      if (waiting) waiting()
    }
  })
  const nextLine = async () => {
    while (lines.length === 0) await new Promise((resolve) => { waiting = resolve })
    return lines.shift()
  }
  try {
    const port = Number(await nextLine())
    for (const name of ['a.js', 'b.js', 'a.js', 'b.js']) {
      const answer = await request(port, `/${name}`, { headers: { 'accept-encoding': 'br' } })
      expect(answer.status).toBe(200)
      expect(answer.headers['content-encoding']).toBeUndefined()
      expect(answer.body.equals(fs.readFileSync(path.join(root, name)))).toBe(true)
      child.stdin.write('report\n')
      const { warnings, stats } = JSON.parse(await nextLine())
      expect(warnings.length).toBe(1)
      expect(warnings[0]).toMatch(/EFBIG|ENOSPC/)
      expect(stats.made).toBe(0)
      expect(stats.diskBytes).toBe(0)
    }
    const { stats } = JSON.parse(await (child.stdin.write('report\n'), nextLine()))
    expect(stats.failed).toBe(2)
    // Nothing left: no temporary file, no variant (only the socket that says the store is alive).
    const dir = fs.readdirSync(cacheDir).map((name) => path.join(cacheDir, name))
    for (const folder of dir) expect(fs.readdirSync(folder)).toEqual(['s'])
  } finally {
    child.kill()
  }
})
