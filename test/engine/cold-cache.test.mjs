// The event loop never waits for the disk: a small range goes out from the
// event loop only when cachestat(2) says all of it is in the page cache. A
// file just evicted from the cache (posix_fadvise DONTNEED, through a tiny C
// helper compiled here) goes through the pool instead, bytes exact; once read,
// it is cached and the next transfer is sent from the loop.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { native, zeroCopyAvailable } from '../../lib/engine/binding.js'
import { startTransfer } from '../../lib/engine/sendfile.js'
import { makeFile, makeTempDir, removeTempDir, sha256 } from '../support/files.mjs'
import { drain, socketPair } from '../support/net.mjs'

const SIZE = 128 * 1024 // under the 256 KiB the event loop sends itself
const helperSource = fileURLToPath(new URL('./children/evict.c', import.meta.url))

let dir
let small
let evict = null // → pages of the file still resident after eviction
const noEvict = 'no C compiler (cc) to build the eviction helper'
beforeAll(() => {
  dir = makeTempDir()
  small = makeFile(dir, 'small.bin', SIZE)
  const helper = path.join(dir, 'evict')
  try {
    execFileSync('cc', ['-O2', '-o', helper, helperSource], { stdio: 'ignore' })
    evict = async () => {
      // Pages a socket still holds (sent, not yet acknowledged and freed) cannot
      // be dropped at once; on a loaded machine that can take a while.
      for (let tries = 1; ; tries++) {
        const resident = Number(execFileSync(helper, [small.file], { encoding: 'utf8' }))
        if (resident === 0 || tries === 100) return resident
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
  } catch {}
})
afterAll(() => removeTempDir(dir))

// Sends the small file to a fresh socket; → whether it was all sent during start().
async function send () {
  const { client, peer } = await socketPair()
  const received = drain(peer)
  const fd = fs.openSync(small.file, 'r')
  let settledAtStart
  try {
    const transfer = startTransfer({ outFd: client._handle.fd, inFd: fd, offset: 0, length: SIZE })
    settledAtStart = transfer.settled()
    await expect(transfer.done).resolves.toBe(SIZE)
  } finally {
    fs.closeSync(fd)
  }
  client.end()
  expect(await received).toEqual({ bytes: SIZE, sha256: sha256(small.data) })
  client.destroy() // no socket is left holding the file's pages
  peer.destroy()
  return settledAtStart
}

describe.skipIf(!zeroCopyAvailable)('a small range not in the page cache', () => {
  it('goes through the pool, then, cached, from the event loop', async (context) => {
    if (evict === null) return context.skip(noEvict)
    const resident = await evict()
    // tmpfs and the like keep a file's pages: nothing to evict there.
    if (resident > 0) return context.skip(`the page cache kept ${resident} pages of the file (tmpfs?)`)
    expect(await send()).toBe(false)
    const cachestat = native.probeKernel(dir).cachestat.present
    // Read once by sendfile, it is cached now: the loop sends it (with cachestat, Linux 6.5+).
    expect(await send()).toBe(cachestat)
    // Evicted again: the pool again (unless the kernel would not drop the pages).
    const left = await evict()
    if (left > 0) return context.skip(`the page cache kept ${left} pages of the file after it was sent`)
    expect(await send()).toBe(false)
  })
})
