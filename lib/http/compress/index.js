'use strict'

// compress: true: compressed variants of text files, made in the background
// (a process or a worker at low priority, within a CPU budget), kept in
// memory or in a folder, and answered to the clients that accept them.

const { brotliParams } = require('./encoders')
const { AVAILABLE, compressOptions, defaultCacheDir } = require('./options')
const { VariantStore } = require('./store')

module.exports = { AVAILABLE, VariantStore, brotliParams, compressOptions, defaultCacheDir }
