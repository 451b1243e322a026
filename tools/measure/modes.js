'use strict'

const { runSocketMode, senders } = require('./socket-mode')
const { runHttpMode, httpMethods } = require('./http-mode')
const { runFileMode, fileMethods } = require('./file-mode')

// What `zcopy bench --mode` can measure: each mode's methods, in the order
// they run and are listed, and the function that measures one of them.
const MODES = {
  socket: { methods: Object.keys(senders), run: (options) => runSocketMode({ ...options, sender: senders[options.method] }) },
  http: { methods: httpMethods, run: runHttpMode },
  file: { methods: fileMethods, run: runFileMode }
}

module.exports = { MODES }
