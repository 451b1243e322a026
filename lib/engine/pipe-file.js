'use strict'

// zcopy.pipeFile(source, destination, { start, end, head, signal, onProgress })
//   → Promise<{ bytes, zeroCopy }>
// Moves a byte range of a file, after an optional head from memory, to a socket,
// fd, path, WriteStream or any Writable: sendfile(2) where the kernel can take the
// destination (copy_file_range(2) into a file, the addon opening paths itself:
// see openingRequest), streams otherwise. The payload passed around below is the range
// ({ start, length, regular }) and its head (a Buffer or null). It never
// ends or closes a destination it did not open; on failure it destroys a stream
// destination (its bytes would be incomplete), as stream.pipeline does.

const fs = require('node:fs')
const fsp = require('node:fs/promises')
const { once } = require('node:events')
const { fileURLToPath } = require('node:url')
const { promisify } = require('node:util')
const { zeroCopyAvailable } = require('./binding')
const { DescriptorTransfer, SocketTransfer, holdSocket, toStream } = require('./descriptor-transfer')
const { Job, startFallbackTransfer, startOpeningTransfer } = require('./sendfile')
const { SEND_FILE, classifyDestination, sendsFiles, supportsZeroCopy } = require('./destination')
const { byteRange, isPathLike, openSource, validateSource } = require('./source')
const { flushed } = require('./copy')
const { abortError, clientClosedError, invalidArgType, outOfRange, truncatedError } = require('./errors')
const {
  validateAbortSignal,
  validateInteger,
  validateObject,
  validateOptionalFunction
} = require('./validate')

const close = promisify(fs.close)

const noop = () => {}

function validateOptions (options) {
  validateObject('options', options)
  const start = options.start === undefined ? 0 : validateInteger('options.start', options.start)
  const end = options.end === undefined || options.end === Infinity
    ? Infinity
    : validateInteger('options.end', options.end)
  if (start > end) throw outOfRange('options.start', `<= "options.end" (here: ${end})`, start)
  return {
    start,
    end,
    head: validateHead(options.head),
    signal: validateAbortSignal('options.signal', options.signal),
    onProgress: validateOptionalFunction('options.onProgress', options.onProgress)
  }
}

// → a Buffer with the head's bytes, or null for none. Strings are UTF-8.
function validateHead (head) {
  if (head === undefined || head === null) return null
  let bytes
  if (typeof head === 'string') bytes = Buffer.from(head)
  else if (ArrayBuffer.isView(head)) bytes = Buffer.from(head.buffer, head.byteOffset, head.byteLength)
  else throw invalidArgType('options.head', 'a string, a Buffer, a TypedArray or a DataView', head)
  return bytes.length === 0 ? null : bytes
}

// Progress tracking shared by every path: how many bytes reached the destination.
function progress (onProgress) {
  const state = {
    bytes: 0,
    report (bytes) {
      state.bytes = bytes
      if (onProgress) onProgress(bytes)
    }
  }
  return state
}

// What every path below moves, given to each as one object (a spec): { job,
// inFd, payload, tracker }, the transfer's Job, the source descriptor, the
// range and head, and the progress tracker.

async function toFileStream (spec, stream) {
  const { job, payload } = spec
  if (stream.fd === null) await job.wait(once(stream, 'ready'))
  // Its queued writes first; with none queued or in flight, no barrier (a write
  // of nothing would cost a thread-pool round trip).
  if (stream.writableLength > 0 || stream.destroyed || stream.writableEnded) await job.wait(flushed(stream, '', null))
  try {
    const result = await new DescriptorTransfer(spec).to(stream.fd)
    stream.bytesWritten += (payload.head === null ? 0 : payload.head.length) + result.bytes
    return result
  } catch (err) {
    stream.destroy()
    throw err
  }
}

async function toPath (spec, path) {
  const handle = await fsp.open(path, 'w')
  try {
    spec.job.check()
    return await deliver(spec, { kind: 'fd', fd: handle.fd }, null)
  } finally {
    await handle.close()
  }
}

// The caller's descriptor and a source with no known length (a pipe, a device):
// the JS loop with fs.write on the caller's fd, never a stream around it (a
// destroyed stream would take the fd, or throw EBADF/ERR_STREAM_DESTROYED from a
// write still in flight).
function toCallerFd ({ job, inFd, payload, tracker }, fd) {
  const { head } = payload
  return job.run((job) => startFallbackTransfer({ outFd: fd, inFd, offset: 0, length: null, onProgress: tracker.report, head }, job))
    .then((bytes) => ({ bytes, zeroCopy: false }))
}

