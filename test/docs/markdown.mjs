// Reading the project's markdown as GitHub renders it: heading anchors (the
// slugs github-slugger makes) and the links of a page.
import fs from 'node:fs'

// GitHub's anchor for a heading's text: lower case, punctuation dropped (letters,
// marks, digits, connector punctuation, spaces and hyphens kept), spaces as
// hyphens; a repeated slug gets -1, -2...
function slug (text) {
  return text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-')
}

// Lines outside fenced code blocks.
function proseLines (text) {
  const lines = []
  let fenced = false
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced
    else if (!fenced) lines.push(line)
  }
  return lines
}

// → the anchors of a markdown file.
export function anchorsOf (file) {
  const seen = new Map()
  const anchors = new Set()
  for (const line of proseLines(fs.readFileSync(file, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (!heading) continue
    const base = slug(heading[1].replace(/`/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1'))
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    anchors.add(count === 0 ? base : `${base}-${count}`)
  }
  return anchors
}

// → [{ target, line }] of the inline links and images of a markdown file,
// outside code (fenced blocks and `spans`).
export function linksOf (file) {
  const links = []
  proseLines(fs.readFileSync(file, 'utf8')).forEach((line, i) => {
    const prose = line.replace(/`[^`]*`/g, '')
    for (const match of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) links.push({ target: match[1], line: i + 1 })
  })
  return links
}

// → [{ lang, code, example, line }] of the fenced js/mjs blocks of a markdown
// file; `example` is the JSON of an `<!-- example: {...} -->` comment on the line
// just before the fence (what test/docs/examples.test.mjs checks), or null.
export function codeBlocksOf (file) {
  const lines = fs.readFileSync(file, 'utf8').split('\n')
  const blocks = []
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(js|mjs)\s*$/.exec(lines[i])
    if (!fence) continue
    const end = lines.indexOf('```', i + 1)
    const note = i > 0 ? /^<!-- example: (.*) -->$/.exec(lines[i - 1]) : null
    blocks.push({ lang: fence[1], code: lines.slice(i + 1, end).join('\n') + '\n', example: note ? JSON.parse(note[1]) : null, line: i + 1 })
    i = end
  }
  return blocks
}
