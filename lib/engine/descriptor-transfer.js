'use strict'

// A file range (the payload: { start, length, head }) sent from a source
// descriptor to a destination descriptor by sendfile, or to a socket under a
// hold on its writes, with the fallbacks a refused pair or a want of
// descriptors takes: the JS copy loop, or the socket's own writes through
// copy/stream-copy.js. pipe-file.js picks which, for pipeFile and sendRange
// (deliver()).

const { zeroCopyAvailable } = require('./binding')
const { startFallbackTransfer, startTransfer } = require('./sendfile')
const { socketFd } = require('./destination')
const { flushed, streamCopy } = require('./copy')
const { prematureCloseError } = require('./errors')

// Errors that mean "this descriptor pair cannot sendfile" (O_APPEND files, odd
// devices) rather than "the transfer failed": retried through the JS copy loop.
// (libuv names EOPNOTSUPP, 95 on Linux, ENOTSUP.)
const UNSUPPORTED = new Set(['EINVAL', 'ENOSYS', 'EOPNOTSUPP', 'ENOTSUP'])
// The addon could not make its private copies of the descriptors: the process
// (EMFILE) or the system (ENFILE) is out of them.
const OUT_OF_DESCRIPTORS = new Set(['EMFILE', 'ENFILE'])

const noop = () => {}

// sendfile from the spec's `inFd` to a descriptor, falling back to the JS loop
// when the kernel refuses the pair. It owns what a transfer to a descriptor
// carries from step to step: the spec's job, source, payload and tracker.
// Plain promise chains rather than async functions, and one .then for the
// whole step: a small file sent from the event loop passes through here on
// every HTTP request, and each async frame costs a promise and a suspension.
class DescriptorTransfer {
  constructor ({ job, inFd, payload, tracker }) {
    this.job = job
    this.inFd = inFd
    this.payload = payload
    this.tracker = tracker
  }

  to (outFd) {
    const { job, inFd } = this
    const { start: offset, length, head } = this.payload
    const onProgress = this.tracker.report
    return job.run((job) => startTransfer({ outFd, inFd, offset, length, onProgress, head }, job)).then((bytes) => {
      this.settle()
      return { bytes, zeroCopy: zeroCopyAvailable }
    }, (err) => {
      if (OUT_OF_DESCRIPTORS.has(err.code) && !job.aborted) {
        const rest = this.withoutDescriptors()
        if (rest !== null) return rest
      }
      if (!UNSUPPORTED.has(err.code) || this.tracker.bytes > 0 || job.aborted) return this.fail(err)
      const rest = head === null ? null : head.subarray(job.current.headWritten())
      return job.run((job) => startFallbackTransfer({ outFd, inFd, offset, length, onProgress, head: rest }, job)).then((bytes) => {
        this.settle()
        return { bytes, zeroCopy: false }
      }, (err) => this.fail(err))
    })
  }

  // The addon could not make its private copies of the descriptors: a promise
  // of the transfer finished another way, or null when there is none.
  withoutDescriptors () {
    return null
  }

  // The transfer ended, whichever way (nothing to let go of here).
  settle () {}

  fail (err) {
    this.settle()
    throw err
  }
}

// sendfile to a socket's descriptor (a spec, and { socket, hold }), under a
// hold on its writes (holdSocket): the hold is released when the transfer
// settles, and a failure destroys the socket (its peer got a partial body).
class SocketTransfer extends DescriptorTransfer {
  constructor (spec, { socket, hold }) {
    super(spec)
    this.socket = socket
    this.hold = hold
  }

  // Once the hold is taken (the job listens to the socket's 'close' and the
  // caller's signal meanwhile).
  start () {
    const { job, hold } = this
    if (hold.ready === null) return this.toSocketFd()
    return job.wait(hold.ready).then(() => this.toSocketFd(), (err) => {
      if (this.socket.destroyed) job.abort(prematureCloseError()) // lost with writes queued (ERR_STREAM_DESTROYED)
      const reason = job.aborted ? job.reason : err
      this.settle() // the socket is left as it is: nothing of the body went out
      throw reason
    })
  }

