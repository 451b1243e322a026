'use strict'

// The access log records the native lane hands JavaScript (src/lane.cc,
// LogRecord): a Buffer of 32-byte records, each followed by its request
// target's bytes. → [{ time, method, target, status, bytes, ms, zeroCopy,
// fromMemory, encoding, ended }], in the order the answers ended.

const RECORD_BYTES = 32
const HEAD = 1
const ZERO_COPY = 2
const FROM_MEMORY = 4
const ENDINGS = ['complete', 'aborted', 'shutdown']
// The Content-Encoding of a row, by the number native-lane.js registers it
// with (a record's flags >> 3).
const CODINGS = [null, 'br', 'gzip', 'zstd', 'deflate']

function readLaneRecords (buffer) {
  const answers = []
  for (let offset = 0; offset + RECORD_BYTES <= buffer.length;) {
    const flags = buffer.readUInt8(offset + 26)
    const targetLength = buffer.readUInt32LE(offset + 28)
    const targetStart = offset + RECORD_BYTES
    answers.push({
      time: buffer.readDoubleLE(offset),
      method: flags & HEAD ? 'HEAD' : 'GET',
      // Node decodes a target as latin1 (one character per byte): req.url alike.
      target: buffer.toString('latin1', targetStart, targetStart + targetLength),
      status: buffer.readUInt16LE(offset + 24),
      bytes: buffer.readDoubleLE(offset + 16),
      ms: buffer.readDoubleLE(offset + 8),
      zeroCopy: Boolean(flags & ZERO_COPY),
      fromMemory: Boolean(flags & FROM_MEMORY),
      encoding: CODINGS[flags >> 3] ?? null,
      ended: ENDINGS[buffer.readUInt8(offset + 27)]
    })
    offset = targetStart + targetLength
  }
  return answers
}

module.exports = { CODINGS, readLaneRecords }
