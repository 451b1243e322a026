'use strict'

// The flags of `zcopy serve`, their checks, and the one object the rest of the
// command reads (see resolveOptions). Every flag has a one-line example in --help.

const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const ms = require('ms')
const { UsageError } = require('../../../tools/usage-error')
const { integerInRange } = require('../../../tools/validate')
const { parseAllowedHosts } = require('./allowed-hosts')

const DEFAULT_PORT = 8080
const DOTFILES = ['allow', 'deny', 'ignore']
const LOG_FORMATS = ['text', 'json']

// A duration in seconds: a number of seconds ('3600') or an ms-style string
// ('1h', '7d', '500ms'), at least 0.
function seconds (name) {
  return (value) => {
    const text = String(value).trim()
    const millis = /^\d+(\.\d+)?$/.test(text) ? Number(text) * 1000 : ms(text)
    if (typeof millis !== 'number' || !Number.isFinite(millis) || millis < 0) {
      throw new UsageError(`--${name} must be a number of seconds or a duration like 1h or 7d, got '${value}'`)
    }
    return millis / 1000
  }
}

// --dotfiles (alone: allow), --dotfiles allow|deny|ignore, --no-dotfiles (ignore).
function dotfiles (value) {
  if (value === false) return 'ignore'
  if (value === true || value === '') return 'allow'
  if (!DOTFILES.includes(value)) throw new UsageError(`unknown --dotfiles '${value}' (expected allow, deny or ignore)`)
  return value
}

// --etag (alone, or absent: the weak size-and-mtime ETag), --etag content (one
// made of the bytes, the same on every replica), --no-etag (none).
function etag (value) {
  if (value === false || value === 'content') return value
  if (value === true || value === '') return true
  throw new UsageError(`unknown --etag '${value}' (expected content, or --no-etag)`)
}

function extensions (value) {
  const items = [].concat(value).flatMap((item) => String(item).split(',')).map((item) => item.trim().replace(/^\./, ''))
  if (items.some((item) => !/^[A-Za-z0-9]+$/.test(item))) {
    throw new UsageError(`--extensions must be a comma-separated list like html,htm, got '${[].concat(value).join(',')}'`)
  }
  return items
}

function workers (value) {
  if (value === 'auto') return 'auto'
  const number = Number(value)
  if (!Number.isInteger(number) || number < 1 || number > 1024) {
    throw new UsageError(`--workers must be auto or an integer from 1 to 1024, got '${value}'`)
  }
  return number
}

function logFormat (value) {
  if (!LOG_FORMATS.includes(value)) throw new UsageError(`unknown --log '${value}' (expected text or json)`)
  return value
}

const options = {
  port: { alias: 'p', describe: 'Port to listen on (default: $PORT, else 8080; 0 for any free port)', type: 'string', requiresArg: true, coerce: integerInRange('port', 0, 65535) },
  host: { alias: 'H', describe: 'Address to listen on (0.0.0.0 or :: for every interface)', type: 'string', default: '127.0.0.1', requiresArg: true },
  'allowed-hosts': { describe: 'Host names answered besides localhost when bound to loopback (comma-separated, .example.com for a domain and its subdomains; all: any)', type: 'string', requiresArg: true, coerce: parseAllowedHosts },
  single: { alias: 's', describe: 'Single-page app: unknown paths without an extension get /index.html', type: 'boolean', default: false },
  cors: { describe: 'Allow any origin (Access-Control-Allow-Origin: *, preflight answered)', type: 'boolean', default: false },
  'max-age': { alias: 'cache', describe: 'Cache-Control max-age, in seconds or like 1h, 7d', type: 'string', default: 0, requiresArg: true, coerce: seconds('max-age') },
  immutable: { describe: 'Hashed file names (app.3f2a1b9c.js) cached for a year, immutable', type: 'boolean', default: false },
  // No yargs default: it would also stand in for a bare --etag.
  etag: { describe: 'Send ETag: made of size and mtime; --etag content: of the bytes (replicas agree whatever the mtimes); --no-etag: none', type: 'string', coerce: etag },
  // No yargs default: it would also stand in for a bare --dotfiles (which is allow).
  dotfiles: { describe: 'Files and folders named .*: allow, deny (403) or ignore (404); --dotfiles alone: allow [default: ignore]', type: 'string', coerce: dotfiles },
  precompressed: { describe: 'Send file.br / file.gz instead of file when the client accepts it', type: 'boolean', default: false },
  compress: { describe: 'Compress text files (br, gzip) once per version, in the background, and send the results by sendfile (--no-compress: send files as they are)', type: 'boolean', default: true },
  extensions: { describe: 'Extensions tried for a path without one (comma-separated)', type: 'string', requiresArg: true, coerce: extensions },
  listing: { describe: 'List folders that have no index.html (HTML, or JSON on Accept: application/json)', type: 'boolean', default: false },
  'ssl-cert': { describe: 'TLS certificate (PEM): serve HTTPS', type: 'string', requiresArg: true },
  'ssl-key': { describe: 'TLS private key (PEM)', type: 'string', requiresArg: true },
  'ssl-pass': { describe: 'File holding the passphrase of an encrypted --ssl-key', type: 'string', requiresArg: true },
  http2: { describe: 'Serve HTTP/2 (with HTTP/1.1 for older clients); needs --ssl-cert and --ssl-key', type: 'boolean', default: false },
  workers: { alias: 'w', describe: 'Processes serving the port: a number or auto (one per core; default in NODE_ENV=production)', type: 'string', requiresArg: true, coerce: workers },
  quiet: { alias: 'q', describe: 'No access log', type: 'boolean', default: false },
  log: { describe: 'Access log format: text or json (one object per line)', type: 'string', default: 'text', requiresArg: true, coerce: logFormat },
  timeout: { describe: 'Seconds a connection may stay silent (no request yet, a client reading nothing) and a request head may take; idle keep-alive: 5 s; 0: no limit', type: 'string', default: 60, requiresArg: true, coerce: seconds('timeout') },
  'native-lane': { describe: 'Answer repeated requests for files in C, handing the others to Node (plain HTTP, on by default where the addon loads; with --workers in every worker; off with TLS or --http2)', type: 'boolean' },
  'shutdown-timeout': { describe: 'On SIGINT/SIGTERM, seconds in-flight responses get to finish', type: 'string', default: 10, requiresArg: true, coerce: seconds('shutdown-timeout') },
  open: { alias: 'o', describe: 'Open the URL in the browser', type: 'boolean', default: false }
}

