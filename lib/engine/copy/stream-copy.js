'use strict'

// pipeFile's and sendRange's copy into any Writable (the stream fallback):
// the copy loop (range-copy.js) paced by write()'s answer and 'drain', in
// CHUNK_SIZE chunks, the last bytes handed on before it resolves. Same bytes as
// the zero-copy path, and the same failure rule: the destination is destroyed
// when the copy cannot complete.

const { abortError, prematureCloseError } = require('../errors')
const { openReader } = require('../stream-source')
const { copy } = require('./range-copy')
const { Stop } = require('./stop')

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
  // The copy stops on the caller's abort, the destination's error or close.
  const stop = new Stop()
  const halt = () => stop.stop()
  const onError = (err) => {
    if (failure === null) failure = err
    halt()
  }
  destination.on('error', onError)
  destination.once('close', halt)
  if (signal) signal.addEventListener('abort', halt, { once: true })
  if (signal && signal.aborted) halt()
  let reader = null
  let bytes = 0
  try {
    if (head !== null) await writeChunk(destination, head, length === 0, signal)
    let complete = true
    if (length === null) reader = await openReader(fd)
    if (length !== 0) {
      const source = reader !== null ? { reader } : { fd, start, length }
      ;({ bytes, complete } = await copy(source, destination, { stop, chunkSize: CHUNK_SIZE, flushes: true, onProgress }))
    }
    if (failure !== null) throw failure
    if (!complete) throw signal && signal.aborted ? abortError(signal) : prematureCloseError()
  } catch (err) {
    const cancelled = err.code === 'ECANCELED' && destination.destroyed
    destination.destroy()
    throw cancelled ? prematureCloseError() : err
  } finally {
    destination.off('close', halt)
    if (signal) signal.removeEventListener('abort', halt)
    if (reader !== null) await reader.close()
  }
  destination.off('error', onError)
  return bytes
}

module.exports = { flushed, streamCopy }
