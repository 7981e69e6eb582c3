#!/usr/bin/env bash
# kopt report in a real browser: renders the report of z03 (57 evaluations) and of a hostile log,
# opens them in headless Chromium (Debian's `chromium`), checks the screenshot is a real picture and,
# through --dump-dom, that the SVG has one point element per evaluation and that nothing from the
# hostile log became markup or ran; then checks the layout by geometry (tests/report/geometry.mjs).
#   KOPT_BUILD_DIR   build folder with the kopt binary (default build; built when missing)
#   KOPT_REPORT_OUT  keep the outputs there (default: a temporary folder, removed on success)
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"
cd "$KOPT_ROOT"
apt_install_lists "$KOPT_ROOT/scripts/deps/apt-report.txt"

BUILD_DIR=${KOPT_BUILD_DIR:-build}
if [ ! -x "$BUILD_DIR/kopt" ]; then
  log "report: no $BUILD_DIR/kopt, building it"
  bash scripts/setup-deps.sh core
  KOPT_BUILD_DIR="$BUILD_DIR" bash scripts/build.sh
fi
KOPT="$BUILD_DIR/kopt"
CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] || { echo "report: chromium not found" >&2; exit 1; }

OUT=${KOPT_REPORT_OUT:-$(mktemp -d)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
PROFILE=$(mktemp -d)
cleanup() { rm -rf "$PROFILE"; [ -n "${KOPT_REPORT_OUT:-}" ] || [ "${failed:-1}" -ne 0 ] || rm -rf "$OUT"; }
trap cleanup EXIT
failed=1

chrome() {
  timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
    --user-data-dir="$PROFILE" "$@" 2>>"$OUT/chromium.log"
}
fail() { echo "report: FAIL: $*" >&2; exit 1; }

FIXTURE=tests/fixtures/vectors/z03-large-60-evals.events.json
"$KOPT" report "$FIXTURE" -o "$OUT/report.html" --csv "$OUT/report.csv" --json "$OUT/report.json"
expected=$("$KOPT" project "$FIXTURE" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).series.iterations.length))')
[ "$expected" -gt 0 ] || fail "the projection has no iterations"

