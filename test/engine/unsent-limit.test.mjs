// A TCP destination of a transfer longer than 256 KiB keeps at most that much
// unsent behind what the peer's window lets out (TCP_NOTSENT_LOWAT, set by the
// addon: src/tuning.h, kUnsentLimit). Read with ss(8) on real loopback
// connections whose client stops reading; without the limit the kernel queues
// megabytes there, which the client's ACKs then have to transmit.
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pipeFile } from '../../lib/index.js'
import { zeroCopyAvailable } from '../../lib/engine/binding.js'
import { makeFile, makeTempDir, removeTempDir, sha256 } from '../support/files.mjs'
import { drain, settledNotSent, socketPair, ssInstalled } from '../support/net.mjs'

const KiB = 1024
const MiB = 1024 * KiB
const LIMIT = 256 * KiB
// tcp_sendmsg checks the limit before each segment it builds: one segment of at
// most 64 KiB may go past it.
const SLACK = 64 * KiB
const systemLimit = Number(readFileSync('/proc/sys/net/ipv4/tcp_notsent_lowat', 'utf8'))

let dir
let big
let small
beforeAll(() => {
  dir = makeTempDir()
  big = makeFile(dir, 'big.bin', 16 * MiB)
  small = makeFile(dir, 'small.bin', 200 * KiB)
})
afterAll(() => removeTempDir(dir))

// Needs the addon (the fallback writes through Node, which cannot set the
// option) and a system whose own limit is not already as low.
describe.skipIf(!zeroCopyAvailable || !ssInstalled || systemLimit <= LIMIT)('TCP_NOTSENT_LOWAT on the destination', () => {
  it('a 16 MiB transfer to a client that stops reading leaves at most 256 KiB unsent; every byte arrives once it reads', async () => {
    const { client, peer } = await socketPair()
    client.pause()
    const sending = pipeFile(big.file, peer)
    const queued = await settledNotSent(peer.localPort, peer.remotePort)
    expect(queued).toBeGreaterThan(0)
    expect(queued).toBeLessThanOrEqual(LIMIT + SLACK)
    const received = drain(client)
    client.resume()
    expect((await sending).bytes).toBe(16 * MiB)
    peer.end()
    expect(await received).toEqual({ bytes: 16 * MiB, sha256: sha256(big.data) })
  })

  it('the limit stays on the socket: later writes through Node queue no more; a transfer of 256 KiB or less leaves a socket as it was', async () => {
    const chunk = Buffer.alloc(8 * MiB, 1)
    const limited = await socketPair()
    const unlimited = await socketPair()
    for (const { client } of [limited, unlimited]) client.pause()
    const [bigReceived, smallReceived] = [drain(limited.client), drain(unlimited.client)]

    // Each client reads its transfer, then stops again for the plain write.
    limited.client.resume()
    unlimited.client.resume()
    await pipeFile(big.file, limited.peer)
    await pipeFile(small.file, unlimited.peer)
    await sleep(100)
    limited.client.pause()
    unlimited.client.pause()
    await sleep(100)

    limited.peer.write(chunk)
    unlimited.peer.write(chunk)
    expect(await settledNotSent(limited.peer.localPort, limited.peer.remotePort)).toBeLessThanOrEqual(LIMIT + SLACK)
    // Without the limit the kernel queues what its send buffer, autotuned to
    // the connection, takes: 0.9 to several MiB on loopback (953,344 bytes on a
    // CI run after the 200 KiB transfer).
    expect(await settledNotSent(unlimited.peer.localPort, unlimited.peer.remotePort)).toBeGreaterThan(2 * (LIMIT + SLACK))

    const closed = Promise.all([once(limited.peer, 'close'), once(unlimited.peer, 'close')])
    for (const { client, peer } of [limited, unlimited]) {
      client.resume()
      peer.end()
    }
    const expected = (file) => sha256(Buffer.concat([file.data, chunk]))
    expect(await bigReceived).toEqual({ bytes: 16 * MiB + chunk.length, sha256: expected(big) })
    expect(await smallReceived).toEqual({ bytes: 200 * KiB + chunk.length, sha256: expected(small) })
    await closed
  })
})
