    // ───────────────────────────── styles ─────────────────────────────
    // The pending pulse runs three times, not forever: an endless animation kept Chromium drawing
    // frames, ≈ 0.1 s of CPU per second for every open tab while a run waited (docs/performance.md, T4).
    const CSS = `
.kopt{--k-text:var(--dsw-alias-label-primary,#1f2329);--k-dim:var(--dsw-alias-label-secondary,#4e5969);--k-faint:var(--dsw-alias-label-tertiary,#7b8391);
--k-border:var(--dsw-alias-border-l1,rgba(120,128,140,.22));--k-card:var(--dsw-alias-bg-layer-1,rgba(127,127,127,.045));--k-bg:var(--dsw-alias-bg-base,#fff);
--k-accent:var(--dsw-alias-brand-primary,#4d6bfe);--k-ok:var(--dsw-alias-state-success-primary,#1f8f5f);--k-bad:var(--dsw-alias-state-error-primary,#d64545);--k-warn:var(--dsw-alias-state-warn-primary,#c27c0e);--k-final:#8a5cf6;
color:var(--k-text);font:14px/1.55 system-ui,-apple-system,"Segoe UI","PingFang SC","Noto Sans CJK SC","Microsoft YaHei",sans-serif;}
.kopt *{box-sizing:border-box}
.kopt-panel{height:100%;overflow:auto;}
.kopt-inner{max-width:1080px;margin:0 auto;padding:16px 22px 40px;display:flex;flex-direction:column;gap:14px}
.kopt-focus{position:fixed;inset:0;z-index:2147483000;background:var(--k-bg);}
.kopt-focus .kopt-inner{max-width:none;padding:18px 28px 40px}
.kopt-head{display:flex;align-items:center;gap:10px}
.kopt-title{font-size:17px;font-weight:600;letter-spacing:.2px}
.kopt-sub{color:var(--k-faint);font-size:13px}
.kopt-grow{flex:1}
.kopt-btn{font:inherit;font-size:13px;line-height:20px;padding:4px 11px;border-radius:8px;border:1px solid var(--k-border);background:transparent;color:var(--k-dim);cursor:pointer;white-space:nowrap}
.kopt-btn:hover:not(:disabled){border-color:var(--k-accent);color:var(--k-accent)}
.kopt-btn:disabled{opacity:.5;cursor:not-allowed}
.kopt-btn:focus-visible,.kopt-chart:focus-visible,.kopt-link:focus-visible{outline:2px solid var(--k-accent);outline-offset:2px}
.kopt-primary{background:var(--k-accent);border-color:var(--k-accent);color:#fff}
.kopt-primary:hover:not(:disabled){color:#fff;filter:brightness(1.07)}
.kopt-danger{color:var(--k-bad);border-color:rgba(214,69,69,.45)}
.kopt-danger:hover:not(:disabled){color:var(--k-bad);border-color:var(--k-bad)}
.kopt-card{border:1px solid var(--k-border);border-radius:12px;background:var(--k-card);padding:12px 16px}
.kopt-card h3{margin:0 0 8px;font-size:14px;font-weight:600;display:flex;align-items:center;gap:8px}
.kopt-controls{display:flex;flex-direction:column;gap:8px}
.kopt-row{display:flex;flex-wrap:wrap;align-items:center;gap:8px 12px}
.kopt-rowlabel{font-weight:600;font-size:13px;min-width:64px;color:var(--k-dim)}
.kopt-field{display:inline-flex;align-items:center;gap:6px;font-size:13px;color:var(--k-dim)}
.kopt-input,.kopt-select{font:inherit;font-size:13px;padding:3px 8px;border-radius:7px;border:1px solid var(--k-border);background:var(--k-bg);color:var(--k-text);max-width:260px}
.kopt-input{width:76px}
.kopt-status{font-size:13px;color:var(--k-dim)}
.kopt-status.on{color:var(--k-accent);font-weight:500}
.kopt-note{font-size:12.5px;color:var(--k-faint)}
.kopt-seg{display:inline-flex;border:1px solid var(--k-border);border-radius:8px;overflow:hidden}
.kopt-seg button{font:inherit;font-size:13px;padding:3px 12px;border:0;background:transparent;color:var(--k-dim);cursor:pointer}
.kopt-seg button.sel{background:var(--k-accent);color:#fff}
.kopt-seg button:disabled{cursor:not-allowed;opacity:.6}
.kopt-chips{display:flex;flex-wrap:wrap;gap:8px}
.kopt-chip{display:inline-flex;align-items:center;gap:6px;padding:2px 11px;border-radius:999px;border:1px solid var(--k-border);font-size:13px;line-height:22px;color:var(--k-dim);white-space:nowrap;font-variant-numeric:tabular-nums}
.kopt-chip.ok{color:var(--k-ok);border-color:rgba(31,143,95,.45);font-weight:500}
.kopt-chip.warn{color:var(--k-warn);border-color:rgba(194,124,14,.45)}
.kopt-chip.final{color:var(--k-final);border-color:rgba(138,92,246,.45)}
.kopt-tag{display:inline-block;font-size:11.5px;line-height:17px;padding:0 7px;border-radius:5px;border:1px solid var(--k-border);color:var(--k-faint);white-space:nowrap}
.kopt-tag.ok{color:var(--k-ok);border-color:rgba(31,143,95,.4)}
.kopt-tag.bad{color:var(--k-bad);border-color:rgba(214,69,69,.4)}
.kopt-tag.warn{color:var(--k-warn);border-color:rgba(194,124,14,.4)}
.kopt-tag.accent{color:var(--k-accent);border-color:rgba(77,107,254,.4)}
.kopt-tag.stuck{color:#fff;background:var(--k-bad);border-color:var(--k-bad);font-weight:600}
.kopt-chartwrap{position:relative}
.kopt-chart{display:block;width:100%;height:auto;border-radius:8px;cursor:crosshair;outline:none;color:var(--k-text)}
.kopt-legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;color:var(--k-faint);margin-top:4px}
.kopt-legend i{font-style:normal;margin-right:4px}
.kopt-warnbox{font-size:12.5px;color:var(--k-warn);background:rgba(194,124,14,.07);border:1px solid rgba(194,124,14,.3);border-radius:8px;padding:6px 10px;margin-top:8px}
.kopt-pop{position:absolute;z-index:5;box-sizing:border-box;width:340px;max-width:calc(100% - 8px);max-height:380px;overflow:auto;background:var(--k-bg);border:1px solid var(--k-border);border-radius:10px;box-shadow:0 8px 28px rgba(0,0,0,.16);padding:10px 12px;font-size:13px}
.kopt-pop h4{margin:0;font-size:14px;display:flex;align-items:center;gap:8px}
.kopt-pop .kopt-x{margin-left:auto;border:0;background:transparent;cursor:pointer;color:var(--k-faint);font-size:15px}
.kopt-sec{margin-top:8px}
.kopt-sec > b{display:block;font-size:12px;color:var(--k-dim);margin-bottom:2px}
.kopt-pre{margin:2px 0 0;padding:6px 8px;font:12px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,"Noto Sans Mono CJK SC",monospace;white-space:pre-wrap;word-break:break-word;background:rgba(127,127,127,.08);border-radius:6px;max-height:200px;overflow:auto}
.kopt-pre.old{border-left:3px solid rgba(214,69,69,.6)}
.kopt-pre.new{border-left:3px solid rgba(31,143,95,.6)}
.kopt-grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:14px}
.kopt-kv{display:grid;grid-template-columns:auto 1fr;gap:3px 12px;font-size:13px}
.kopt-kv dt{color:var(--k-faint)}
.kopt-kv dd{margin:0;word-break:break-word}
.kopt-approach{font-size:15px;font-weight:500;margin:4px 0}
.kopt-stuck{border-color:rgba(214,69,69,.55);background:rgba(214,69,69,.05)}
.kopt-revs{display:flex;flex-direction:column;gap:8px;max-height:260px;overflow:auto}
.kopt-rev{font-size:13px;display:flex;gap:10px}
.kopt-rev > span:first-child{flex:none;min-width:70px;color:var(--k-faint)}
.kopt-table{width:100%;border-collapse:collapse;font-size:13px}
.kopt-table th{text-align:left;font-weight:500;color:var(--k-faint);font-size:12px;padding:4px 8px;border-bottom:1px solid var(--k-border);position:sticky;top:0;background:var(--k-bg);white-space:nowrap}
.kopt-table td{padding:5px 8px;border-bottom:1px solid var(--k-border);vertical-align:top;font-variant-numeric:tabular-nums}
.kopt-table tr.sel td{background:rgba(77,107,254,.08)}
.kopt-table tr.clickable{cursor:pointer}
.kopt-table tr.clickable:hover td{background:rgba(127,127,127,.06)}
.kopt-tablewrap{max-height:560px;overflow:auto;margin-top:8px;border:1px solid var(--k-border);border-radius:8px}
.kopt-cmd{font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,monospace;color:var(--k-dim);word-break:break-all}
.kopt-link{border:0;background:transparent;color:var(--k-accent);cursor:pointer;font:inherit;font-size:13px;padding:2px 0}
.kopt-empty{padding:26px 6px;text-align:center;color:var(--k-dim)}
.kopt-empty b{display:block;font-size:16px;color:var(--k-text);margin-bottom:6px}
.kopt-menu{position:absolute;right:0;top:calc(100% + 4px);z-index:6;background:var(--k-bg);border:1px solid var(--k-border);border-radius:8px;box-shadow:0 6px 20px rgba(0,0,0,.12);padding:4px;display:flex;flex-direction:column;min-width:150px}
.kopt-menu button{font:inherit;font-size:13px;text-align:left;border:0;background:transparent;padding:6px 10px;border-radius:6px;cursor:pointer;color:var(--k-text)}
.kopt-menu button:hover{background:rgba(127,127,127,.1)}
.kopt-launch{display:inline-flex;align-items:center}
.kopt-launch .kopt-btn{border-radius:999px;padding:2px 10px;font-size:12.5px}
.kopt-card-float{position:fixed;z-index:2147483001;width:380px;max-width:calc(100vw - 16px);overflow:auto;background:var(--k-bg);border:1px solid var(--k-border);border-radius:12px;box-shadow:0 12px 36px rgba(0,0,0,.2);padding:14px 16px;display:flex;flex-direction:column;gap:10px}
.kopt-card-float h3{margin:0;font-size:15px}
.kopt-strip{display:flex;align-items:center;gap:12px;padding:6px 12px;margin:0 0 6px;border:1px solid rgba(77,107,254,.35);background:rgba(77,107,254,.06);border-radius:10px;font-size:13px}
.kopt-bar{flex:1;min-width:80px;max-width:260px;height:6px;border-radius:3px;background:rgba(127,127,127,.18);overflow:hidden}
.kopt-bar > div{height:100%;background:var(--k-accent);border-radius:3px;transition:width .4s}
.kopt-bar.over > div{background:var(--k-warn)}
.kopt-err{color:var(--k-bad);font-size:12.5px}
.kopt-okbox{font-size:12.5px;color:var(--k-ok);background:rgba(31,143,95,.06);border:1px solid rgba(31,143,95,.3);border-radius:8px;padding:6px 10px;margin-bottom:8px}
.kopt-card .kopt-warnbox[data-kopt=axis-rule]{margin:0 0 8px}
.kopt-sw{display:inline-block;width:10px;height:10px;border-radius:50%;margin-right:6px;vertical-align:0}
.kopt-on{border-color:var(--k-accent);color:var(--k-accent)}
.kopt-picker{min-width:300px;max-width:min(460px,calc(100vw - 24px));max-height:min(420px,70vh);overflow:auto}
.kopt-pick{display:flex;align-items:center;gap:8px;padding:5px 10px;border-radius:6px;font-size:13px;cursor:pointer}
.kopt-pick:hover{background:rgba(127,127,127,.1)}
.kopt-pick-title{flex:1;min-width:0;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.kopt-cmp-pop{width:auto;min-width:220px;max-width:420px;transform:translateY(-50%);pointer-events:none}
.kopt-cmp-pop > div{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.kopt-row-err{max-width:340px;white-space:pre-wrap;word-break:break-word;margin-top:3px}
@keyframes kopt-pulse{0%,100%{opacity:1}50%{opacity:.25}}
.kopt-pulse{animation:kopt-pulse 1.2s ease-in-out 3}
@media (prefers-reduced-motion: reduce){.kopt-pulse{animation:none}}
`
    export function installCss() {
      if (typeof document === 'undefined' || document.getElementById('kopt-style')) return () => {}
      const el = document.createElement('style')
      el.id = 'kopt-style'
      el.textContent = CSS
      document.head.appendChild(el)
      return () => el.remove()
    }

