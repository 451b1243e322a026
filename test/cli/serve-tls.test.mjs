import { afterAll, describe, expect, test } from 'vitest'
import crypto from 'node:crypto'
import fs from 'node:fs'
import http2 from 'node:http2'
import https from 'node:https'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { expectOneLineUsageError, runCli } from './cli.mjs'
import { makeRoot, startServe } from './serve-helpers.mjs'

const cert = fileURLToPath(new URL('../fixtures/http/localhost-cert.pem', import.meta.url))
const key = fileURLToPath(new URL('../fixtures/http/localhost-key.pem', import.meta.url))
const ca = fs.readFileSync(cert)
const content = Buffer.alloc(300 * 1024, 'z')
const root = makeRoot({ 'hello.txt': 'hello\n', 'big.txt': content })
// The fixture key, encrypted, and its passphrase in a file (outside the served
// folder) as `echo` writes it: with a trailing newline.
const PASSPHRASE = 'correct horse battery staple'
const secrets = makeRoot({
  'encrypted-key.pem': crypto.createPrivateKey(fs.readFileSync(key)).export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: PASSPHRASE }),
  'pass.txt': `${PASSPHRASE}\n`,
  'wrong.txt': 'not it\n'
})
const encryptedKey = path.join(secrets, 'encrypted-key.pem')
afterAll(() => fs.rmSync(secrets, { recursive: true, force: true }))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))
const large = crypto.randomBytes(12 * 1024 * 1024)
const largeRoot = makeRoot({ 'large.bin': large })
afterAll(() => fs.rmSync(largeRoot, { recursive: true, force: true }))

function httpsGet (url) {
  return new Promise((resolve, reject) => {
    https.get(url, { ca, agent: false }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode, version: res.httpVersion, body: Buffer.concat(chunks) }))
    }).on('error', reject)
  })
}

// A GET whose client stops reading for 2.5 s once it has 1 MiB, then reads
// on. → the body; rejects when it has not ended 20 s after the last byte.
function pausingGet (url) {
  return new Promise((resolve, reject) => {
    https.get(url, { ca, agent: false }, (res) => {
      const chunks = []
      let received = 0
      let paused = false
      const silent = () => {
        res.destroy()
        reject(new Error(`no end 20 s after ${received} bytes`))
      }
      const timer = setTimeout(silent, 20_000)
      res.on('data', (chunk) => {
        chunks.push(chunk)
        received += chunk.length
        timer.refresh()
        if (paused || received < 1024 * 1024) return
        paused = true
        res.pause()
        setTimeout(() => res.resume(), 2500)
      })
      res.on('end', () => {
        clearTimeout(timer)
        resolve(Buffer.concat(chunks))
      })
      res.on('error', (err) => {
        clearTimeout(timer)
        reject(err)
      })
    }).on('error', reject)
  })
}

function h2Get (origin, path) {
  return new Promise((resolve, reject) => {
    const session = http2.connect(origin, { ca })
    session.on('error', reject)
    const stream = session.request({ ':path': path })
    const chunks = []
    let headers
    stream.on('response', (h) => { headers = h })
    stream.on('data', (chunk) => chunks.push(chunk))
    stream.on('end', () => {
      session.close()
      resolve({ status: headers[':status'], body: Buffer.concat(chunks) })
    })
    stream.on('error', reject)
  })
}

