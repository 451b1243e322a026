'use strict'

// zcopy.pipeFile(source, destination, { start, end, signal, onProgress })
//   → Promise<{ bytes, zeroCopy }>
// Moves a byte range of a file to a socket, fd, path, WriteStream or any Writable:
// sendfile(2) where the kernel can take the destination, streams otherwise. It never
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
const { abortError, outOfRange, prematureCloseError } = require('./errors')
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
    signal: validateAbortSignal('options.signal', options.signal),
    onProgress: validateOptionalFunction('options.onProgress', options.onProgress)
  }
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

// sendfile to a descriptor, falling back to the JS loop when the kernel refuses
// the pair. `hook(abort)` connects the caller's sources of cancellation to the
// running transfer and returns the function that disconnects them.
async function toDescriptor (outFd, inFd, range, tracker, hook) {
  const run = async (transfer) => {
    const unhook = hook(transfer.abort)
    try {
      return await transfer.done
    } finally {
      unhook()
    }
  }
  try {
    const bytes = await run(startTransfer(outFd, inFd, range.start, range.length, tracker.report))
    return { bytes, zeroCopy: zeroCopyAvailable }
  } catch (err) {
    if (!UNSUPPORTED.has(err.code) || tracker.bytes > 0) throw err
    const bytes = await run(startFallbackTransfer(outFd, inFd, range.start, range.length, tracker.report))
    return { bytes, zeroCopy: false }
  }
}

// Cancellation by the user's signal alone; an abort rejects with its AbortError.
function hookSignal (signal) {
  return (abort) => {
    if (!signal) return noop
    signal.addEventListener('abort', abort, { once: true })
    return () => signal.removeEventListener('abort', abort)
  }
}

async function toDescriptorWithSignal (outFd, inFd, range, signal, tracker) {
  try {
    return await toDescriptor(outFd, inFd, range, tracker, hookSignal(signal))
  } catch (err) {
    throw signal && signal.aborted ? abortError(signal) : err
  }
}

// Keeps Node's own writes off a socket while the kernel writes to it. What was
// queued before the call goes out first (a write barrier); what is written after
// the call waits, corked, until the file bytes are in. Taken synchronously, at call.
function holdSocket (socket, signal) {
  let corked = false
  const cork = () => {
    socket.cork()
    corked = true
  }
  let ready
  if (socket.destroyed || socket.writableEnded) {
    ready = Promise.reject(prematureCloseError())
  } else if (!socket.connecting && socket.writableLength === 0) {
    ready = Promise.resolve(cork())
  } else {
    ready = flushed(socket, '', signal).then(cork)
  }
  ready.catch(noop) // observed by toSocket, unless the source fails to open first
  return {
    ready,
    release () {
      if (corked) socket.uncork()
      corked = false
    }
  }
}

// sendfile on the socket's descriptor; a socket closed by Node mid-transfer aborts
// it, and a failed transfer destroys the socket (its peer got a partial body).
async function toSocket (socket, hold, inFd, range, signal, tracker) {
  await hold.ready
  const fd = socketFd(socket)
  if (socket.destroyed || fd < 0) throw prematureCloseError()
  const hookUserSignal = hookSignal(signal)
  const hook = (abort) => {
    const unhookSignal = hookUserSignal(abort)
    socket.once('close', abort)
    return () => {
      socket.off('close', abort)
      unhookSignal()
    }
  }
  try {
    return await toDescriptor(fd, inFd, range, tracker, hook)
  } catch (err) {
    const closed = socket.destroyed
    socket.destroy()
    if (signal && signal.aborted) throw abortError(signal)
    throw closed && err.code === 'ABORT_ERR' ? prematureCloseError() : err
  }
}

async function toFileStream (stream, inFd, range, signal, tracker) {
  if (stream.fd === null) await once(stream, 'ready', { signal })
  await flushed(stream, '', signal)
  try {
    const result = await toDescriptorWithSignal(stream.fd, inFd, range, signal, tracker)
    stream.bytesWritten += result.bytes
    return result
  } catch (err) {
    stream.destroy()
    throw err
  }
}

async function toPath (path, inFd, range, signal, tracker) {
  const handle = await fsp.open(path, 'w')
  try {
    return await deliver({ kind: 'fd', fd: handle.fd }, null, inFd, range, signal, tracker)
  } finally {
    await handle.close()
  }
}

async function toStream (stream, inFd, range, signal, tracker) {
  const bytes = await streamCopy(inFd, range.start, range.length, stream, { signal, onProgress: tracker.report })
  return { bytes, zeroCopy: false }
}

// Picks the path for a classified destination; a non-regular source (a pipe, a
// device) has no fixed length for sendfile and always goes through streams.
function deliver (target, hold, inFd, range, signal, tracker) {
  switch (target.kind) {
    case 'path':
      return toPath(target.path, inFd, range, signal, tracker)
    case 'fd':
      if (range.regular) return toDescriptorWithSignal(target.fd, inFd, range, signal, tracker)
      return toStream(fs.createWriteStream(null, { fd: target.fd, autoClose: false }), inFd, range, signal, tracker)
    case 'socket':
      if (hold && range.regular) return toSocket(target.stream, hold, inFd, range, signal, tracker)
      if (hold) hold.release()
      return toStream(target.stream, inFd, range, signal, tracker)
    case 'file-stream':
      if (range.regular && supportsZeroCopy(target)) return toFileStream(target.stream, inFd, range, signal, tracker)
      return toStream(target.stream, inFd, range, signal, tracker)
    default:
      return toStream(target.stream, inFd, range, signal, tracker)
  }
}

async function transfer (source, target, { start, end, signal, onProgress }) {
  if (signal && signal.aborted) throw abortError(signal)
  const hold = target.kind === 'socket' && supportsZeroCopy(target) ? holdSocket(target.stream, signal) : null
  try {
    const file = await openSource(source)
    try {
      // fstat of an open descriptor reads the in-memory inode, never the disk:
      // done inline, it saves small transfers a thread-pool round trip.
      const range = byteRange(fs.fstatSync(file.fd), start, end)
      return await deliver(target, hold, file.fd, range, signal, progress(onProgress))
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

module.exports = { pipeFile }