const examples = [
  ['$0 serve ./dist --port 3000', 'serve ./dist on http://127.0.0.1:3000/ (-p 3000; or PORT=3000)'],
  ['$0 serve --host 0.0.0.0', 'serve on every interface (the LAN URLs are printed)'],
  ['$0 serve --allowed-hosts dev.example.com', 'also answer Host: dev.example.com (bound to loopback, only localhost names are)'],
  ['$0 serve ./dist --single', 'single-page app: /about gets /index.html, /missing.js is 404'],
  ['$0 serve --cors', 'let pages from other origins fetch these files'],
  ['$0 serve --max-age 3600', 'Cache-Control: public, max-age=3600 (also --cache 1h)'],
  ['$0 serve --immutable', 'app.3f2a1b9c.js: public, max-age=31536000, immutable'],
  ['$0 serve --no-etag', 'no ETag header'],
  ['$0 serve --etag content', 'ETag from the bytes: replicas on copies of a folder agree'],
  ['$0 serve --dotfiles deny', '403 for .env, .git/...'],
  ['$0 serve --precompressed', 'app.js.br / app.js.gz for clients that accept them'],
  ['$0 serve --no-compress', 'send text files as they are (compressed once per version by default)'],
  ['$0 serve --extensions html', '/about serves about.html'],
  ['$0 serve --listing', 'HTML listing of folders without index.html'],
  ['$0 serve --ssl-cert cert.pem --ssl-key key.pem', 'serve HTTPS'],
  ['$0 serve --ssl-cert cert.pem --ssl-key key.pem --ssl-pass pass.txt', 'HTTPS with an encrypted key, its passphrase read from pass.txt'],
  ['$0 serve --http2 --ssl-cert cert.pem --ssl-key key.pem', 'serve HTTP/2 over TLS'],
  ['$0 serve --workers auto', 'one process per core'],
  ['$0 serve --quiet', 'no access log'],
  ['$0 serve --log json', 'access log as one JSON object per line'],
  ['$0 serve --timeout 10', 'close connections silent for 10 s (default 60)'],
  ['$0 serve --shutdown-timeout 30', 'give downloads 30 s to finish on Ctrl-C'],
  ['$0 serve --no-native-lane', 'every request through Node\'s HTTP stack (the lane answers repeated requests for files in C by default)'],
  ['$0 serve --open', 'open the URL in the browser']
]

// A regular file's contents. Opened without blocking, so that a FIFO or a device
// is refused at once rather than read until a writer comes.
function readFlagFile (file, flag) {
  let fd
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  } catch (err) {
    throw new UsageError(`cannot read --${flag} ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.code || err.message}`)
  }
  try {
    if (!fs.fstatSync(fd).isFile()) throw new UsageError(`--${flag} ${file} is not a regular file (a FIFO, a device or a folder): give a file`)
    return fs.readFileSync(fd)
  } catch (err) {
    if (err instanceof UsageError) throw err
    throw new UsageError(`cannot read --${flag} ${file}: ${err.code || err.message}`)
  } finally {
    fs.closeSync(fd)
  }
}

