'use strict'
// Preloaded (--require) into a documentation example run by examples.test.mjs.
// The example runs as written, except that the ports it names (8080, 8443, 9000)
// become free ones: a server listening on one listens on port 0 and tells the
// test which port it got (IPC); a client connecting to one is sent to the port
// the test gives in EXAMPLE_PORT_<port>. zcopy.nativeLane(server).listen(port)
// on a named port (the lane owns its listening socket) is treated as
// server.listen is.
const net = require('node:net')

const NAMED = new Set([8080, 8443, 9000])

const listen = net.Server.prototype.listen
net.Server.prototype.listen = function (...args) {
  let asked = null
  if (typeof args[0] === 'number' && NAMED.has(args[0])) {
    asked = args[0]
    args[0] = 0
  } else if (args[0] && typeof args[0] === 'object' && NAMED.has(Number(args[0].port))) {
    asked = Number(args[0].port)
    args[0] = { ...args[0], port: 0 }
  }
  if (asked !== null) this.once('listening', () => process.send({ asked, port: this.address().port }))
  return listen.apply(this, args)
}

// The project's zcopy, as the example will require it: its exports object is
// the one the example gets, so its nativeLane is wrapped there.
function wrapNativeLane () {
  let zcopy
  try {
    zcopy = require(require.resolve('zcopy', { paths: [process.cwd()] }))
  } catch {
    return
  }
  const nativeLane = zcopy.nativeLane
  zcopy.nativeLane = function (...args) {
    const lane = nativeLane.apply(this, args)
    const laneListen = lane.listen.bind(lane)
    lane.listen = (port, ...rest) => {
      if (!NAMED.has(port)) return laneListen(port, ...rest)
      return laneListen(0, ...rest).then((address) => {
        process.send({ asked: port, port: address.port })
        return address
      })
    }
    return lane
  }
}
wrapNativeLane()

const connect = net.Socket.prototype.connect
net.Socket.prototype.connect = function (...args) {
  const target = (port) => process.env[`EXAMPLE_PORT_${port}`]
  // net.connect() passes its normalized [options, callback] array, marked by a
  // private symbol: its options object is changed in place, the array kept.
  const options = Array.isArray(args[0]) ? args[0][0] : args[0]
  if (typeof options === 'number' && target(options)) args[0] = Number(target(options))
  else if (options && typeof options === 'object' && target(options.port)) options.port = Number(target(options.port))
  return connect.apply(this, args)
}
