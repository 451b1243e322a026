'use strict'

// The request target, to a path under the root: the URL split as serveStatic
// reads it, its path resolved and kept inside the root, the file or folder it
// names (with the redirect a folder asked for without its slash), and the
// spelling of a name on a case-insensitive lookup. Knows the file system only
// through ../files.

const { DIRECTORY, locateFile } = require('./locate-file')
const { directoryLocation, redirectToDirectory } = require('./redirect')
const { splitUrl } = require('./request-url')
const { pathResolver, resolvePath } = require('./resolve-path')
const { spellingBelow } = require('./spelling')

module.exports = { DIRECTORY, directoryLocation, locateFile, pathResolver, redirectToDirectory, resolvePath, spellingBelow, splitUrl }
