'use strict'

// Memory a server holds for HTTP/2 clients whose streams never open their
// window (issue 62.4):
//
//   node bench/http/stalled-streams.js <path of a bin/zcopy.js | nginx>
//
// 20 sessions over TLS with SETTINGS_INITIAL_WINDOW_SIZE 0, each asking for an
// 8 MiB file on 500 streams; 8 s later the server's RSS (its process and its
// children, from /proc) is read against its idle RSS. Prints one JSON line:
// idle and loaded MiB, KiB per connection, streams answered and refused.
const http2 = require('node:http2'); const fs = require('node:fs')
const { startZcopyServe } = require('./zcopy-serve')
const { startNginx } = require('./nginx')
const { makeCertificate } = require('./tls')
const { freePort } = require('./free-port')
const rss = (pid) => { let t = 0; for (const p of [pid, ...fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d) && fs.readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]?.split(' ')[1] === String(pid))]) { try { t += Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'))[1]) } catch {} } return t }
;(async () => {
  const which = process.argv[2]; const tls = { ...makeCertificate(), http2: true }
  const root = fs.mkdtempSync('/tmp/h2mem-'); fs.chmodSync(root, 0o755); fs.writeFileSync(root + '/big.bin', Buffer.alloc(8 << 20, 'b')); fs.chmodSync(root + '/big.bin', 0o644)
  let server, port
  if (which === 'nginx') { port = await freePort(); server = await startNginx(root, port, 1, tls) } else { server = await startZcopyServe(root, 1, { tls, cli: which }); port = server.port ?? Number(new URL(server.url).port) }
  const pid = server.pid ?? server.child.pid
  await new Promise((resolve) => setTimeout(resolve, 2000)); const idle = rss(pid)
  const sessions = []; let answered = 0; let refused = 0
  for (let c = 0; c < 20; c++) {
    const s = http2.connect(`https://localhost:${port}`, { ca: fs.readFileSync(tls.cert), rejectUnauthorized: false, settings: { initialWindowSize: 0 } }); s.on('error', () => {})
    sessions.push(s)
    for (let i = 0; i < 500; i++) { const r = s.request({ ':path': '/big.bin' }); r.on('error', () => { refused++ }); r.on('response', () => answered++) }
  }
  await new Promise((resolve) => setTimeout(resolve, 8000))
  const loaded = rss(pid)
  console.log(JSON.stringify({ which, idleMiB: +(idle / 1024).toFixed(1), loadedMiB: +(loaded / 1024).toFixed(1), perConnKiB: Math.round((loaded - idle) / 20), answered, refused }))
  for (const s of sessions) s.destroy(); await server.stop(); process.exit(0)
})()