// --ssl-cert, --ssl-key, --ssl-pass → the TLS options, or null for plain HTTP.
// The passphrase comes from a file (never the command line, which other users
// can read in ps), its one trailing newline dropped.
function resolveTls (argv) {
  if (Boolean(argv['ssl-cert']) !== Boolean(argv['ssl-key'])) throw new UsageError('--ssl-cert and --ssl-key go together')
  if (argv['ssl-pass'] && !argv['ssl-key']) throw new UsageError('--ssl-pass goes with --ssl-cert and --ssl-key')
  if (!argv['ssl-cert']) return null
  const tls = { cert: readFlagFile(argv['ssl-cert'], 'ssl-cert'), key: readFlagFile(argv['ssl-key'], 'ssl-key') }
  if (argv['ssl-pass']) {
    tls.passphrase = readFlagFile(argv['ssl-pass'], 'ssl-pass').toString('utf8').replace(/\r?\n$/, '')
  } else if (isEncryptedKey(tls.key)) {
    throw new UsageError(`--ssl-key ${argv['ssl-key']} is encrypted: give the file holding its passphrase with --ssl-pass`)
  }
  checkTlsFiles(tls, argv)
  return tls
}

function isEncryptedKey (key) {
  return /^-----BEGIN ENCRYPTED PRIVATE KEY-----|^Proc-Type: 4,ENCRYPTED/m.test(key.toString('latin1'))
}

// Which file is wrong, and how, in words rather than OpenSSL's
// ('PEM routines::no start line').
function checkTlsFiles ({ cert, key, passphrase }, argv) {
  try {
    new crypto.X509Certificate(cert) // eslint-disable-line no-new
  } catch {
    throw new UsageError(`--ssl-cert ${argv['ssl-cert']} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`)
  }
  try {
    crypto.createPrivateKey({ key, passphrase })
  } catch (err) {
    // A wrong passphrase usually fails the padding check ('bad decrypt'); about
    // once in 256 the garbage it decrypts to passes it and fails as DER instead.
    if (passphrase !== undefined && (isEncryptedKey(key) || /bad decrypt|bad password|decrypt/i.test(err.message))) {
      throw new UsageError(`--ssl-pass ${argv['ssl-pass']} is not the passphrase of --ssl-key ${argv['ssl-key']} (bad decrypt)`)
    }
    throw new UsageError(`--ssl-key ${argv['ssl-key']} holds no PEM private key (-----BEGIN PRIVATE KEY-----)`)
  }
}

// → the port and whether another free one may be taken when it is in use: only
// when no --port was given (the default 8080, or $PORT), and not in production
// (where a platform's router expects $PORT itself).
function resolvePort (argv, env) {
  if (argv.port !== undefined) return { port: argv.port, fallback: false }
  const fallback = env.NODE_ENV !== 'production'
  if (env.PORT !== undefined && env.PORT !== '') {
    const port = Number(env.PORT)
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new UsageError(`PORT must be an integer from 0 to 65535, got '${env.PORT}'`)
    }
    return { port, fallback }
  }
  return { port: DEFAULT_PORT, fallback }
}

function resolveWorkers (argv, env) {
  const asked = argv.workers === undefined ? (env.NODE_ENV === 'production' ? 'auto' : 1) : argv.workers
  if (asked !== 'auto') return asked
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length
}

// The parsed argv → everything the serve command needs, checked (UsageError).
function resolveOptions (argv, env = process.env) {
  const tls = resolveTls(argv)
  if (argv.timeout * 1000 > 2 ** 31 - 1) throw new UsageError(`--timeout must be at most 24 days, got '${argv.timeout}' s`)
  if (argv.http2 && !tls) throw new UsageError('--http2 needs --ssl-cert and --ssl-key (browsers speak HTTP/2 over TLS only)')
  return {
    ...resolvePort(argv, env),
    host: argv.host,
    allowedHosts: argv['allowed-hosts'],
    single: argv.single,
    cors: argv.cors,
    maxAge: argv['max-age'],
    immutable: argv.immutable,
    etag: argv.etag === undefined ? true : argv.etag,
    dotfiles: argv.dotfiles === undefined ? 'ignore' : argv.dotfiles,
    precompressed: argv.precompressed,
    compress: argv.compress !== false,
    extensions: argv.extensions || [],
    listing: argv.listing,
    tls,
    http2: argv.http2,
    workers: resolveWorkers(argv, env),
    quiet: argv.quiet,
    log: argv.log,
    timeout: argv.timeout,
    shutdownTimeout: argv['shutdown-timeout'],
    // undefined: on where it can run (serve.js, withNativeLane).
    nativeLane: argv['native-lane'],
    open: argv.open
  }
}

module.exports = { options, examples, resolveOptions }
