#!/usr/bin/env python3
"""The D-4 wrapper table against the installed Slurm: every option that `srun`/`salloc` --help and --usage say
takes a required value must swallow its value in the core's command analysis.

For each such option X a shell call `srun X v cat bench.log` whose output carries a contract line is projected
with `kopt project`: when X swallows v the program is `cat` (read-back, no point); when the table missed X, `v`
becomes the program and the line a point. So any point names a missed option.
Usage: check_options.py KOPT_BINARY    (SLURM_CONF must point at a readable slurm.conf)"""
import json, re, subprocess, sys, tempfile, os


def required_value_options(prog):
    txt = ""
    for flag in ("--help", "--usage"):
        txt += subprocess.run([prog, flag], capture_output=True, text=True, timeout=30).stdout
    req = set()
    # --help rows: "  -A, --account=name", "      --bb=<spec>", "  -B  --extra-node-info=S[:C[:T]]"
    for m in re.finditer(r"^\s+(?:-([A-Za-z]),?\s+)?--([a-z][a-z0-9_-]*)(\[?=)?", txt, re.M):
        short, long_, eq = m.groups()
        if eq == "=":
            req.add("--" + long_)
            if short:
                req.add("-" + short)
    # --usage items: "[-N nnodes]", "[--gres=list]" (not "[--nice[=value]]")
    for m in re.finditer(r"\[-([A-Za-z]) [a-z]", txt):
        req.add("-" + m.group(1))
    for m in re.finditer(r"\[--([a-z][a-z0-9_-]*)=", txt):
        req.add("--" + m.group(1))
    return sorted(req)


def main():
    kopt = sys.argv[1]
    events, seq, calls = [], 0, []

    def add(typ, data, **kw):
        nonlocal seq
        e = {"type": typ, "seq": seq, "time": 1754000000000 + seq, "data": data}
        e.update(kw)
        events.append(e)
        seq += 1

    for prog, then in (("srun", ""), ("salloc", "srun -n1 ")):
        opts = required_value_options(prog)
        if len(opts) < 20:
            print(f"{prog}: only {len(opts)} value options parsed from --help/--usage; the format changed?")
            return 1
        for o in opts:
            calls.append((f"{prog} {o} v {then}cat bench.log", prog, o))
    for i, (cmd, _, _) in enumerate(calls):
        cid = f"c{i}"
        add("tool/call", {"callId": cid, "name": "bash", "arguments": json.dumps({"command": cmd})})
        text = 'KERNEL_EVAL={"artifact":"a%d.py","latency_ms":%d,"correct":true}' % (i, i + 1)
        add("tool/result", {"message": {"role": "user", "content": [
            {"type": "tool-result", "toolCallId": cid, "content": [{"type": "text", "text": text}], "isError": False}]}})
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(events, f)
    try:
        out = subprocess.run([kopt, "project", f.name], capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(f.name)
    if out.returncode != 0:
        print("kopt project failed:", out.stderr[-500:])
        return 1
    its = json.loads(out.stdout)["series"]["iterations"]
    by_seq = {2 * i: c for i, c in enumerate(calls)}
    missed = [f"{by_seq[it['seq']][1]} {by_seq[it['seq']][2]}" for it in its if it.get("seq") in by_seq]
    print(f"{len(calls)} value options of the installed srun/salloc checked; {len(missed)} not swallowed")
    if missed or len(its):
        print("missed:", " ".join(missed) or json.dumps(its)[:300])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
