'use strict'

// zcopy.pipeFile(source, destination, { start, end, signal, onProgress })
//   → Promise<{ bytes, zeroCopy }>
// Moves a byte range of a file to a socket, fd, path, WriteStream or any Writable:
// sendfile(2) where the kernel can take the destination, streams otherwise. It never
// ends or closes a destination it did not open; on failure it destroys a stream
// destination (its bytes would be incomplete), as stream.pipeline does.

const fs = require('node:fs')
const fsp = require('node:fs/promises')
const { promisify } = require('node:util')
const { once } = require('node:events')
const { zeroCopyAvailable } = require('./binding')
const fallback = require('./fallback')
const { sendfile } = require('./sendfile')
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

const fstat = promisify(fs.fstat)

// Errors that mean "this descriptor pair cannot sendfile" (O_APPEND files, odd
// devices) rather than "the transfer failed": retried through the JS copy loop.
const UNSUPPORTED = new Set(['EINVAL', 'ENOSYS', 'EOPNOTSUPP'])

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

// sendfile to a descriptor, falling back to the JS loop when the pair is unsupported.
async function toDescriptor (outFd, inFd, range, signal, tracker) {
  try {
    const bytes = await sendfile(outFd, inFd, range.start, range.length, { signal, onProgress: tracker.report })
    return { bytes, zeroCopy: zeroCopyAvailable }
  } catch (err) {
    if (!UNSUPPORTED.has(err.code) || tracker.bytes > 0) throw err
    const bytes = await fallback.sendfile(outFd, inFd, range.start, range.length, { signal, onProgress: tracker.report })
    return { bytes, zeroCopy: false }
  }
}

// Waits for the stream to be writable through its descriptor, flushes what Node has
// queued, then lets the kernel write while Node's own writes stay corked.
async function toSocket (socket, inFd, range, signal, tracker) {
  if (socket.connecting) await once(socket, 'connect', { signal })
  if (socket.destroyed || socket.writableEnded) throw prematureCloseError()
  await flushed(socket, '', signal)
  const fd = socketFd(socket)
  if (fd < 0) throw prematureCloseError()

  const controller = new AbortController()
  const onClose = () => controller.abort(prematureCloseError())
  const onAbort = () => controller.abort(signal.reason)
  socket.once('close', onClose)
  if (signal) signal.addEventListener('abort', onAbort, { once: true })
  socket.cork()
  try {
    return await toDescriptor(fd, inFd, range, controller.signal, tracker)
  } catch (err) {
    socket.destroy()
    if (!controller.signal.aborted) throw err
    throw signal && signal.aborted ? abortError(signal) : prematureCloseError()
  } finally {
    socket.off('close', onClose)
    if (signal) signal.removeEventListener('abort', onAbort)
    socket.uncork()
  }
}

async function toFileStream (stream, inFd, range, signal, tracker) {
  if (stream.fd === null) await once(stream, 'ready', { signal })
  await flushed(stream, '', signal)
  try {
    const result = await toDescriptor(stream.fd, inFd, range, signal, tracker)
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
    return await deliver({ kind: 'fd', fd: handle.fd }, inFd, range, signal, tracker)
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
function deliver (target, inFd, range, signal, tracker) {
  switch (target.kind) {
    case 'path':
      return toPath(target.path, inFd, range, signal, tracker)
    case 'fd':
      if (range.regular) return toDescriptor(target.fd, inFd, range, signal, tracker)
      return toStream(fs.createWriteStream(null, { fd: target.fd, autoClose: false }), inFd, range, signal, tracker)
    default:
      if (!range.regular || !supportsZeroCopy(target)) return toStream(target.stream, inFd, range, signal, tracker)
      if (target.kind === 'socket') return toSocket(target.stream, inFd, range, signal, tracker)
      return toFileStream(target.stream, inFd, range, signal, tracker)
  }
}

async function transfer (source, target, { start, end, signal, onProgress }) {
  if (signal && signal.aborted) throw abortError(signal)
  const file = await openSource(source)
  try {
    const range = byteRange(await fstat(file.fd), start, end)
    return await deliver(target, file.fd, range, signal, progress(onProgress))
  } finally {
    await file.close()
  }
}

function pipeFile (source, destination, options = {}) {
  validateSource(source)
  const target = classifyDestination(destination)
  return transfer(source, target, validateOptions(options))
}

module.exports = { pipeFile }