# 1. Screenshot: a PNG of the requested size, large enough to hold a drawn page (a blank one is ~10 KB).
chrome --screenshot="$OUT/report.png" --window-size=1280,2000 "file://$OUT/report.html" >/dev/null
[ -s "$OUT/report.png" ] || fail "no screenshot"
[ "$(head -c 8 "$OUT/report.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "screenshot is not a PNG"
dims=$(od -An -tu1 -j16 -N8 "$OUT/report.png" | awk '{print $1*16777216+$2*65536+$3*256+$4 "x" $5*16777216+$6*65536+$7*256+$8}')
[ "$dims" = "1280x2000" ] || fail "screenshot is $dims, expected 1280x2000"
size=$(stat -c %s "$OUT/report.png")
[ "$size" -gt 60000 ] || fail "screenshot is only $size bytes: nothing drawn?"

# 2. The DOM as Chromium built it: one SVG point per evaluation, one table row per evaluation.
chrome --dump-dom "file://$OUT/report.html" >"$OUT/report.dom.html"
points=$(grep -o 'data-kopt="point"' "$OUT/report.dom.html" | wc -l)
rows=$(grep -o 'data-kopt="row"' "$OUT/report.dom.html" | wc -l)
[ "$points" -eq "$expected" ] || fail "SVG has $points points, the projection $expected iterations"
[ "$rows" -eq "$expected" ] || fail "table has $rows rows, the projection $expected iterations"
grep -q '<svg class="curve"' "$OUT/report.dom.html" || fail "no inline SVG curve"
grep -q 'data-kopt="chip-best"' "$OUT/report.dom.html" || fail "no best chip"

# 3. A hostile log: nothing it holds may become an element or run.
"$KOPT" report tests/report/hostile.events.json -o "$OUT/hostile.html"
chrome --dump-dom "file://$OUT/hostile.html" >"$OUT/hostile.dom.html"
grep -q 'PWNED' "$OUT/hostile.dom.html" || fail "the hostile strings are missing from the page"
! grep -q '<title>PWNED' "$OUT/hostile.dom.html" || fail "a script from the log ran"
! grep -qi '<script' "$OUT/hostile.dom.html" || fail "a <script> element exists"
! grep -qi '<img' "$OUT/hostile.dom.html" || fail "an <img> element exists"
[ "$(grep -o '<style>' "$OUT/hostile.dom.html" | wc -l)" -eq 1 ] || fail "a <style> element from the log exists"
hpoints=$(grep -o 'data-kopt="point"' "$OUT/hostile.dom.html" | wc -l)
[ "$hpoints" -eq 4 ] || fail "hostile page has $hpoints points, expected 4"
chrome --screenshot="$OUT/hostile.png" --window-size=1280,1400 "file://$OUT/hostile.html" >/dev/null
[ "$(stat -c %s "$OUT/hostile.png")" -gt 30000 ] || fail "the hostile page did not render (style broken out?)"

# 4. Layout by geometry (tests/report/geometry.mjs): the demo session and z03 in zh and en, and the
#    hostile log, at a desktop and a narrow width — no overlapping labels, nothing outside the chart,
#    points clickable at their centre, the table inside its box, no cell spilling over.
browser_node_modules
for lang in zh en; do
  "$KOPT" report demo/kernel-opt-demo/session.jsonl.zstd -o "$OUT/demo-$lang.html" --lang "$lang"
  "$KOPT" report "$FIXTURE" -o "$OUT/z03-$lang.html" --lang "$lang"
  # Issue 49: points with intervals (the record table's latency with its ± and the labels against ★).
  "$KOPT" report tests/fixtures/vectors/s01-compare-rule-labels.events.json -o "$OUT/s01-$lang.html" --lang "$lang"
  chrome --dump-dom "file://$OUT/s01-$lang.html" >"$OUT/s01-$lang.dom.html"
  [ "$(grep -o 'data-kopt="row-ci"' "$OUT/s01-$lang.dom.html" | wc -l)" -eq 6 ] || fail "s01 ($lang): not 6 latencies with their interval"
done
CHROMIUM="$CHROME" timeout 300 node tests/report/geometry.mjs "$OUT"/demo-zh.html "$OUT"/demo-en.html \
  "$OUT"/z03-zh.html "$OUT"/z03-en.html "$OUT/hostile.html" "$OUT"/s01-zh.html "$OUT"/s01-en.html || fail "the layout check failed (above)"

# 5. A comparison (kopt report A B …): the demo session against its second recording (or z03 when
#    that is absent) and a missing log, which keeps its row: one SVG series per readable log, one point
#    per measured evaluation as the JSON says, the reason row, still no script.
SECOND=demo/kernel-opt-demo-b/session.jsonl.zstd
[ -f "$SECOND" ] || SECOND=$FIXTURE
"$KOPT" report demo/kernel-opt-demo/session.jsonl.zstd "$SECOND" "$OUT/no-such.jsonl" -o "$OUT/compare.html" --json "$OUT/compare.json" 2>"$OUT/compare.err"
grep -q 'no-such.jsonl' "$OUT/compare.err" || fail "the unreadable log was not reported"
chrome --dump-dom "file://$OUT/compare.html" >"$OUT/compare.dom.html"
cpoints=$(node -e 'const j=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));console.log(j.chart.series.reduce((n,s)=>n+s.points.length,0))' "$OUT/compare.json")
[ "$(grep -o 'data-kopt="compare-series"' "$OUT/compare.dom.html" | wc -l)" -eq 2 ] || fail "the comparison does not draw two runs"
[ "$(grep -o 'data-kopt="compare-point"' "$OUT/compare.dom.html" | wc -l)" -eq "$cpoints" ] || fail "the comparison's points are not the JSON's $cpoints"
[ "$(grep -o 'data-kopt="compare-row"' "$OUT/compare.dom.html" | wc -l)" -eq 3 ] || fail "the comparison has not one row per log"
grep -q 'data-kopt="row-error"' "$OUT/compare.dom.html" || fail "the unreadable log lost its row"
! grep -qi '<script' "$OUT/compare.dom.html" || fail "a <script> element exists"
chrome --screenshot="$OUT/compare.png" --window-size=1280,1100 "file://$OUT/compare.html" >/dev/null
[ "$(stat -c %s "$OUT/compare.png")" -gt 40000 ] || fail "the comparison did not render"

failed=0
echo "report: ok — $points points and $rows rows for $expected iterations, screenshot ${size} bytes ($dims); hostile log inert; comparison of 2 runs ($cpoints points) and a missing log"
