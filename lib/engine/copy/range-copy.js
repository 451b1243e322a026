'use strict'

// The one copy through user space: the bytes of a file (a range of a
// descriptor, or a non-regular source read until its end) or of memory,
// written to a Writable a step at a time, each step started from the callback
// of the last. Whatever is not moved by sendfile comes here: lib/http's bodies
// (TLS, HTTP/2, the pure-JS fallback, compression middleware), and pipeFile's
// and sendRange's copies into a stream (stream-copy.js). It knows Writables and
// sockets, never HTTP: the caller says what the destination is (its writes call
// back or not, the connection's socket), ends it, and stops the copy with an
// Stop (stop.js).
//
// How much is written when is its pacing's:
// - where the destination's writes call back, in order, once their bytes went
//   out (an HTTP response's own write), a Flight (flight.js): the bytes handed
//   over and not written out stay under a window, within the room in the
//   connection's send buffer where the addon tells it (socketRoom), over TLS
//   within a budget for the process; the file is read in pieces of a pool
//   shared by every copy, under the process's copy budget (pieces.js);
// - for any other Writable (pipeFile's streams, a response whose write a
//   middleware replaced, which may call back early or never), a DrainPace
//   (drain-pace.js): write() while it says there is room, then 'drain', in
//   chunks allocated per read (the destination may keep them).
//
// What a client that stops reading costs (issue 47). Over TLS every byte handed
// to a response is encrypted at once, and both copies, the plain one (until
// its write calls back) and the encrypted one (queued below the TLS socket), are
// held until the client reads; over HTTP/2 the bytes wait in the stream. So:
// - the window starts at one piece (16 KiB, one TLS record), doubles each time
//   every write so far called back once the client took RAMP bytes, up to
//   MAX_WINDOW, and starts over at one piece when the writes out did not all
//   call back within STALL_MS (the client stopped reading);
// - where the kernel's room is known, no more than that is read and written,
//   once every write so far called back; when that is less than a piece, what
//   fits is read into a buffer of its own size (1 KiB when nothing fits): a
//   client that stops reading has one such write queued in user space for it,
//   1 KiB plain and its encrypted copy, and no piece of the pool;
// - over TLS, what a socket is given at once is encrypted at once, and held
//   twice if the kernel refuses it (256 KiB at once cost 600 KiB of RSS per
//   stalled client, on 150 clients). Where the kernel's room is known, as
//   much as it takes is handed over at once while few TLS copies run, each
//   within its share of a budget for the process (flight.js, BATCH_BUDGET);
//   otherwise the pieces go one at a time, read two at a time at most
//   (SERIAL_BATCH), each written from the last one's write callback;
// - a piece goes back to the pool when its write calls back; past the budget,
//   reads wait for a piece to come back. The pieces of a copy that stalled
//   leave the budget (they stay with Node until its client reads or leaves,
//   and are not reused): clients that stop reading can never spend the budget
//   of those that read. Pieces read and not written when it stalled go back,
//   and are read again when it goes on;
// - once the pool saw a whole idle period, it lets its spares go, and the C
//   heap's free pages go back to the system (pieces.js);
// - each step (a read, a wait for writes to call back, for the budget) is
//   started from the callback of the last, with callbacks made once per copy:
//   one promise per copy, none per read. With 1,000 stalled TLS clients, a
//   promise and async frame per read, alive across V8's young-generation
//   collections, made V8 double its young generation (51 MiB of heap
//   committed against 27 for a server writing from memory).
// Bytes from memory (bodies kept by lib/http's open-file cache) go out in the
// same window, in views of them (over TLS as a file's pieces go): nothing is
// copied, and their encrypted copy is bounded as a file's is.

const fs = require('node:fs')
const { readAt } = require('../read-range')
const { DrainPace } = require('./drain-pace')
const { Flight } = require('./flight')
const { pool, PIECE_SIZE } = require('./pieces')
const { truncatedError } = require('../errors')

