import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'

// The soak script (bench/soak.js), short: 20 hostile keep-alive connections for 3 s
// against serveStatic, native and fallback. Each run takes about 6 s (a 1.5 s
// warm-up, the load, settling, close()).
const SOAK = fileURLToPath(new URL('../../bench/soak.js', import.meta.url))

let tmpdir
beforeEach(() => { tmpdir = fs.mkdtempSync(path.join(os.tmpdir(), 'zcopy-soak-test-')) })
afterEach(() => fs.rmSync(tmpdir, { recursive: true, force: true }))

async function soak (args) {
  const child = spawn(process.execPath, [SOAK, ...args], {
    env: { ...process.env, TMPDIR: tmpdir },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => { stdout += chunk })
  child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr += chunk })
  const [code] = await once(child, 'close')
  return { code, stdout, stderr }
}

function alive (pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    if (err.code === 'ESRCH') return false
    throw err
  }
}

const count = expect.any(Number)

describe('node bench/soak.js --json', () => {
  // Under `ZCOPY_NATIVE=0 vitest run` both would be the fallback: run it once.
  for (const fallback of process.env.ZCOPY_NATIVE === '0' ? [true] : [false, true]) {
    test(`${fallback ? 'fallback (streams)' : 'native'}: every byte right, the server up, close() resolved, descriptors back`, async () => {
      const { code, stdout, stderr } = await soak(['--seconds', '3', '--connections', '20', '--json', ...(fallback ? ['--fallback'] : [])])
      expect(stderr).toBe('')
      const result = JSON.parse(stdout)
      const context = `seed ${result.config.seed}: ${result.failures.join('; ')}`

      // The shape.
      expect(result).toMatchObject({
        config: { seconds: 3, connections: 20, tls: false, fallback, zeroCopy: expect.any(Boolean), seed: count, node: process.version },
        loadSeconds: count,
        requests: count,
        responses: count,
        bodiesVerified: count,
        requestsPerSecond: count,
        bytesVerified: count,
        wrongBytes: count,
        wrongResponses: count,
        resets: count,
        cutResponses: count,
        abandonedResponses: count,
        slowPauses: count,
        unexpectedCloses: count,
        stalls: count,
        server: { pid: count, up: expect.any(Boolean) },
        descriptors: { atStart: count, baseline: count, allowance: 0 },
        memory: { baseline: { rss: count, heapUsed: count } },
        close: { resolved: expect.any(Boolean) },
        filesIntact: expect.any(Boolean),
        ok: expect.any(Boolean),
        failures: expect.any(Array)
      })
      if (fallback) expect(result.config.zeroCopy).toBe(false)

      // It did what it says: many verified responses of every status, cuts, pauses.
      expect(result.responses).toBeGreaterThan(100)
      expect(result.bodiesVerified).toBeGreaterThan(50)
      expect(Object.keys(result.byStatus).sort()).toEqual(['200', '206', '304', '404', '416'])
      expect(result.resets).toBeGreaterThan(0)
      expect(result.cutResponses + result.abandonedResponses).toBeGreaterThan(0)
      expect(result.slowPauses).toBeGreaterThan(0)

      // The verdict.
      expect(result.wrongBytes, context).toBe(0)
      expect(result.wrongResponses, context).toBe(0)
      expect(result.filesIntact, context).toBe(true)
      expect(result.server.up, context).toBe(true)
      expect(result.stalls, context).toBe(0)
      expect(result.unexpectedCloses, context).toBe(0)
      expect(result.clientConnectionsLeft, context).toBe(0)
      expect(result.close.resolved, context).toBe(true)
      expect(result.descriptors.after, context).toBe(result.descriptors.baseline)
      expect(result.failures).toEqual([])
      expect(result.ok).toBe(true)
      expect(code).toBe(0)

      // Nothing left behind: the server process, the file tree.
      expect(alive(result.server.pid)).toBe(false)
      expect(fs.readdirSync(tmpdir)).toEqual([])
    })
  }
})

describe('node bench/soak.js --json over TLS (issue 23)', () => {
  for (const transport of ['--tls', '--http2']) {
    test(`${transport}: judged on everything (cuts, drops, connections and sessions left), PASS with the server protected`, async () => {
      const { code, stdout, stderr } = await soak(['--seconds', '3', '--connections', '20', '--json', transport])
      expect(stderr).toBe('')
      const result = JSON.parse(stdout)
      const context = `seed ${result.config.seed}: ${result.failures.join('; ')}`
      expect(result.config).toMatchObject({ tls: true, http2: transport === '--http2', rawNode: false })
      expect(result.responses).toBeGreaterThan(100)
      expect(Object.keys(result.byStatus).sort()).toEqual(['200', '206', '304', '404', '416'])
      expect(result.resets).toBeGreaterThan(0)
      if (transport === '--http2') expect(result.resetsByMethod.rstStream + result.resetsByMethod.goaway).toBeGreaterThan(0)
      expect(result.slowPauses).toBeGreaterThan(0)
      expect(result.wrongBytes, context).toBe(0)
      expect(result.unexpectedCloses, context).toBe(0)
      // Judged once every client connection is gone (cut at the load's end, a
      // connect still pending too): what the server keeps after that is its own.
      expect(result.clientConnectionsLeft, context).toBe(0)
      expect(result.server.connectionsLeft, context).toBe(0)
      expect(result.server.sessionsLeft, context).toBe(0)
      expect(result.descriptors.after, context).toBe(result.descriptors.baseline)
      expect(result.failures).toEqual([])
      expect(code).toBe(0)
      expect(alive(result.server.pid)).toBe(false)
    }, 60000)
  }
})
