'use strict'

// The answers zcopy serve gives itself when serveStatic found nothing to send:
// the folder's 404.html (read per request, so edits show), or a short text.

const fs = require('node:fs')
const http = require('node:http')
const path = require('node:path')

function sendText (req, res, status, type, body) {
  if (res.destroyed) return // the client went away meanwhile (a 404.html read)
  if (res.headersSent) return res.destroy()
  res.statusCode = status
  res.setHeader('Content-Type', type)
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.end(req.method === 'HEAD' ? undefined : body)
}

function sendStatus (req, res, status) {
  sendText(req, res, status, 'text/plain; charset=utf-8', `${http.STATUS_CODES[status] || 'Error'}\n`)
}

// The root's 404.html when it is a regular file there (not a symlink: it is
// read by name, outside serveStatic's confinement), or null. Read off the event
// loop: a 404 must not stall the other clients.
async function readNotFoundPage (root) {
  const file = path.join(root, '404.html')
  try {
    if (!(await fs.promises.lstat(file)).isFile()) return null
    return await fs.promises.readFile(file)
  } catch {
    return null
  }
}

// `hint`: a line added to the plain-text answer (not to a 404.html page).
function sendNotFound (req, res, root, hint = '') {
  readNotFoundPage(root).then((page) => {
    if (page === null) return sendText(req, res, 404, 'text/plain; charset=utf-8', `${http.STATUS_CODES[404]}\n${hint}`)
    sendText(req, res, 404, 'text/html; charset=utf-8', page)
  })
}

module.exports = { sendNotFound, sendStatus, sendText }
