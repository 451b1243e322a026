'use strict'

const { formatMBps, formatRatio, formatSize, describeReport, wrapAtSeparators } = require('./format')

// A self-contained SVG bar chart of throughput: one group per mode and size,
// one bar per method. Bars are scaled to the fastest method of their group,
// with the absolute figure and the ratio to the baseline method beside them.

const WIDTH = 900
const LABEL_WIDTH = 170
const BAR_WIDTH = 470
const BAR_HEIGHT = 18
const BAR_GAP = 4
const GROUP_GAP = 18
const TOP = 64
const SUB_LINE = 16 // px from one subtitle line to the next
// Characters of subtitle per line: at 12 px, about 6.5 px each, with a margin
// so that no line is cut at the chart's WIDTH.
const SUB_CHARS = 115
const COLORS = ['#2b6cb0', '#a0aec0', '#38a169', '#d69e2e', '#805ad5']

const escapeXml = (text) => String(text).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c])

function groupsOf (results) {
  const groups = new Map()
  for (const row of results) {
    const key = `${row.mode} · ${formatSize(row.size)}`
    if (!groups.has(key)) groups.set(key, [])
    groups.get(key).push(row)
  }
  return groups
}

function renderSvg (report) {
  const { results, baseline = 'stream' } = report
  const methods = [...new Set(results.map((row) => row.method))]
  const subtitle = wrapAtSeparators(`${describeReport(report)} · bars scaled to the fastest of each group`, SUB_CHARS)
  const parts = []
  let y = TOP + (subtitle.length - 1) * SUB_LINE
  for (const [label, rows] of groupsOf(results)) {
    const max = Math.max(...rows.map((row) => row.throughput))
    parts.push(`<text x="10" y="${y + 13}" class="group">${escapeXml(label)}</text>`)
    y += BAR_HEIGHT + BAR_GAP
    for (const row of rows) {
      const width = max > 0 ? Math.max(1, Math.round(BAR_WIDTH * row.throughput / max)) : 1
      const color = COLORS[methods.indexOf(row.method) % COLORS.length]
      parts.push(
        `<text x="${LABEL_WIDTH - 8}" y="${y + 13}" class="method">${escapeXml(row.method)}</text>`,
        `<rect x="${LABEL_WIDTH}" y="${y}" width="${width}" height="${BAR_HEIGHT}" fill="${color}"/>`,
        `<text x="${LABEL_WIDTH + width + 6}" y="${y + 13}">${formatMBps(row.throughput)} MB/s (${formatRatio(row.ratio)})</text>`
      )
      y += BAR_HEIGHT + BAR_GAP
    }
    y += GROUP_GAP
  }
  const height = y + 10
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="system-ui, sans-serif" font-size="12">`,
    '<style>.title{font-size:16px;font-weight:600}.sub{fill:#4a5568}.group{font-weight:600}.method{text-anchor:end}</style>',
    `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
    `<text x="10" y="24" class="title">zcopy bench: throughput by method (MB/s, ratio to ${escapeXml(baseline)})</text>`,
    ...subtitle.map((line, i) => `<text x="10" y="${44 + i * SUB_LINE}" class="sub">${escapeXml(line)}</text>`),
    ...parts,
    '</svg>'
  ].join('\n') + '\n'
}

module.exports = { renderSvg }
