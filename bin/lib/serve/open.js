'use strict'

// --open: the platform's opener (open on macOS, start on Windows, xdg-open
// elsewhere), or ZCOPY_OPENER when set (a command given the URL as its one
// argument; the tests use it). Failing to open is said, never fatal.

const { spawn } = require('node:child_process')

function openerFor (platform = process.platform, env = process.env) {
  if (env.ZCOPY_OPENER) return { command: env.ZCOPY_OPENER, args: [] }
  if (platform === 'darwin') return { command: 'open', args: [] }
  if (platform === 'win32') return { command: 'cmd', args: ['/c', 'start', '""'] }
  return { command: 'xdg-open', args: [] }
}

function openUrl (url, say) {
  const { command, args } = openerFor()
  try {
    const child = spawn(command, [...args, url], { stdio: 'ignore', detached: true })
    child.on('error', (err) => say(`zcopy: could not open the browser (${command}: ${err.code || err.message})`))
    child.unref()
  } catch (err) {
    say(`zcopy: could not open the browser (${command}: ${err.message})`)
  }
}

module.exports = { openUrl }