// Moves a spec to a classified destination, picking the path; `hold` is the
// socket's from holdFor, or null. A non-regular source (a pipe, a device) has
// no fixed length for sendfile and always goes through streams or the JS loop.
function deliver (spec, target, hold) {
  const { regular } = spec.payload
  switch (target.kind) {
    case 'path':
      return toPath(spec, target.path)
    case 'fd':
      if (regular) return new DescriptorTransfer(spec).to(target.fd)
      return toCallerFd(spec, target.fd)
    case 'socket':
      if (hold && regular) return new SocketTransfer(spec, { socket: target.stream, hold }).start()
      if (hold) hold.release()
      return toStream(spec, target.stream)
    case 'file-stream':
      if (regular && supportsZeroCopy(target)) return toFileStream(spec, target.stream)
      return toStream(spec, target.stream)
    default:
      return toStream(spec, target.stream)
  }
}

// The socket hold for a destination that will get sendfile, else null.
function holdFor (target) {
  return target.kind === 'socket' && supportsZeroCopy(target) ? holdSocket(target.stream) : null
}

function jobFor (target, signal) {
  return new Job(signal, target.kind === 'socket' ? target.stream : null)
}

// A source this transfer opened is closed once nothing it started still reads
// it; the promise does not wait for a read that an abort left behind.
async function closeSource (job, file) {
  const idle = job.idle()
  if (idle === null) return file.close()
  idle.then(() => file.close()).catch(noop)
}

// File to file, by the addon opening the paths itself: a destination path (any
// source), or a source path into a caller's descriptor. The pool job that
// copies the first chunk opens them and the one that copies the last closes
// them, so a small copy is a single pool job, as fs.copyFile is (see
// startOpeningTransfer); a file destination takes copy_file_range(2). → the
// native transfer's arguments, or null when the classic path applies (no
// addon, another destination, a source descriptor that is not a regular file,
// a path only Node's own open() can judge).
function openingRequest (source, target, start, end) {
  if (!zeroCopyAvailable) return null
  const request = {
    outFd: -1,
    inFd: -1,
    length: 0,
    ends: { sourcePath: undefined, destinationPath: undefined, end: end === Infinity ? -1 : end }
  }
  if (target.kind === 'path') {
    request.ends.destinationPath = nativePath(target.path)
    if (request.ends.destinationPath === null) return null
  } else if (target.kind === 'fd' && isPathLike(source)) {
    request.outFd = target.fd
  } else {
    return null
  }
  if (isPathLike(source)) {
    request.ends.sourcePath = nativePath(source)
    return request.ends.sourcePath === null ? null : request
  }
  // The caller's descriptor or FileHandle: fstat reads the in-memory inode.
  request.inFd = typeof source === 'number' ? source : source.fd
  const range = byteRange(fs.fstatSync(request.inFd), start, end)
  if (!range.regular) return null
  request.length = range.length
  return request
}

// A path as the addon opens it: a string or a Buffer without NUL bytes, a file:
// URL converted as fs does; else null (fs.promises.open then reports it).
function nativePath (path) {
  if (path instanceof URL) {
    try {
      path = fileURLToPath(path)
    } catch {
      return null
    }
  }
  return path.includes(typeof path === 'string' ? '\u0000' : 0) ? null : path
}

// Plain promise chains, as DescriptorTransfer: this is the whole of a small copy's
// JavaScript. Without a signal nothing can abort it, so no Job owns it until a
// hand-over needs one. The caller's onProgress goes to the addon as is (no
// callback into JavaScript per chunk when there is none): the addon hands over
// only before any byte moved, so nothing here needs the count.
function openingTransfer (target, signal, request, options) {
  const { outFd, inFd, length, ends } = request
  const { start, head, onProgress } = options
  const job = signal ? jobFor(target, signal) : null
  let handle = null
  const begin = (job) => {
    handle = startOpeningTransfer({ outFd, inFd, offset: start, length, onProgress, head }, ends, job)
    return handle
  }
  return (job === null ? begin(null).done : job.run(begin)).then((bytes) => {
    if (job !== null) job.finish()
    return { bytes, zeroCopy: true }
  }, (err) => {
    const [inOpened, outOpened] = handle === null ? [-1, -1] : handle.takeOpened()
    if (inOpened < 0 && outOpened < 0) {
      if (job !== null) job.finish()
      throw err
    }
    const owner = job === null ? jobFor(target, null) : job
    return owner.finishAfter(handOver(owner, err, { handle, inFd, inOpened, outOpened }, target, options))
  })
}

