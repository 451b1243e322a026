'use strict'

// What `zcopy serve` does about a crowd's memory, since it owns its process
// (the library leaves the process alone). A crowd is CROWD or more connections
// and HTTP/2 streams open at once, Node's and the native lane's: clients that
// stop reading keep theirs open.
//
// While a crowd stays, the C heap is trimmed each time it has stopped growing
// (no new connection or stream for QUIET_MS): each connection's TLS handshake
// and first writes free their temporaries among the blocks that stay, and
// glibc hands back only the top of its heap on free(), so those holes would
// stay in the RSS as long as the crowd does. The addon's trimMemory
// (malloc_trim) returns every free page inside the heap. About 1.5 ms of the
// event loop for 1,000 stalled TLS clients, and only in a quiet moment: never
// while connections or streams keep coming.
//
// Once the crowd has gone (fallen to a quarter of its peak, and stayed there
// for QUIET_MS), it collects at once rather than whenever V8 gets to it. What
// a crowd leaves (its sockets, TLS state, requests, responses, and the Buffers
// and C heap they reference) is freed only when V8 collects their objects, and
// an idle process collects late or not at all: V8's memory reducer ran 10 s to
// more than 60 s after 1,000 stalled TLS clients left, and not at all after
// some waves, leaving the process at 1.7× its idle RSS. So two full
// collections run (the second also shrinks the heap where V8 can: Node 22 and
// later), then the C heap is trimmed. Once per crowd: the next needs a new
// peak.
//
// V8 offers a collection to scripts only through its `gc` extension: the flag
// that exposes it is set once the first crowd has gone (as Jest's leak
// detector does it), and `gc` taken from a new context, so the process's own
// global stays as it was (unless the user started Node with --expose-gc).

const v8 = require('node:v8')
const vm = require('node:vm')
const engine = require('../../../lib/engine')

const CROWD = 256
const QUIET_MS = 2000
const SAMPLE_MS = 500 // how often a lane's connections are counted
const TRIM_DELAY_MS = 250 // ArrayBuffers' memory is freed by V8's sweeper, after the collection

const trimMemory = engine.trimMemory ?? (() => {})

let collector = null
// → V8's gc extension, exposed on first use.
function gcFunction () {
  if (collector !== null) return collector
  if (typeof globalThis.gc === 'function') {
    collector = globalThis.gc
  } else {
    v8.setFlagsFromString('--expose-gc')
    collector = vm.runInNewContext('gc')
  }
  return collector
}

// V8 12 (Node 22) and later take options, among them a collection that also
// shrinks the heap (what V8's memory reducer does, seconds later otherwise);
// V8 11 (Node 20) reads any object as a request for a minor collection.
const REDUCING = Number(process.versions.v8.split('.')[0]) >= 12
  ? { type: 'major', execution: 'sync', flavor: 'last-resort' }
  : undefined

function collectNow () {
  const gc = gcFunction()
  // The first frees the crowd's objects, whose native halves (TLS state,
  // write requests) then let go of their Buffers, which the second frees.
  gc()
  gc(REDUCING)
  setTimeout(trimMemory, TRIM_DELAY_MS).unref()
}

// Runs `fn` once QUIET_MS have passed since the last restart().
class AfterQuiet {
  constructor (fn) {
    this.fn = fn
    this.timer = null
  }

  restart () {
    if (this.timer !== null) {
      this.timer.refresh()
      return
    }
    this.timer = setTimeout(() => {
      this.timer = null
      this.fn()
    }, QUIET_MS)
    this.timer.unref()
  }
}

// The count of connections and streams open, and what it sets off.
class Crowd {
  constructor () {
    this.open = 0
    this.peak = 0
    this.growing = new AfterQuiet(() => this.stoppedGrowing())
    this.going = new AfterQuiet(() => this.settle())
    this.remove = this.remove.bind(this)
  }

  add () {
    this.open++
    if (this.open > this.peak) this.peak = this.open
    if (this.open >= CROWD) this.growing.restart()
  }

  remove () {
    this.open--
    if (this.peak >= CROWD && this.open <= this.peak / 4) this.going.restart()
  }

  // n connections came (n > 0) or went (a lane's count, sampled).
  change (n) {
    for (; n > 0; n--) this.add()
    for (; n < 0; n++) this.remove()
  }

  stoppedGrowing () {
    if (this.open >= CROWD) trimMemory()
  }

  settle () {
    if (this.open > this.peak / 4) return // they came back: the next remove looks again
    this.peak = this.open
    collectNow()
  }
}

// Watches `server`'s connections and HTTP/2 streams from now on (an HTTP/1
// connection has one response under way at a time: its connection counts it),
// and with a native lane in front, its own (`laneConnections()`: a count the
// lane keeps in C, read every SAMPLE_MS).
function watchCrowds (server, laneConnections = null) {
  const crowd = new Crowd()
  const follow = (each) => {
    crowd.add()
    each.once('close', crowd.remove)
  }
  server.on('connection', follow)
  server.on('stream', follow)
  if (laneConnections === null) return
  let held = 0
  const sampling = setInterval(() => {
    const now = laneConnections()
    crowd.change(now - held)
    held = now
  }, SAMPLE_MS).unref()
  server.once('close', () => clearInterval(sampling))
}

module.exports = { watchCrowds, CROWD }
