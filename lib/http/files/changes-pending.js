'use strict'

// Whether change events may be waiting, unread, for the open-file cache's
// watches (./dir-watches: fs.watch, libuv's inotify). A request read earlier
// in the same poll of the event loop than the event of a change made before it
// was sent would otherwise be answered from a remembered entry (epoll reports a
// socket that was ready in the previous turn first). The addon's
// changesPending() asks the loop's inotify queue (src/pending_changes.cc).
//
// → true: events are waiting (the request looks its name up, as a miss does,
// and the loop reads them meanwhile); false: none; null: it cannot be told (no
// addon, or the queue cannot be asked: see RememberedPaths.lookup()).

const { native } = require('../../engine')

const probe = typeof native?.changesPending === 'function' ? native.changesPending : null

function changesPending () {
  return probe === null ? null : probe()
}

module.exports = { changesPending }
