#!/usr/bin/env bash
# Projection benchmark (issue 2 targets): cold `kopt project` work (read, parse, project,
# serialise) on 10k and 100k synthetic events, a warm incremental feed of 100 events onto 100k
# with the series serialised, and peak RSS. Also the same warm step through the addon from Node.
# Prints one JSON line per measurement; figures are the median of $KOPT_BENCH_REPS runs (default 5).
# The HTTP route end to end in a real `dsh web` (before/after, 304, changed polls, stalls): bench/http/run.mjs.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$KOPT_ROOT"
[ -x build/kopt ] || bash scripts/build.sh >/dev/null
out=${KOPT_BENCH_DIR:-$(mktemp -d)}
reps=${KOPT_BENCH_REPS:-5}
for n in 10000 100000; do
  [ -f "$out/$n.json" ] || node tests/fixtures/vectors/gen-large.mjs $n > "$out/$n.json"
  for i in $(seq "$reps"); do build/kopt bench "$out/$n.json" --feed 100; done > "$out/$n.runs"
  node -e '
    const runs = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse)
    const med = k => { const v = runs.map(r => r[k]).sort((a, b) => a - b); return v[v.length >> 1] }
    const r = runs[0]
    console.log(JSON.stringify({ what: "kopt bench", events: r.events, iterations: r.iterations, seriesBytes: r.seriesBytes,
      reps: runs.length, coldMs: med("coldMs"), coldCpuMs: med("coldCpuMs"), warmMs: med("warmMs"), warmFeedMs: med("warmFeedMs"),
      warmSerializeMs: med("warmSerializeMs"), idleSerializeMs: med("idleSerializeMs"), peakRssKb: med("peakRssKb") }))' "$out/$n.runs"
done
# Through the addon: feed 100 events (JSON text) onto 100k and produce the /series body as a JS string.
KOPT_ADDON=${KOPT_TEST_ADDON:-$KOPT_ROOT/build/kopt-test.node} node -e '
  const k = require(process.env.KOPT_ADDON)
  const events = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))
  const p = new k.Projector()
  p.feed(JSON.stringify(events.slice(0, events.length - 100 * 10)))
  p.seriesJson("b", 0)
  const times = []
  for (let i = 10; i > 0; i--) {
    const batch = JSON.stringify(events.slice(events.length - 100 * i, events.length - 100 * (i - 1)))
    const t = process.hrtime.bigint()
    p.feed(batch)
    const body = process.env.KOPT_BENCH_STRING ? p.seriesJson("b", Date.now()) : p.seriesBuffer("b", Date.now())
    times.push(Number(process.hrtime.bigint() - t) / 1e6)
    if (!body.length) process.exit(1)
  }
  times.sort((a, b) => a - b)
  console.log(JSON.stringify({ what: "addon warm feed of 100 events onto ~100k + the /series body (seriesBuffer; KOPT_BENCH_STRING=1 for seriesJson)", medianMs: times[5], maxMs: times[9] }))
' "$out/100000.json"
