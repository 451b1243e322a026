'use strict'

// The addon's calls that the layers above lib/engine use, by name: each is
// the addon's function, or null where it is not there (no addon, or
// ZCOPY_NATIVE=0; a binary older than the call), and its callers keep their
// way without it. Nothing above lib/engine touches the addon object itself
// (test/layers.test.mjs).

const { native } = require('./binding')

function call (name) {
  return native !== null && typeof native[name] === 'function' ? native[name] : null
}

module.exports = {
  // lib/http/files: opens beneath a root by openat2(RESOLVE_BENEATH), the
  // lookup that opens a regular file in the same pool job, and the close of
  // a descriptor the addon opened (fs.close would warn in a Worker).
  openBeneath: call('openBeneath'),
  lookupBeneath: call('lookupBeneath'),
  closeFd: call('close'),
  // lib/http/files: whether libuv's inotify queue holds unread events.
  changesPending: call('changesPending'),
  // lib/http/delivery: TCP_CORK on a socket's descriptor, the room left in its
  // send buffer, malloc's free pages handed back.
  setCork: call('setCork'),
  socketRoom: call('socketRoom'),
  trimMemory: call('trimMemory'),
  // lib/http/compress: the calling thread's scheduling to SCHED_IDLE.
  idlePriority: call('idlePriority'),
  // zcopy doctor: which kernel features work here.
  probeKernel: call('probeKernel'),
  // zcopy serve --native-lane: the class that owns the listener and answers
  // the requests JavaScript registered (src/lane.h).
  Lane: call('Lane'),
  // For the tests of the native lane's request-head parser and framing only
  // (test/engine/request-head*.test.mjs, request-frame*.test.mjs): the lane
  // calls the C++ directly, never these.
  parseRequestHead: call('parseRequestHead'),
  frameRequest: call('frameRequest')
}
