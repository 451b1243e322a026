'use strict'

// The answers zcopy serve gives itself when serveStatic found nothing to send:
// the folder's 404.html (read per request, so edits show), or a short text.

const fs = require('node:fs')
const http = require('node:http')
const path = require('node:path')

function sendText (req, res, status, type, body) {
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
// read by name, outside serveStatic's confinement).
function readNotFoundPage (root) {
  const file = path.join(root, '404.html')
  try {
    if (!fs.lstatSync(file).isFile()) return null
    return fs.readFileSync(file)
  } catch {
    return null
  }
}

function sendNotFound (req, res, root) {
  const page = readNotFoundPage(root)
  if (page === null) return sendStatus(req, res, 404)
  sendText(req, res, 404, 'text/html; charset=utf-8', page)
}

module.exports = { sendNotFound, sendStatus, sendText }