describe('zcopy serve over TLS', () => {
  // Clients that stop reading for longer than the stall timeout (1 s), then
  // read on, get their whole body and its end. Without the addon, a stall
  // right before a read's first piece went out was once taken for a hang-up,
  // and the response never ended (4 of 12 such clients; none when the
  // clients ran in the server's own process).
  test.each([
    ['the addon if present', {}],
    ['no addon', { ZCOPY_NATIVE: '0' }]
  ])('clients that pause mid-body for 2.5 s, then read on, get every byte and the end (%s)', async (_, env) => {
    const server = await startServe(largeRoot, ['--ssl-cert', cert, '--ssl-key', key], { env })
    try {
      const url = new URL('large.bin', server.url)
      const bodies = await Promise.all(Array.from({ length: 12 }, () => pausingGet(url)))
      for (const body of bodies) expect(body.equals(large)).toBe(true)
    } finally {
      expect((await server.stop()).code).toBe(0)
    }
  }, 60_000)

  test('--ssl-cert/--ssl-key: HTTPS, the stream fallback said so', async () => {
    const server = await startServe(root, ['--ssl-cert', cert, '--ssl-key', key])
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/$/)
    expect(server.cli.stdout()).toMatch(/zero-copy off: TLS is encrypted in user space, stream fallback/)
    const hello = await httpsGet(new URL('hello.txt', server.url))
    expect(hello.status).toBe(200)
    expect(hello.body.toString()).toBe('hello\n')
    expect((await httpsGet(new URL('big.txt', server.url))).body.equals(content)).toBe(true)
    const { code, stdout } = await server.stop()
    expect(code).toBe(0)
    expect(stdout).toMatch(/^GET \/big\.txt 200 307200 B \d+\.\d ms stream$/m)
  })

  test('--http2: HTTP/2 for h2 clients, HTTP/1.1 for the others', async () => {
    const server = await startServe(root, ['--http2', '--ssl-cert', cert, '--ssl-key', key])
    expect(server.cli.stdout()).toMatch(/, HTTP\/2\)/)
    const origin = server.url.replace(/\/$/, '')
    const h2 = await h2Get(origin, '/big.txt')
    expect(h2.status).toBe(200)
    expect(h2.body.equals(content)).toBe(true)
    expect((await h2Get(origin, '/nope')).status).toBe(404)
    const h1 = await httpsGet(new URL('hello.txt', server.url))
    expect(h1.version).toBe('1.1')
    expect(h1.body.toString()).toBe('hello\n')
    const { code } = await server.stop()
    expect(code).toBe(0)
  })

  test('--ssl-pass: an encrypted key opened with the passphrase from a file, never shown', async () => {
    const server = await startServe(root, ['--ssl-cert', cert, '--ssl-key', encryptedKey, '--ssl-pass', path.join(secrets, 'pass.txt')])
    const hello = await httpsGet(new URL('hello.txt', server.url))
    expect(hello.body.toString()).toBe('hello\n')
    const { code, stdout, stderr } = await server.stop()
    expect(code).toBe(0)
    expect(stdout + stderr).not.toContain(PASSPHRASE)
  })

  test('an encrypted key without --ssl-pass, or with the wrong one: one line, exit code 2, no passphrase shown', async () => {
    const withoutPass = await runCli(['serve', root, '--port', '0', '--ssl-cert', cert, '--ssl-key', encryptedKey])
    expectOneLineUsageError(withoutPass, /--ssl-key .*encrypted-key\.pem is encrypted: give the file holding its passphrase with --ssl-pass/)
    const wrong = await runCli(['serve', root, '--port', '0', '--ssl-cert', cert, '--ssl-key', encryptedKey, '--ssl-pass', path.join(secrets, 'wrong.txt')])
    expectOneLineUsageError(wrong, /^zcopy: --ssl-pass .*wrong\.txt is not the passphrase of --ssl-key .*encrypted-key\.pem \(bad decrypt\)/)
    expect(wrong.stderr).not.toContain('not it')
    expectOneLineUsageError(await runCli(['serve', root, '--port', '0', '--ssl-cert', cert, '--ssl-key', encryptedKey, '--ssl-pass', path.join(secrets, 'none.txt')]),
      /cannot read --ssl-pass .*none\.txt: no such file/)
    expectOneLineUsageError(await runCli(['serve', root, '--port', '0', '--ssl-pass', path.join(secrets, 'pass.txt')]), /--ssl-pass goes with --ssl-cert and --ssl-key/)
  })

  // About once in 256 encryptions, the wrong passphrase decrypts to bytes whose
  // padding looks right, and OpenSSL fails on the DER instead (CI met one):
  // still the passphrase's fault, not the key file's.
  test('a wrong passphrase whose decryption passes the padding check: still named as the wrong passphrase', async () => {
    const fixtureKey = crypto.createPrivateKey(fs.readFileSync(key))
    let unlucky
    for (let i = 0; unlucky === undefined && i < 20_000; i++) {
      const pem = fixtureKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: PASSPHRASE })
      try {
        crypto.createPrivateKey({ key: pem, passphrase: 'not it' })
      } catch (err) {
        if (!/decrypt/i.test(err.message)) unlucky = pem
      }
    }
    expect(unlucky).toBeDefined()
    fs.writeFileSync(path.join(secrets, 'unlucky-key.pem'), unlucky)
    const wrong = await runCli(['serve', root, '--port', '0', '--ssl-cert', cert, '--ssl-key', path.join(secrets, 'unlucky-key.pem'), '--ssl-pass', path.join(secrets, 'wrong.txt')])
    expectOneLineUsageError(wrong, /^zcopy: --ssl-pass .*wrong\.txt is not the passphrase of --ssl-key .*unlucky-key\.pem/)
  })

  test('a file that holds no certificate or no key: one line naming the file and what is wrong, exit code 2', async () => {
    expectOneLineUsageError(await runCli(['serve', root, '--port', '0', '--ssl-cert', key, '--ssl-key', cert]),
      /^zcopy: --ssl-cert .*localhost-key\.pem holds no PEM certificate \(-----BEGIN CERTIFICATE-----\)/)
    expectOneLineUsageError(await runCli(['serve', root, '--port', '0', '--ssl-cert', cert, '--ssl-key', cert]),
      /^zcopy: --ssl-key .*localhost-cert\.pem holds no PEM private key \(-----BEGIN PRIVATE KEY-----\)/)
    for (const result of [
      await runCli(['serve', root, '--port', '0', '--ssl-cert', key, '--ssl-key', cert]),
      await runCli(['serve', root, '--port', '0', '--ssl-cert', cert, '--ssl-key', cert])
    ]) expect(result.stderr).not.toMatch(/routines|error:[0-9A-F]{8}/)
  })
})