// One copy, handed to its destination under its pacing, a step at a time, each
// step started from the callback of the last. `result` (once step() was
// called) resolves with { bytes, complete } (the bytes handed to the
// destination, and false when the stop came or the destination was
// destroyed first), or rejects with a read error or a file shorter than the
// range; never while a read is in flight.
class Copy {
  // `length`: the bytes to copy, Infinity for a source read until its end.
  constructor (destination, length, options) {
    this.destination = destination
    this.length = length
    this.stop = options.stop
    this.onProgress = options.onProgress ?? null
    this.reported = 0
    this.result = new Promise((resolve, reject) => {
      this.resolve = resolve
      this.reject = reject
    })
    this.done = 0 // bytes handed to the destination
    this.reading = false
    this.ended = false
    this.flight = options.callsBack ? new Flight(destination, options, this) : new DrainPace(destination, options, this)
    this.step = this.step.bind(this)
    // What calls step() from another's callback (a write's, the pool's, the
    // stop's) has it run once that callback returned, as an await did.
    // Written to from inside a write callback, a Node 24 HTTP/2 stream
    // sometimes kept a write that never called back, and its session stayed
    // open after the client cut it (hang-up.test, 2 runs in 3 on 24.21).
    this.stepSoon = () => queueMicrotask(this.step)
    this.stop.watch(this.stepSoon)
  }

  // Goes on until it has to wait: for a read, for writes to call back, for
  // the budget, for 'drain'. Whatever ends that wait calls it again (a stop
  // too).
  step () {
    if (this.ended || this.reading) return
    try {
      for (;;) {
        if (this.stop.stopped || this.destination.destroyed === true) return this.end(null, false)
        if (this.done >= this.length) {
          if (!this.flight.flushed()) return // resume() goes on
          this.report()
          return this.end(null, true)
        }
        const size = this.nextSize()
        if (size === 0) {
          if (!this.flight.land(this.done)) return // resume() goes on
          continue
        }
        this.report()
        if (!this.send(size)) return
      }
    } catch (err) {
      this.end(err)
    }
  }

  nextSize () {
    return this.flight.nextSize(this.length - this.done)
  }

  // The bytes handed over so far, to onProgress, once there was room for them.
  report () {
    if (this.onProgress === null || this.reported === this.done) return
    this.reported = this.done
    this.onProgress(this.done)
  }

  // The pacing's: every write it waited for called back (or 'drain' came).
  resume () {
    this.stepSoon()
  }

  // The Flight's: a batch went out (`written` bytes of it).
  batchDone (written) {
    this.done += written
    this.stepSoon()
  }

  end (err, complete) {
    this.ended = true
    this.flight.close()
    this.stop.watch(null)
    pool.touch()
    if (err) this.reject(err)
    else this.resolve({ bytes: this.done, complete })
  }
}

// Bytes [start, start + length) of `fd`, read into the pool's pieces (fewer
// than a piece, where the kernel's room says so, or under a DrainPace, into a
// buffer of their size).
class FileCopy extends Copy {
  constructor ({ fd, start, length }, destination, options) {
    super(destination, length, options)
    this.fd = fd
    this.start = start
    this.pieces = null // being read into
    this.wanted = 0 // bytes asked of that read
    this.ownBuffer = null
    this.waitingForPiece = false
    this.wake = () => {
      this.waitingForPiece = false
      this.stepSoon()
    }
    this.onRead = this.onRead.bind(this)
    this.onOwnRead = this.onOwnRead.bind(this)
  }

  // Starts reading `size` bytes. → false: the read's callback goes on.
  send (size) {
    const position = this.start + this.done
    if (this.flight.small) {
      this.ownBuffer = Buffer.allocUnsafeSlow(size)
      this.reading = true
      readAt(this.fd, this.ownBuffer, position, this.onOwnRead)
      return false
    }
    const pieces = pool.take(Math.ceil(size / PIECE_SIZE)) // none when the budget is spent
    if (pieces.length === 0) {
      this.waitingForPiece = true
      pool.whenPiece(this.wake)
      return false
    }
    this.pieces = pieces
    this.wanted = Math.min(size, pieces.length * PIECE_SIZE) // the budget may give fewer
    this.reading = true
    fs.readv(this.fd, toFill(pieces, this.wanted), position, this.onRead)
    return false
  }

  // The pieces read are written: one at a time where the Flight is `serial`
  // (its batch), else at once. Every piece goes back to the pool, now or once written.
  onRead (err, bytesRead) {
    this.reading = false
    const pieces = this.pieces
    this.pieces = null
    if (err || bytesRead === 0 || this.stop.stopped) {
      for (const piece of pieces) pool.give(piece)
      if (err) return this.end(err)
      if (bytesRead === 0 && !this.stop.stopped) return this.end(truncatedError(this.start + this.done, this.wanted))
      return this.step()
    }
    try {
      if (this.flight.serial) return this.flight.writeSerially(pieces, pieces, bytesRead, this.done)
      let written = 0
      for (const piece of pieces) {
        const size = Math.min(PIECE_SIZE, bytesRead - written)
        if (size <= 0) {
          pool.give(piece)
          continue
        }
        this.flight.write(size < PIECE_SIZE ? piece.subarray(0, size) : piece, piece)
        written += size
      }
      this.done += written
    } catch (err) {
      return this.end(err)
    }
    this.step()
  }

