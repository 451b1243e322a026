'use strict'

// --open: the platform's opener (open on macOS, start on Windows, xdg-open
// elsewhere), or ZCOPY_OPENER when set (a command given the URL as its one
// argument; the tests use it). Failing to open (no opener, or one that exits
// non-zero, as xdg-open does with no browser) is said, with the URL to open by
// hand; never fatal.

const { spawn } = require('node:child_process')

function openerFor (platform = process.platform, env = process.env) {
  if (env.ZCOPY_OPENER) return { command: env.ZCOPY_OPENER, args: [] }
  if (platform === 'darwin') return { command: 'open', args: [] }
  if (platform === 'win32') return { command: 'cmd', args: ['/c', 'start', '""'] }
  return { command: 'xdg-open', args: [] }
}

function openUrl (url, say) {
  const { command, args } = openerFor()
  const failed = (why) => say(`zcopy: could not open a browser (${command}: ${why}); open ${url} yourself`)
  try {
    const child = spawn(command, [...args, url], { stdio: 'ignore', detached: true })
    child.on('error', (err) => failed(err.code === 'ENOENT' ? 'not found' : err.code || err.message))
    child.on('exit', (code, signal) => {
      if (signal !== null) failed(`killed by ${signal}`)
      else if (code !== 0) failed(`exit code ${code}`)
    })
    child.unref()
  } catch (err) {
    failed(err.message)
  }
}

module.exports = { openUrl }