  toSocketFd () {
    const { socket } = this
    const fd = socketFd(socket)
    if (socket.destroyed || fd < 0) {
      this.settle()
      return Promise.reject(prematureCloseError())
    }
    this.tracker = rearmingTimeout(socket, this.tracker)
    return this.to(fd)
  }

  // The rest of a socket transfer the addon could not go on with for want of
  // descriptors (it sends from the caller's ones what the socket takes at once,
  // then needs private copies to wait): through the socket's own writes, which
  // need none, instead of a cut body.
  withoutDescriptors () {
    const { job, socket, hold, inFd, tracker } = this
    const { start, length, head } = this.payload
    const sent = tracker.bytes
    const headRest = head === null ? null : head.subarray(job.current.headWritten())
    const rest = { start: start + sent, length: length - sent, head: headRest !== null && headRest.length > 0 ? headRest : null }
    const after = { get bytes () { return tracker.bytes }, report: (bytes) => tracker.report(sent + bytes) }
    hold.release() // the socket's writes are the transfer's now; the job is finished below
    return toStream({ job, inFd, payload: rest, tracker: after }, socket).then(({ bytes }) => {
      this.settle()
      return { bytes: sent + bytes, zeroCopy: false }
    }, (err) => this.fail(err))
  }

  // Node may write again, and no abort is taken after this.
  settle () {
    this.hold.release()
    this.job.finish()
  }

  fail (err) {
    this.settle()
    this.socket.destroy()
    throw err
  }
}

// Keeps Node's own writes off a socket while the kernel writes to it. What was
// queued before the call goes out first (a write barrier); what is written after
// the call waits, corked, until the file bytes are in. Taken synchronously, at
// call. `ready` is null when the socket was corked at once (nothing was queued),
// else a promise of that moment. Released when the transfer settles; release()
// may come twice, and a hold released before it was taken is never taken.
function holdSocket (socket) {
  let corked = false
  let released = false
  const cork = () => {
    if (released) return
    socket.cork()
    corked = true
  }
  let ready = null
  if (socket.destroyed || socket.writableEnded) {
    ready = Promise.reject(prematureCloseError())
  } else if (!socket.connecting && socket.writableLength === 0) {
    cork()
  } else {
    ready = flushed(socket, '', null).then(cork)
  }
  if (ready !== null) ready.catch(noop) // observed by SocketTransfer, unless the source fails to open first
  return {
    ready,
    release () {
      released = true
      if (corked) socket.uncork()
      corked = false
    }
  }
}

// A socket's idle timeout (socket.setTimeout, an HTTP server's `timeout`)
// counts only the writes Node makes: the kernel's, behind its back, re-arm it
// here at each progress report, so that a download that moves is not taken for
// an idle connection, and one that stalls still times out.
function rearmingTimeout (socket, tracker) {
  if (!(socket.timeout > 0)) return tracker
  return {
    get bytes () { return tracker.bytes },
    report (bytes) {
      tracker.report(bytes)
      if (!socket.destroyed) socket.setTimeout(socket.timeout)
    }
  }
}

// Any Writable, through copy/stream-copy.js; an abort destroys the destination (as a
// failed copy does) and does not wait for a read of a pipe that has no data.
function toStream ({ job, inFd, payload, tracker }, stream) {
  const { start, length, head } = payload
  job.check()
  const stop = new AbortController() // a read of a pipe ends with the abort too
  const copying = streamCopy(inFd, start, length, stream, { onProgress: tracker.report, head, signal: stop.signal })
  return job.wait(copying, () => { stop.abort(); stream.destroy() }).then((bytes) => ({ bytes, zeroCopy: false }), (err) => {
    // A destination destroyed under the copy lost it, however its write callback said so.
    throw err.code === 'ERR_STREAM_DESTROYED' ? prematureCloseError() : err
  })
}

module.exports = { DescriptorTransfer, SocketTransfer, holdSocket, toStream }