  onOwnRead (err, filled) {
    this.reading = false
    const buffer = this.ownBuffer
    this.ownBuffer = null
    if (err) return this.end(err)
    if (this.stop.stopped) return this.step()
    if (filled === 0) return this.end(truncatedError(this.start + this.done, buffer.length))
    this.written(filled < buffer.length ? buffer.subarray(0, filled) : buffer)
  }

  // `bytes`, a buffer of their own, are written.
  written (bytes) {
    try {
      this.flight.write(bytes, null)
    } catch (err) {
      return this.end(err)
    }
    this.done += bytes.length
    this.step()
  }

  end (err, complete) {
    if (this.waitingForPiece) pool.cancelWait(this.wake)
    super.end(err, complete)
  }
}

// A non-regular source (a pipe, a FIFO, a device) until its end, through its
// reader (stream-source.js): chunks of the reader's own.
class SourceCopy extends FileCopy {
  constructor ({ reader }, destination, options) {
    super({ fd: -1, start: 0, length: Infinity }, destination, options)
    this.reader = reader
    this.onChunk = this.onChunk.bind(this)
    this.onFailure = this.onFailure.bind(this)
  }

  send () {
    this.reading = true
    this.reader.read(this.stop.signal).then(this.onChunk, this.onFailure)
    return false
  }

  onChunk (chunk) {
    this.reading = false
    if (this.stop.stopped) return this.step()
    if (chunk !== null) return this.written(chunk)
    this.length = this.done
    this.step()
  }

  // A read the stop cut short is no failure: the copy ends incomplete.
  onFailure (err) {
    this.reading = false
    if (this.stop.stopped) return this.step()
    this.end(err)
  }
}

// Bytes from memory, in views of them: nothing is copied. Where the Flight is
// `serial`, one batch once every write so far called back.
class MemoryCopy extends Copy {
  constructor ({ bytes }, destination, options) {
    super(destination, bytes.length, options)
    this.bytes = bytes
  }

  nextSize () {
    if (this.flight.serial && this.flight.calledBack !== this.flight.writes) return 0
    return super.nextSize()
  }

  // → true when the bytes were handed over at once.
  send (size) {
    const { bytes, done, flight } = this
    if (flight.serial) {
      flight.writeSerially(viewsOf(bytes, done, size), null, size, done)
      return false
    }
    flight.write(bytes.subarray(done, done + size), null)
    this.done += size
    return true
  }
}

// `pieces` for readv to fill with `wanted` bytes: the last one cut.
function toFill (pieces, wanted) {
  const last = pieces.length - 1
  const tail = wanted - last * PIECE_SIZE
  if (tail === PIECE_SIZE) return pieces
  const buffers = pieces.slice()
  buffers[last] = pieces[last].subarray(0, tail)
  return buffers
}

// Views of `bytes` [start, start + size), a piece each.
function viewsOf (bytes, start, size) {
  const views = []
  for (let at = start; at < start + size; at += PIECE_SIZE) views.push(bytes.subarray(at, Math.min(at + PIECE_SIZE, start + size)))
  return views
}

// Copies `source` into `destination`, a Writable. `source`: { fd, start,
// length } (a range of a regular file's descriptor, the caller's, left open),
// { reader } (a non-regular source: stream-source.js's openReader()), or
// { bytes } (a Buffer). `options`:
// - stop: a Stop (stop.js: `stopped`, watch()); once it stopped nothing more
//   is written, and the copy resolves incomplete. A reader source takes its
//   `signal`, which only an engine Stop has;
// - callsBack: the destination's writes call back in order once their bytes
//   went out: paced by a Flight, in the pool's pieces (`bytes` want it);
//   otherwise by write()'s answer and 'drain', in chunks of `chunkSize`;
// - socketOf, onStall: the Flight's (flight.js); flushes: the DrainPace's
//   (drain-pace.js); onProgress(bytes): the bytes handed over so far, once
//   there was room for them.
// → Promise of { bytes, complete }: the bytes handed to the destination, and
// false when the stop came or the destination was destroyed first. It
// neither ends nor destroys the destination. Rejects on a read error or a file
// shorter than the range.
function copy (source, destination, options) {
  const Kind = source.bytes !== undefined ? MemoryCopy : source.reader !== undefined ? SourceCopy : FileCopy
  const running = new Kind(source, destination, options)
  running.step()
  return running.result
}

module.exports = { copy }
