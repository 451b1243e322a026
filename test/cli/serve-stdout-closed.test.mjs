// zcopy serve whose stdout closes (the reader of its pipe gone: `zcopy serve |
// head`, a log shipper killed) keeps serving, as nginx does when it cannot
// write its log: the access log stops, one warning goes to stderr. Before, the
// next log line's EPIPE was an unhandled 'error' and the server exited.
import { rmSync } from 'node:fs'
import { expect, test } from 'vitest'
import { makeRoot, startServe } from './serve-helpers.mjs'

test('stdout closed: the server answers on, and says so once on stderr', async () => {
  const root = makeRoot({ 'a.txt': 'hello\n' })
  const served = await startServe(root)
  const { child } = served.cli
  try {
    child.stdout.destroy() // the reader goes: the next write gets EPIPE
    for (let i = 0; i < 20; i++) {
      const res = await fetch(new URL('/a.txt', served.url))
      expect(res.status).toBe(200)
      expect(await res.text()).toBe('hello\n')
    }
    expect(child.exitCode).toBe(null)
    const { signal, stderr } = await served.stop('SIGTERM')
    expect(signal === 'SIGTERM' || signal === null).toBe(true)
    expect(stderr.split('\n').filter((line) => line.includes('stdout failed'))).toHaveLength(1)
  } finally {
    child.kill('SIGKILL')
    rmSync(root, { recursive: true, force: true })
  }
})