// The addon stopped before any byte and handed over what it opened: a FIFO or a
// device (ERR_ZCOPY_NOT_REGULAR) goes the classic way on those descriptors; a
// pair the kernel refuses (a caller's O_APPEND descriptor) through the JS loop.
// `handed` is the addon's handle and { inFd, inOpened, outOpened } (-1: not
// opened by it). Closes what was handed over (the destination first, as toPath
// does).
async function handOver (job, err, { handle, inFd, inOpened, outOpened }, target, { start, end, head, onProgress }) {
  const tracker = progress(onProgress)
  const destination = outOpened >= 0 ? { kind: 'fd', fd: outOpened } : target
  if (inOpened >= 0) inFd = inOpened
  try {
    job.check()
    const range = byteRange(fs.fstatSync(inFd), start, end)
    if (err.code === 'ERR_ZCOPY_NOT_REGULAR') {
      return await deliver({ job, inFd, payload: { ...range, head }, tracker }, destination, null)
    }
    const rest = head === null ? null : head.subarray(handle.headWritten())
    const outFd = destination.fd
    const { length } = range
    const bytes = await job.run((job) => startFallbackTransfer({ outFd, inFd, offset: start, length, onProgress: tracker.report, head: rest }, job))
    return { bytes, zeroCopy: false }
  } finally {
    if (outOpened >= 0) await close(outOpened)
    if (inOpened >= 0) await closeSource(job, { close: () => close(inOpened) })
  }
}

// → a promise, never a synchronous throw: the argument checks are done.
function transfer (source, target, options) {
  const { signal } = options
  if (signal && signal.aborted) return Promise.reject(abortError(signal))
  let request
  try {
    request = openingRequest(source, target, options.start, options.end)
  } catch (err) {
    return Promise.reject(err) // fstat of a closed descriptor
  }
  if (request !== null) return openingTransfer(target, signal, request, options)
  return classicTransfer(source, target, options)
}

async function classicTransfer (source, target, { start, end, head, signal, onProgress }) {
  const job = jobFor(target, signal)
  const hold = holdFor(target)
  let file = null
  const opening = openSource(source)
  try {
    file = await (signal ? job.wait(opening) : opening)
    job.check()
    // fstat of an open descriptor reads the in-memory inode, never the disk:
    // done inline, it saves small transfers a thread-pool round trip.
    const payload = { ...byteRange(fs.fstatSync(file.fd), start, end), head }
    return await deliver({ job, inFd: file.fd, payload, tracker: progress(onProgress) }, target, hold)
  } finally {
    job.finish()
    if (hold) hold.release()
    if (file !== null) await closeSource(job, file)
    else opening.then((file) => file.close(), noop).catch(noop) // opened after an abort
  }
}

function pipeFile (source, destination, options = {}) {
  validateSource(source)
  const target = classifyDestination(destination)
  return transfer(source, target, validateOptions(options))
}

// Bytes [start, start + length) of an open regular file, after `head` (a Buffer or
// null), to a destination, with pipeFile's guarantees. For callers that already
// hold the file's fstat and the exact range (the HTTP layer's open-file cache): no
// open, no fstat, no argument checks. Resolves with { bytes, zeroCopy }; a
// rejection's error carries `bytesWritten`, what reached the destination before.
// A destination that sends files itself may take the range on alone: then
// `later` too, its promise of how the range ended (destination.js, SEND_FILE).
function sendRange (fd, start, length, destination, head = null) {
  if (head === null && sendsFiles(destination)) return sendToSender(fd, start, length, destination)
  const target = classifyDestination(destination)
  const job = jobFor(target, null)
  const hold = holdFor(target)
  const tracker = progress()
  const sending = deliver({ job, inFd: fd, payload: { start, length, regular: true, head }, tracker }, target, hold)
  // The socket path settles through its hold, which finishes the job.
  const settled = hold !== null ? sending : job.finishAfter(sending)
  return settled.catch((err) => {
    if (err !== null && typeof err === 'object' && err.bytesWritten === undefined) err.bytesWritten = tracker.bytes
    throw err
  })
}

// A destination that sends files itself (SEND_FILE): a connection gone
// mid-range rejects as a socket's does (EPIPE), a file that ended before the
// range as a read of it does (ERR_ZCOPY_TRUNCATED), with the bytes sent.
function sendToSender (fd, start, length, destination) {
  return Promise.resolve(destination[SEND_FILE](fd, start, length)).then(({ bytes, complete, truncated, later }) => {
    if (complete) return later === undefined ? { bytes, zeroCopy: true } : { bytes, zeroCopy: true, later }
    const err = truncated
      ? truncatedError(start + bytes, length - bytes)
      : clientClosedError()
    throw Object.assign(err, { bytesWritten: bytes })
  })
}

module.exports = { pipeFile, sendRange }
