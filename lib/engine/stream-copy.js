'use strict'

// The stream fallback: reads a byte range of a file into buffers and writes them to
// any Writable, respecting backpressure. Same bytes as the zero-copy path, and the
// same failure rule: the destination is destroyed when the copy cannot complete.

const fs = require('node:fs')
const { promisify } = require('node:util')
const { abortError, prematureCloseError, truncatedError } = require('./errors')
const { openReader } = require('./stream-source')

const read = promisify(fs.read)

const CHUNK_SIZE = 256 * 1024

// Resolves once `stream` can take more (or the write callback ran); rejects if it
// closes, errors or the signal aborts first.
function whenWritable (stream, signal, subscribe) {
  return new Promise((resolve, reject) => {
    if (stream.destroyed) return reject(prematureCloseError())
    const cleanup = () => {
      stream.off('close', onClose)
      stream.off('error', onError)
      if (signal) signal.removeEventListener('abort', onAbort)
    }
    const onClose = () => { cleanup(); reject(prematureCloseError()) }
    const onError = (err) => { cleanup(); reject(err) }
    const onAbort = () => { cleanup(); reject(abortError(signal)) }
    stream.once('close', onClose)
    stream.once('error', onError)
    if (signal) signal.addEventListener('abort', onAbort, { once: true })
    subscribe((err) => { cleanup(); err ? reject(err) : resolve() })
  })
}

function drained (stream, signal) {
  return whenWritable(stream, signal, (done) => stream.once('drain', () => done()))
}

// A write still queued when the stream is destroyed: its callback gets
// ERR_STREAM_DESTROYED on Node 20, ECANCELED (libuv cancelled it) on Node 22 and
// later. The latter is the premature close it stands for.
function flushed (stream, chunk, signal) {
  return whenWritable(stream, signal, (done) => stream.write(chunk, (err) => {
    done(err && err.code === 'ECANCELED' && stream.destroyed ? prematureCloseError() : err)
  }))
}

// Writes `chunk`, waiting for room; the last one resolves once it is handed off.
async function writeChunk (destination, chunk, last, signal) {
  if (last) await flushed(destination, chunk, signal)
  else if (!destination.write(chunk)) await drained(destination, signal)
}

// `length` null: a non-regular source (pipe, device), copied until its end from
// its current position, read without blocking the pool (stream-source.js), so
// that `signal` stops it at once. `head` (a Buffer or null) is written first. The
// fd is the caller's and is never closed here. Resolves with the file bytes copied.
// A destination's 'error' is this copy's failure for as long as it runs: a write
// may fail after write() returned (its 'error' comes a tick after its callback),
// while no wait is listening. Once the copy failed and destroyed the destination,
// errors still in flight from it are the copy's own doing and are absorbed, as
// stream.pipeline does; they never become uncaught exceptions.
async function streamCopy (fd, start, length, destination, { signal, onProgress, head = null } = {}) {
  if (length === 0 && head === null) return 0
  if (destination.destroyed || destination.writableEnded) throw prematureCloseError()
  let failure = null
  const onError = (err) => { if (failure === null) failure = err }
  destination.on('error', onError)
  let done = 0
  let reader = null
  try {
    if (head !== null) await writeChunk(destination, head, length === 0, signal)
    if (length === null) reader = await openReader(fd)
    while (length === null || done < length) {
      if (failure !== null) throw failure
      if (signal && signal.aborted) throw abortError(signal)
      if (destination.destroyed) throw prematureCloseError()
      const chunk = reader !== null ? await reader.read(signal) : await readRange(fd, start + done, Math.min(CHUNK_SIZE, length - done))
      if (chunk === null) break
      if (failure !== null) throw failure
      if (destination.destroyed) throw prematureCloseError()
      done += chunk.length
      await writeChunk(destination, chunk, done === length, signal)
      if (onProgress) onProgress(done)
    }
    if (failure !== null) throw failure
    if (length !== null && done < length) throw truncatedError(start + done, length - done)
  } catch (err) {
    destination.destroy()
    throw err
  } finally {
    if (reader !== null) await reader.close()
  }
  destination.off('error', onError)
  return done
}

// `size` bytes of a regular file at `position` → a Buffer, or null at its end.
async function readRange (fd, position, size) {
  const { bytesRead, buffer } = await read(fd, Buffer.allocUnsafe(size), 0, size, position)
  if (bytesRead === 0) return null
  return bytesRead < size ? buffer.subarray(0, bytesRead) : buffer
}

module.exports = { flushed, streamCopy }
