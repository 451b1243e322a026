'use strict'

// zcopy.pipeFile(source, destination, { start, end, head, signal, onProgress })
//   → Promise<{ bytes, zeroCopy }>
// Moves a byte range of a file, after an optional head from memory, to a socket,
// fd, path, WriteStream or any Writable: sendfile(2) where the kernel can take the
// destination, streams otherwise. The payload passed around below is the range
// ({ start, length, regular }) and its head (a Buffer or null). It never
// ends or closes a destination it did not open; on failure it destroys a stream
// destination (its bytes would be incomplete), as stream.pipeline does.

const fs = require('node:fs')
const fsp = require('node:fs/promises')
const { once } = require('node:events')
const { zeroCopyAvailable } = require('./binding')
const { startFallbackTransfer, startTransfer } = require('./sendfile')
const { classifyDestination, socketFd, supportsZeroCopy } = require('./destination')
const { byteRange, openSource, validateSource } = require('./source')
const { flushed, streamCopy } = require('./stream-copy')
const { abortError, invalidArgType, outOfRange, prematureCloseError } = require('./errors')
const {
  validateAbortSignal,
  validateInteger,
  validateObject,
  validateOptionalFunction
} = require('./validate')

// Errors that mean "this descriptor pair cannot sendfile" (O_APPEND files, odd
// devices) rather than "the transfer failed": retried through the JS copy loop.
const UNSUPPORTED = new Set(['EINVAL', 'ENOSYS', 'EOPNOTSUPP'])

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

// Waits for a started transfer with the caller's sources of cancellation hooked to
// it (`hook(abort)` connects them and returns the function that disconnects them);
// a transfer that already settled has nothing to cancel. → Promise<bytes>
function run (transfer, hook) {
  if (transfer.settled()) return transfer.done
  const unhook = hook(transfer.abort)
  return transfer.done.then(
    (bytes) => { unhook(); return bytes },
    (err) => { unhook(); throw err })
}

// sendfile to a descriptor, falling back to the JS loop when the kernel refuses
// the pair. Plain promise chains rather than async functions: a small file sent
// from the event loop passes through here on every HTTP request, and each async
// frame costs a promise and a suspension.
function toDescriptor (outFd, inFd, payload, tracker, hook) {
  const { start, length, head } = payload
  const transfer = startTransfer(outFd, inFd, start, length, tracker.report, head)
  return run(transfer, hook).then(
    (bytes) => ({ bytes, zeroCopy: zeroCopyAvailable }),
    (err) => {
      if (!UNSUPPORTED.has(err.code) || tracker.bytes > 0) throw err
      const rest = head === null ? null : head.subarray(transfer.headWritten())
      return run(startFallbackTransfer(outFd, inFd, start, length, tracker.report, rest), hook)
        .then((bytes) => ({ bytes, zeroCopy: false }))
    })
}

// Cancellation by the user's signal alone; an abort rejects with its AbortError.
function hookSignal (signal) {
  return (abort) => {
    if (!signal) return noop
    signal.addEventListener('abort', abort, { once: true })
    return () => signal.removeEventListener('abort', abort)
  }
}

async function toDescriptorWithSignal (outFd, inFd, payload, signal, tracker) {
  try {
    return await toDescriptor(outFd, inFd, payload, tracker, hookSignal(signal))
  } catch (err) {
    throw signal && signal.aborted ? abortError(signal) : err
  }
}

// Keeps Node's own writes off a socket while the kernel writes to it. What was
// queued before the call goes out first (a write barrier); what is written after
// the call waits, corked, until the file bytes are in. Taken synchronously, at
// call. `ready` is null when the socket was corked at once (nothing was queued),
// else a promise of that moment. toSocket releases it when the transfer settles;
// release() may come twice (pipeFile's cleanup also covers a source that fails
// to open).
function holdSocket (socket, signal) {
  let corked = false
  const cork = () => {
    socket.cork()
    corked = true
  }
  let ready = null
  if (socket.destroyed || socket.writableEnded) {
    ready = Promise.reject(prematureCloseError())
  } else if (!socket.connecting && socket.writableLength === 0) {
    cork()
  } else {
    ready = flushed(socket, '', signal).then(cork)
  }
  if (ready !== null) ready.catch(noop) // observed by toSocket, unless the source fails to open first
  return {
    ready,
    release () {
      if (corked) socket.uncork()
      corked = false
    }
  }
}

