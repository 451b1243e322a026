// Compiled (not run) by types.test.mjs: the public API as a TypeScript user sees it.
import * as http from 'node:http'
import * as net from 'node:net'
import * as fs from 'node:fs'
import { createReadStream, loadError, nativeLane, pipeFile, protectServer, sendFile, sendfile, serveStatic, zeroCopyAvailable } from 'zcopy'
import type { NativeLane, NativeLaneAddress, NativeLaneAnswer, ZcopyLoadError, ZcopyLoadErrorCode } from 'zcopy'

const available: boolean = zeroCopyAvailable
const why: ZcopyLoadError | null = loadError
if (loadError !== null) {
  const code: ZcopyLoadErrorCode = loadError.code
  const message: string = loadError.message
  if (code === 'ZCOPY_NATIVE_DISABLED' || code === 'ZCOPY_NATIVE_NOT_FOUND' || code === 'ERR_DLOPEN_FAILED') void message
}
// @ts-expect-error loadError is read-only
loadError = null

async function main (socket: net.Socket): Promise<void> {
  const bytes: number = await sendfile(1, 0, 0, 10, { signal: AbortSignal.timeout(1000), onProgress: (n: number) => n })
  const result = await pipeFile('file.bin', socket, { start: 0, end: 99, head: 'HEAD\r\n', onProgress: (n) => n })
  const moved: number = result.bytes
  const zeroCopy: boolean = result.zeroCopy
  await pipeFile(await fs.promises.open('file.bin'), fs.createWriteStream('copy.bin'))
  const stream = createReadStream('file.bin', { start: 10 })
  const handedOff: boolean = stream.zeroCopy
  stream.pipe(socket)
  void [available, why, bytes, moved, zeroCopy, handedOff]
}

const middleware = serveStatic('public', {
  maxAge: '1d',
  immutable: true,
  dotfiles: 'deny',
  index: ['index.html'],
  precompressed: true,
  maxWatches: 256,
  onSent: (res, sent) => { void [res, sent.bytes, sent.zeroCopy] }
})
const { openFiles, watchedDirectories, memoryBytes }: { openFiles: number, watchedDirectories: number, memoryBytes: number } = middleware.stats()
void [openFiles, watchedDirectories, memoryBytes]

const compressing = serveStatic('public', {
  compress: { encodings: ['br', 'gzip'], types: ['text/*', 'application/*+json'], threshold: 1024, maxSize: 8 << 20, cacheDir: false, cacheBytes: 1 << 28, concurrency: 1, cpuBudget: 10_000 }
})
serveStatic('public', { compress: true, precompressed: true })
serveStatic('public', { compress: { types: (type: string) => type.startsWith('text/') } })
const variants = compressing.stats().compressed
if (variants !== undefined) void [variants.made, variants.served, variants.identityWhilePending, variants.evicted, variants.bytesSaved, variants.cheap, variants.overBudget, variants.cpuMs, variants.cacheDir]
const idle: Promise<void> = compressing.compressed()
void idle
sendFile(null as any, null as any, '/srv/app.js', { compress: true })
// An ETag of the bytes (replicas agree whatever the mtimes), the default one, or none.
serveStatic('public', { etag: 'content', compress: true })
sendFile(null as any, null as any, '/srv/app.js', { etag: 'content' })
serveStatic('public', { etag: false })
// @ts-expect-error: 'content' is the only other kind
serveStatic('public', { etag: 'strong' })
// @ts-expect-error: not a coding zcopy makes
serveStatic('public', { compress: { encodings: ['deflate'] } })

http.createServer((req, res) => {
  middleware(req, res, () => {
    sendFile(req, res, '/srv/file.txt').catch((err: { status?: number }) => {
      res.statusCode = err.status ?? 500
      res.end()
    })
  })
})

const guarded: http.Server = protectServer(http.createServer(), { timeout: 30000 })
void guarded

async function inFront (): Promise<void> {
  const server = http.createServer()
  const lane: NativeLane = nativeLane(server, { onAnswer: (answer: NativeLaneAnswer) => { void answer.status } })
  server.on('request', serveStatic('/srv/www', { onReplayable: lane.offer }))
  const address: NativeLaneAddress = await lane.listen(8080, '127.0.0.1')
  const again: NativeLaneAddress = await lane.listen({ fd: 3, host: '0.0.0.0' })
  void address.port
  void again.family
  await lane.close(1000)
  const inFlight: number = lane.answersInFlight()
  const held: number = lane.connections()
  void inFlight
  void held
}
void inFront

void main
