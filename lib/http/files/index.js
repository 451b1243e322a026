'use strict'

// Files on disk: the open-file cache (descriptors, stats, contents kept in
// memory, the paths it remembers and the folder watches that vouch for them),
// confinement to the root on the opened descriptor, the stat helpers, and how
// many descriptors the process may hold. Calls nothing above it.

const { defaultMaxOpenFiles } = require('./descriptor-limit')
const { OpenFileCache } = require('./file-cache')
const { MemoryBudget } = require('./memory-budget')
const { UNCONFINED } = require('./open-confined')
const { memoryBody } = require('./open-file')
const { sameFile, statOf, statOrNothing } = require('./stat')

module.exports = { MemoryBudget, OpenFileCache, UNCONFINED, defaultMaxOpenFiles, memoryBody, sameFile, statOf, statOrNothing }