// sendfile on the socket's descriptor once the hold is taken, released as soon as
// the transfer settles; a socket closed by Node mid-transfer aborts it, and a
// failed transfer destroys the socket (its peer got a partial body).
function toSocket (socket, hold, inFd, payload, signal, tracker) {
  if (hold.ready !== null) return hold.ready.then(() => sendToSocket(socket, hold, inFd, payload, signal, tracker))
  return sendToSocket(socket, hold, inFd, payload, signal, tracker)
}

function sendToSocket (socket, hold, inFd, payload, signal, tracker) {
  const fd = socketFd(socket)
  if (socket.destroyed || fd < 0) {
    hold.release()
    return Promise.reject(prematureCloseError())
  }
  const hook = (abort) => {
    const unhookSignal = hookSignal(signal)(abort)
    socket.once('close', abort)
    return () => {
      socket.off('close', abort)
      unhookSignal()
    }
  }
  return toDescriptor(fd, inFd, payload, tracker, hook).then((result) => {
    hold.release()
    return result
  }, (err) => {
    hold.release()
    const closed = socket.destroyed
    socket.destroy()
    if (signal && signal.aborted) throw abortError(signal)
    throw closed && err.code === 'ABORT_ERR' ? prematureCloseError() : err
  })
}

async function toFileStream (stream, inFd, payload, signal, tracker) {
  if (stream.fd === null) await once(stream, 'ready', { signal })
  await flushed(stream, '', signal)
  try {
    const result = await toDescriptorWithSignal(stream.fd, inFd, payload, signal, tracker)
    stream.bytesWritten += (payload.head === null ? 0 : payload.head.length) + result.bytes
    return result
  } catch (err) {
    stream.destroy()
    throw err
  }
}

async function toPath (path, inFd, payload, signal, tracker) {
  const handle = await fsp.open(path, 'w')
  try {
    return await deliver({ kind: 'fd', fd: handle.fd }, null, inFd, payload, signal, tracker)
  } finally {
    await handle.close()
  }
}

async function toStream (stream, inFd, payload, signal, tracker) {
  const { start, length, head } = payload
  const bytes = await streamCopy(inFd, start, length, stream, { signal, onProgress: tracker.report, head })
  return { bytes, zeroCopy: false }
}

// Picks the path for a classified destination; a non-regular source (a pipe, a
// device) has no fixed length for sendfile and always goes through streams.
function deliver (target, hold, inFd, payload, signal, tracker) {
  switch (target.kind) {
    case 'path':
      return toPath(target.path, inFd, payload, signal, tracker)
    case 'fd':
      if (payload.regular) return toDescriptorWithSignal(target.fd, inFd, payload, signal, tracker)
      return toStream(fs.createWriteStream(null, { fd: target.fd, autoClose: false }), inFd, payload, signal, tracker)
    case 'socket':
      if (hold && payload.regular) return toSocket(target.stream, hold, inFd, payload, signal, tracker)
      if (hold) hold.release()
      return toStream(target.stream, inFd, payload, signal, tracker)
    case 'file-stream':
      if (payload.regular && supportsZeroCopy(target)) return toFileStream(target.stream, inFd, payload, signal, tracker)
      return toStream(target.stream, inFd, payload, signal, tracker)
    default:
      return toStream(target.stream, inFd, payload, signal, tracker)
  }
}

// The socket hold for a destination that will get sendfile, else null.
function holdFor (target, signal) {
  return target.kind === 'socket' && supportsZeroCopy(target) ? holdSocket(target.stream, signal) : null
}

async function transfer (source, target, { start, end, head, signal, onProgress }) {
  if (signal && signal.aborted) throw abortError(signal)
  const hold = holdFor(target, signal)
  try {
    const file = await openSource(source)
    try {
      // fstat of an open descriptor reads the in-memory inode, never the disk:
      // done inline, it saves small transfers a thread-pool round trip.
      const payload = { ...byteRange(fs.fstatSync(file.fd), start, end), head }
      return await deliver(target, hold, file.fd, payload, signal, progress(onProgress))
    } finally {
      await file.close()
    }
  } finally {
    if (hold) hold.release()
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
// open, no fstat, no argument checks. Resolves with { bytes, zeroCopy }.
function sendRange (fd, start, length, destination, head = null) {
  const target = classifyDestination(destination)
  return deliver(target, holdFor(target, null), fd, { start, length, regular: true, head }, null, progress())
}

module.exports = { pipeFile, sendRange }
