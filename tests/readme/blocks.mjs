// Turns the ```sh blocks of one document into the bash script tests/readme/docs.sh runs, as written,
// except for three things, each said on stderr:
//  - a block listed in SKIP is not run (with the reason: it is tested elsewhere or would take too long);
//  - the placeholder of the repository in `git clone <…>` becomes the repository under test ($KOPT_DOCS_SRC);
//  - a line `dsh web …` (it never returns) starts in the background, in its own process group, on a
//    free port without opening a browser; its pgid goes to $KOPT_DOCS_WEB_PGID.
// A document with both languages (## 中文 … ## English …) is two readers: SECTION zh or en picks one.
//   node blocks.mjs DOC.md [zh|en] > script.sh
import { readFileSync } from 'node:fs'

const SKIP = [
  [/^bash scripts\/run\.sh$/, 'the main command: tests/readme/run.sh runs it from a clone'],
  [/^bash scripts\/test\.sh$/, 'the whole suite: it is what runs this test'],
  [/scripts\/update-prebuilt\.sh/, 'building the native core from source takes minutes; the core suites build it'],
]

const [doc, section] = process.argv.slice(2)
let text = readFileSync(doc, 'utf8')
if (section) {
  const zh = text.indexOf('\n## 中文'), en = text.indexOf('\n## English')
  if (zh < 0 || en < 0 || en < zh) { console.error(`[docs] ${doc}: no ## 中文 / ## English sections`); process.exit(1) }
  text = section === 'zh' ? text.slice(zh, en) : text.slice(en)
}
let webs = 0
const blocks = [...text.matchAll(/^```(?:sh|bash)\n([\s\S]*?)^```/gm)].map((m) => m[1])
const out = ['set -euo pipefail']
let ran = 0
for (const b of blocks) {
  const code = b.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim()).filter((l) => l && !l.startsWith('#')).join('\n')
  const skip = SKIP.find(([re]) => re.test(code))
  if (skip) { console.error(`[docs] ${doc}: skipped \`${code.replace(/\n/g, '; ')}\` (${skip[1]})`); continue }
  ran++
  for (const raw of b.split('\n')) {
    let line = raw
    if (/<(本仓库|this repository)>/.test(line)) {
      line = line.replace(/<(本仓库|this repository)>/g, '"$KOPT_DOCS_SRC"')
      console.error(`[docs] ${doc}: the repository placeholder is the repository under test`)
    }
    if (/^\s*dsh web(\s|$)/.test(line)) {
      const rest = line.replace(/^\s*dsh web/, '').replace(/\s+#.*$/, '')
      line = `setsid dsh web${rest} --no-open --port "$KOPT_DOCS_PORT" > "$KOPT_DOCS_WEB_LOG" 2>&1 < /dev/null & echo $! > "$KOPT_DOCS_WEB_PGID"`
      console.error(`[docs] ${doc}${section ? ' (' + section + ')' : ''}: \`dsh web\` runs in the background on the test's port`)
      if (++webs > 1) { console.error(`[docs] ${doc}: more than one \`dsh web\` for one reader`); process.exit(1) }
    }
    out.push(line)
  }
}
if (ran === 0) { console.error(`[docs] ${doc}: no shell block to run`); process.exit(1) }
console.log(out.join('\n'))
