// The internal transfer handle's settled(): true when start() already sent
// everything from the event loop (a small page-cached range to a non-blocking
// socket), which lets callers skip hooking cancellation; false while bytes are
// still to move, and always false on the JS fallback.
import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { zeroCopyAvailable } from '../../lib/engine/binding.js'
import { startFallbackTransfer, startTransfer } from '../../lib/engine/sendfile.js'
import { makeFile, makeTempDir, removeTempDir, sha256 } from '../support/files.mjs'
import { drain, socketPair } from '../support/net.mjs'

const MiB = 1024 * 1024
const head = Buffer.from('HEAD\r\n')

let dir
let small
let large
beforeAll(() => {
  dir = makeTempDir()
  small = makeFile(dir, 'small.bin', 4096)
  large = makeFile(dir, 'large.bin', 16 * MiB)
  fs.readFileSync(small.file) // in the page cache, as the eager path requires
})
afterAll(() => removeTempDir(dir))

const expected = () => ({ bytes: head.length + 4096, sha256: sha256(Buffer.concat([head, small.data])) })

function withFile (file, fn) {
  const fd = fs.openSync(file, 'r')
  return Promise.resolve(fn(fd)).finally(() => fs.closeSync(fd))
}

// Sends `head` and the small file to a fresh socket with `start` (startTransfer or
// startFallbackTransfer), checks the bytes; → whether it was settled at start.
async function sendSmall (start) {
  const { client, peer } = await socketPair()
  const received = drain(peer)
  let settled
  await withFile(small.file, async (fd) => {
    const transfer = start({ outFd: client._handle.fd, inFd: fd, offset: 0, length: 4096, head })
    settled = transfer.settled()
    await expect(transfer.done).resolves.toBe(4096)
  })
  client.end()
  expect(await received).toEqual(expected())
  return settled
}

describe.skipIf(!zeroCopyAvailable)('native transfers', () => {
  it('a small cached range to a socket is settled when start returns, bytes exact', async () => {
    expect(await sendSmall(startTransfer)).toBe(true)
  })

  it('a transfer to a stalled reader is not settled until it ends; abort() still stops it', async () => {
    const { client, peer } = await socketPair()
    peer.pause()
    try {
      await withFile(large.file, async (fd) => {
        const transfer = startTransfer({ outFd: client._handle.fd, inFd: fd, offset: 0, length: 16 * MiB })
        expect(transfer.settled()).toBe(false)
        transfer.abort()
        await expect(transfer.done).rejects.toMatchObject({ code: 'ABORT_ERR' })
        expect(transfer.settled()).toBe(true)
      })
    } finally {
      client.destroy()
      peer.destroy()
    }
  })
})

it('a fallback transfer is never settled at start', async () => {
  expect(await sendSmall(startFallbackTransfer)).toBe(false)
})
