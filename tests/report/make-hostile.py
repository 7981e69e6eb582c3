#!/usr/bin/env python3
# Writes hostile.events.json: a small session log whose every free-text field tries to break out of
# HTML (script, attribute, style, comment, CDATA), spoof text direction or inject spreadsheet
# formulas. Used by tests/core/test_report.cpp and tests/report/run.sh. Re-run to regenerate.
import json, os

S = "<script>document.title='PWNED'</script>"
A = '"><img src=x onerror="document.title=\'PWNED\'">'
ST = "</style><style>body{display:none}</style>"
Q = "' onmouseover='document.title=1' x='"
C = "<!-- ]]> -->"
BIDI = "rm -rf /tmp/x \u202e#txt.exe"
F = "=HYPERLINK(\"http://evil.example\",\"x\")"
events = []
seq = 0
t0 = 1754000000000

def ev(typ, data):
    global seq
    events.append({"type": typ, "seq": seq, "time": t0 + seq * 1000, "data": data})
    seq += 1

def call(cid, name, args):
    ev("tool/call", {"callId": cid, "name": name, "arguments": json.dumps(args)})

def result(cid, text):
    ev("tool/result", {"message": {"role": "user", "content": [{"type": "tool-result", "toolCallId": cid,
        "content": [{"type": "text", "text": text}]}], "source": {"kind": "tool", "callId": cid}}})

def plugin_msg(text):
    ev("user/message", {"role": "user", "content": [{"type": "text", "text": text}],
                        "source": {"kind": "plugin", "plugin": "kernel-opt"}})

ev("user/message", {"role": "user", "content": [{"type": "text", "text": "Optimize " + S + " " + A}], "source": {"kind": "user"}})
call("c1", "kernel_env", {"location": S, "device": A, "constraint": ST, "probe": Q, "notes": C,
                          "versions": {"<b>torch</b>": "<i>2.6</i>", "cuda": 12.4}})
result("c1", "ok")
call("c2", "kernel_plan", {"phase": "<b>explore</b>", "approach": S, "hypothesis": A, "next": ST})
result("c2", "ok")
call("c3", "edit", {"file_path": "solution/k.py", "old_string": S + "\n" + C, "new_string": ST + "\n" + BIDI})
result("c3", "ok")
call("c4", "write", {"file_path": "solution/<k>.py", "content": A})
result("c4", "ok")
cmd1 = "python bench.py --tag '" + S + "' --note \"a,b \"\"q\"\"\" " + Q
call("c5", "bash", {"command": cmd1})
result("c5", "KERNEL_EVAL=" + json.dumps({"artifact": "solution/k.py", "latency_ms": 2.0, "correct": True, "speedup": 1.5}))
plugin_msg("[kernel-loop round 1] 1/3 evaluations used.\n"
           "Supervisor review (advisory, from the second model):\n" + S + "\n" + A + "\nline,with,commas\n"
           "Continue the kernel-optimization run.")
call("c6", "kernel_evaluate", {"artifact_path": "solution/k.py"})
result("c6", json.dumps({"compiled": True, "correct": False, "latency_ms": 1.8, "error": F + " " + S,
                         "blocking": [S], "advisory": [A], "evaluation_id": "<e1>"}))
call("c7", "bash", {"command": BIDI + " " + F})
result("c7", "KERNEL_EVAL=" + json.dumps({"artifact": "solution/k.py", "latency_ms": 1.6, "correct": True, "speedup": 1.9,
                                          "native_metrics": {"<x>": 1}}))
plugin_msg("[kernel-loop round 2] 3/3 evaluations used.\nSupervisor review: OK. " + ST + " " + C)
call("c8", "kernel_finalize", {"artifact_path": "solution/k.py"})
result("c8", "Finalize recorded.\n[replay] " + cmd1 + "\n--- replay output ---\nKERNEL_EVAL=" +
       json.dumps({"artifact": "solution/k.py", "latency_ms": 1.62, "correct": True}))

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "hostile.events.json"), "w", encoding="utf-8") as f:
    json.dump(events, f, ensure_ascii=False, indent=1)
    f.write("\n")
