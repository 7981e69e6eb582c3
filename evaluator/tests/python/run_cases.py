"""The Python corpus through kopt-bench, the way a kernel engineer runs it:

    /usr/bin/python3 evaluator/tests/python/run_cases.py KOPT_BENCH CACHE_DIR [PATTERN]

Each row of CASES.md's `cases` block is one `kopt-bench --ref PROBLEM --solution FILE` run (the
problem exported by kopt-bench itself, no --inputs) with a short timing phase, so the mutation
sentinel and the reuse checks run. The verdict keyword and the regex of the row must both hold.
PATTERN (a substring) runs only the matching rows. Prints one line per case and a summary; exit 1 on
any failure.
"""
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)


def cases():
    text = open(os.path.join(HERE, "CASES.md")).read()
    block = text.split("```cases", 1)[1].split("```", 1)[0]
    for line in block.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        sol, prob, verdict, pattern = (f.strip() for f in line.split("|", 3))
        yield sol, prob, verdict, pattern


def payload(out):
    for line in out.splitlines():
        if line.startswith("KERNEL_EVAL="):
            return json.loads(line[len("KERNEL_EVAL="):])
    return None


def holds(verdict, rc, p):
    if p is None:
        return False, "no KERNEL_EVAL line"
    hack = bool(p.get("reward_hack_detected"))
    if verdict == "correct":
        return rc == 0 and p.get("correct") is True and not hack, "not correct"
    if verdict == "incorrect":
        return p.get("correct") is False and p.get("compiled") is not False and not p.get("evaluator_failed"), "not incorrect"
    if verdict == "compile_error":
        return p.get("compiled") is False, "compiled"
    if verdict == "input_error":
        return rc == 2 and p.get("evaluator_failed") is True, "not refused as input"
    if verdict == "hack":
        return p.get("correct") is False and hack, "no reward hack flagged"
    return False, "unknown verdict keyword " + verdict


def run(bench, cache, tmp, case):
    sol, prob, verdict, pattern = case
    base = os.path.join(tmp, re.sub(r"\W", "_", sol) + ".baseline.json")
    argv = [bench, "--ref", os.path.join(TESTS, prob), "--solution", os.path.join(HERE, sol), "--cache-dir", cache,
            "--baseline", base, "--min-trials", "3", "--max-trials", "8", "--warmup", "1"]
    t0 = time.time()
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    ok, why = holds(verdict, r.returncode, payload(r.stdout))
    if ok and not re.search(pattern, r.stdout, re.M):
        ok, why = False, "output does not match /%s/" % pattern
    # Nothing the solution prints reaches kopt-bench's output: one result line, no forged words.
    if ok and (r.stdout.count("KERNEL_EVAL=") != 1 or '"artifact":"forged"' in r.stdout):
        ok, why = False, "the solution's own printing reached the output"
    return sol, ok, why, time.time() - t0, r.stdout


def main():
    bench, cache = sys.argv[1], sys.argv[2]
    only = sys.argv[3] if len(sys.argv) > 3 else ""
    todo = [c for c in cases() if only in c[0]]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        # Two at a time: extensions compile in the build stage, and the judge times on the rest.
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            for sol, ok, why, secs, out in pool.map(lambda c: run(bench, cache, tmp, c), todo):
                print("%s %s (%.1f s)%s" % ("ok  " if ok else "FAIL", sol, secs, "" if ok else ": " + why), flush=True)
                if not ok:
                    failed += 1
                    tail = [l for l in out.splitlines() if not l.startswith("KERNEL_EVAL=")][-12:]
                    print("     " + "\n     ".join(tail))
    print("python cases: %d passed, %d failed" % (len(todo) - failed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
