package replay

// pageHTML is the replay page. Everything is inline; CSP forbids any fetch.
// The script only enhances: the page reads the same without it. With the
// URL fragment #selftest the script exercises the page (opens a thinking
// block, counts scenes, checks that nothing was fetched) and records the
// results as data-* attributes on <body>, for the headless browser test.
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{csp}}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="muster {{.Version}}">
<link rel="icon" href="data:,">
<title>{{.Title}} · muster replay</title>
<style>
:root{--bg:#fbfbfa;--fg:#1d1f21;--muted:#6a6f76;--line:#e3e3df;--card:#fff;--user:#eef4ff;--userline:#b7cdfa;--term:#15171a;--termfg:#dfe3e8;--add:#e6f6ea;--addfg:#145c2a;--del:#fdecec;--delfg:#8a1f1f;--err:#c62828;--hunk:#f1f3f7;--think:#f7f5ff}
@media (prefers-color-scheme:dark){:root{--bg:#16181b;--fg:#e3e5e8;--muted:#9aa1aa;--line:#2c3036;--card:#1d2024;--user:#1b2638;--userline:#34507f;--term:#0d0e10;--termfg:#d6dbe1;--add:#16301f;--addfg:#9fe0b0;--del:#3a1a1a;--delfg:#f3aaaa;--hunk:#23272d;--think:#221f33}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
header.top{padding:20px 24px 14px;border-bottom:1px solid var(--line);background:var(--card)}
header.top h1{margin:0 0 6px;font-size:20px;line-height:1.3;overflow-wrap:anywhere}
.meta{display:flex;flex-wrap:wrap;gap:4px 16px;color:var(--muted);font-size:13px}
.meta b{color:var(--fg);font-weight:600}
.notice{margin-top:8px;font-size:13px;color:var(--muted)}
.notice.off{color:var(--err)}
.toolbar{margin-top:10px;display:flex;gap:8px}
button{font:inherit;font-size:13px;padding:3px 10px;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg);cursor:pointer}
main{max-width:1100px;margin:0 auto;padding:16px 24px 60px}
section.scene{margin:18px 0 28px;content-visibility:auto;contain-intrinsic-size:auto 600px}
nav.site{display:flex;gap:14px;font-size:13px;margin-bottom:8px}
nav.site a,nav.pager a{color:inherit}
nav.pager{display:flex;gap:14px;justify-content:center;font-size:13px;color:var(--muted);padding:8px}
.scene-head{display:flex;gap:10px;align-items:baseline;color:var(--muted);font-size:12px;margin-bottom:6px}
.scene-head a{color:inherit;text-decoration:none;font-weight:600}
.prompt{background:var(--user);border:1px solid var(--userline);border-radius:10px;padding:10px 14px;white-space:pre-wrap;overflow-wrap:anywhere}
.prompt.directive{border-style:dashed;opacity:.85}
.tag{display:inline-block;font-size:11px;padding:0 6px;border-radius:4px;border:1px solid var(--line);color:var(--muted);margin-right:6px}
.block{margin:10px 0 0 18px}
.text{white-space:pre-wrap;overflow-wrap:anywhere}
details.thinking{border-left:3px solid #9b8cf0;background:var(--think);border-radius:0 8px 8px 0;padding:4px 12px}
details.thinking>summary{cursor:pointer;color:var(--muted);font-size:13px}
details.thinking .body{white-space:pre-wrap;overflow-wrap:anywhere;font-size:14px;color:var(--muted);padding:4px 0}
.tool{border:1px solid var(--line);border-radius:8px;background:var(--card);overflow:hidden}
.tool.error{border-color:var(--err)}
.tool-head{display:flex;gap:8px;align-items:baseline;padding:5px 10px;border-bottom:1px solid var(--line);font-size:13px}
.tool-head .name{font-weight:600}
.tool-head .subject{color:var(--muted);overflow-wrap:anywhere;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
.tool-head .err{margin-left:auto;color:var(--err);font-weight:600}
.tool-head .raw{color:var(--muted);font-size:11px}
pre{margin:0;padding:8px 12px;overflow:auto;font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap;overflow-wrap:anywhere}
.term{background:var(--term);color:var(--termfg)}
.term .ps1{color:#7ee787;user-select:none}
.term.cmd{border-bottom:1px solid #2a2e34}
.tool.error .out{color:#ffb4b4}
.tool:not(.bash) .out{background:var(--bg)}
details.output>summary{cursor:pointer;font-size:12px;color:var(--muted);padding:3px 10px}
.clipped{font-size:12px;color:var(--muted);padding:2px 12px 6px}
table.diff{border-collapse:collapse;width:100%;font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
table.diff td{padding:0 8px;vertical-align:top;white-space:pre-wrap;overflow-wrap:anywhere}
table.diff td.n{width:1%;min-width:3em;color:var(--muted);text-align:right;user-select:none;white-space:nowrap}
table.diff td.s{width:1%;user-select:none}
tr.add{background:var(--add);color:var(--addfg)}
tr.del{background:var(--del);color:var(--delfg)}
tr.hunk{background:var(--hunk);color:var(--muted)}
.file-head{padding:4px 10px;font-size:12px;font-family:ui-monospace,monospace;background:var(--hunk);overflow-wrap:anywhere}
.file-head .counts{color:var(--muted);margin-left:8px}
.compaction{color:var(--muted);font-size:13px;border-top:1px dashed var(--line);padding-top:6px}
img.attachment{display:block;max-width:100%;max-height:480px;margin-top:8px;border-radius:6px;border:1px solid var(--line)}
.imgnote{font-size:12px;color:var(--muted)}
footer{color:var(--muted);font-size:12px;text-align:center;padding:20px}
.md{overflow-wrap:anywhere}
.md>:first-child{margin-top:0}.md>:last-child{margin-bottom:0}
.md p,.md ul,.md ol,.md table,.md blockquote{margin:0 0 8px}
.md h1,.md h2,.md h3,.md h4{margin:12px 0 6px;line-height:1.3}.md h1{font-size:19px}.md h2{font-size:17px}.md h3,.md h4{font-size:15px}
.md code{font:12.5px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--hunk);padding:1px 4px;border-radius:4px}
.md pre code{background:none;padding:0}
.md table{border-collapse:collapse}.md th,.md td{border:1px solid var(--line);padding:3px 8px}
.md blockquote{border-left:3px solid var(--line);padding-left:10px;color:var(--muted)}
.code{margin:0 0 8px;border:1px solid var(--line);border-radius:6px;overflow:hidden}
.code .lang{font-size:11px;color:var(--muted);padding:2px 10px;border-bottom:1px solid var(--line)}
.code pre{margin:0}
ul.todos{list-style:none;margin:0;padding:6px 12px}
ul.todos li{padding:1px 0}
ul.todos .box{display:inline-block;width:1.2em;color:var(--muted)}
ul.todos li.completed{color:var(--muted);text-decoration:line-through}
ul.todos li.in_progress{font-weight:600}
ul.todos li.cancelled{color:var(--muted);text-decoration:line-through wavy}
details.subagent{border-top:1px solid var(--line);padding:4px 10px 8px;background:var(--bg)}
details.subagent>summary{cursor:pointer;font-size:13px;color:var(--muted);padding:2px 0}
.sub-scene{border-left:3px solid var(--userline);margin:8px 0 0;padding-left:8px}
.sub-scene .block{margin-left:6px}
.rewind{color:#b45309;font-size:13px;border-top:2px dashed #d97706;padding:4px 0 6px}
.fork{color:#1d4ed8;font-size:13px;border-top:2px dashed #3b82f6;padding:4px 0 6px}
.todo-note{font-size:13px;color:var(--muted);padding:0 12px 6px}
.tool-head .exit{color:var(--muted);font-size:12px;margin-left:auto}
.tool-head .exit.bad{color:var(--err)}
{{codeCSS}}
</style>
</head>
<body data-scenes="{{len .Scenes}}" data-scene-total="{{.SceneTotal}}" data-redacted="{{.Redacted}}" data-redactions="{{.Redactions}}"{{with .Pager}} data-page="{{.Page}}" data-pages="{{.Pages}}"{{end}}>
<header class="top">
{{- if .Nav}}<nav class="site">{{range .Nav}}<a href="{{.URL}}">{{.Label}}</a>{{end}}</nav>{{end}}
<h1>{{.Title}}</h1>
<div class="meta">
<span>provider <b>{{.Provider}}</b></span>
{{- if .Model}}<span>model <b>{{.Model}}</b></span>{{end}}
{{- if .Started}}<span>started <b>{{.Started}}</b></span>{{end}}
{{- if .Ended}}<span>ended <b>{{.Ended}}</b></span>{{end}}
{{- if .Duration}}<span>duration <b>{{.Duration}}</b></span>{{end}}
<span><b>{{.Prompts}}</b> prompts</span>
<span><b>{{.ToolCalls}}</b> tool calls</span>
{{- if .Errors}}<span><b>{{.Errors}}</b> tool errors</span>{{end}}
{{- if .Compacted}}<span><b>{{.Compacted}}</b> compactions</span>{{end}}
</div>
<div class="meta">
{{- if .ID}}<span>session <b>{{.ID}}</b></span>{{end}}
{{- if .ForkedFrom}}<span>forked from <b>{{.ForkedFrom}}</b></span>{{end}}
{{- if .CWD}}<span>in <b>{{.CWD}}</b></span>{{end}}
{{- if gt (len .Models) 1}}<span>models {{range $i, $m := .Models}}{{if $i}}, {{end}}{{$m}}{{end}}</span>{{end}}
</div>
{{if .Redacted -}}
<div class="notice" id="redaction">Secrets redacted{{if .Pager}} on this page{{end}}: {{.Redactions}} credential-shaped string{{if ne .Redactions 1}}s{{end}} (API keys, tokens, private keys, passwords) replaced with [REDACTED]{{if .RedactedKinds}} ({{range $i, $k := .RedactedKinds}}{{if $i}}, {{end}}{{$k.N}} {{$k.Kind}}{{end}}){{end}}. Redaction is pattern-based and may miss secrets.</div>
{{- else -}}
<div class="notice off" id="redaction">Not redacted: this replay shows the transcript exactly as recorded and may contain secrets.</div>
{{- end}}
<div class="toolbar"><button type="button" id="expand">Expand all</button><button type="button" id="collapse">Collapse all</button></div>
</header>
<main>
{{template "pager" .Pager}}
{{range .Scenes}}
<section class="scene" id="scene-{{.N}}" data-scene="{{.N}}">
<div class="scene-head"><a href="#scene-{{.N}}">{{if .Preamble}}{{if .Forked}}After the fork{{else}}Before the first prompt{{end}}{{else}}Prompt {{.N}}{{end}}</a>{{if .Time}}<span>{{.Time}}</span>{{end}}</div>
{{- if .Forked}}<div class="fork">⑂ Forked from {{.Forked}} here: everything above is that conversation until the fork, shown once; this conversation goes on from here.</div>{{end}}
{{- if .Rewind}}<div class="rewind">↺ Rewound: the user went back to an earlier point; this prompt replaces what followed it above.</div>{{end}}
{{- if not .Preamble}}
<div class="prompt{{if .Directive}} directive{{end}}">{{if .Directive}}<span class="tag">directive{{if .Source}} · {{.Source}}{{end}}</span>{{end}}{{.Prompt}}
{{- range .Images}}{{if .URL}}<img class="attachment" src="{{.URL}}" alt="{{.Alt}}">{{else}}<div class="imgnote">{{.Alt}}: {{.Note}}</div>{{end}}{{end}}</div>
{{- end}}
{{- template "blocks" .Blocks}}
</section>
{{end}}
{{range .Unlinked}}<section class="scene unlinked"><div class="scene-head">A subagent whose call is not in the transcript</div>{{template "sub" .}}</section>{{end}}
{{template "pager" .Pager}}
</main>
<footer>Replay made by muster {{.Version}}{{if .Warnings}} · the parser skipped {{.Warnings}} malformed record{{if ne .Warnings 1}}s{{end}}{{end}}</footer>
<script>
(function () {
  "use strict";
  var body = document.body;
  function all(sel) { return Array.prototype.slice.call(document.querySelectorAll(sel)); }
  function setOpen(open) { all("details").forEach(function (d) { d.open = open; }); }
  document.getElementById("expand").addEventListener("click", function () { setOpen(true); });
  document.getElementById("collapse").addEventListener("click", function () { setOpen(false); });
  document.addEventListener("keydown", function (e) {
    if (e.target !== body || (e.key !== "j" && e.key !== "k")) { return; }
    var scenes = all("section.scene"), y = window.scrollY + 10, i;
    for (i = 0; i < scenes.length && scenes[i].offsetTop <= y; i++) {}
    var next = e.key === "j" ? scenes[i] : scenes[Math.max(i - 2, 0)];
    if (next) { next.scrollIntoView(); }
  });
  body.setAttribute("data-rendered-scenes", String(all("section.scene").length));
  body.setAttribute("data-ready", "1");
  if (location.hash !== "#selftest") { return; }
  var result = {};
  var d = document.querySelector("details.thinking");
  if (d) {
    var before = d.open;
    d.querySelector("summary").click();
    var opened = d.open;
    d.querySelector("summary").click();
    result.thinking = (!before && opened && !d.open) ? "ok" : "fail";
  } else {
    result.thinking = "none";
  }
  var meta = document.querySelector('meta[http-equiv="Content-Security-Policy"]');
  result.csp = meta ? meta.getAttribute("content") : "";
  result.resources = String(performance.getEntriesByType("resource").length);
  result.images = String(all("img.attachment").filter(function (i) { return i.complete && i.naturalWidth > 0; }).length);
  result.diffs = String(all("table.diff").length);
  result.terminals = String(all("pre.term.cmd").length);
  result.errors = String(all(".tool.error").length);
  Object.keys(result).forEach(function (k) { body.setAttribute("data-selftest-" + k, result[k]); });
  body.setAttribute("data-selftest", "done");
})();
</script>
</body>
</html>
{{define "pager"}}{{with .}}<nav class="pager">{{with .First}}<a href="{{.}}">« first</a>{{end}}{{with .Prev}}<a href="{{.}}" rel="prev">‹ previous</a>{{end}}<span>page {{.Page}} of {{.Pages}} · prompts {{.From}}–{{.To}}</span>{{with .Next}}<a href="{{.}}" rel="next">next ›</a>{{end}}{{with .Last}}<a href="{{.}}">last »</a>{{end}}</nav>{{end}}{{end}}
{{define "blocks"}}{{- range .}}
<div class="block">
{{- if eq .Kind "text"}}{{if .HTML}}<div class="md">{{.HTML}}</div>{{else}}<div class="text">{{.Text}}</div>{{end}}
{{- else if eq .Kind "thinking"}}<details class="thinking"><summary>Thinking</summary>{{if .HTML}}<div class="body md">{{.HTML}}</div>{{else}}<div class="body">{{.Text}}</div>{{end}}</details>
{{- else if eq .Kind "compaction"}}<div class="compaction">Context compacted{{if .Text}}: {{.Text}}{{end}}</div>
{{- else if .Tool}}{{template "tool" .Tool}}
{{- end}}
{{- range .Images}}{{if .URL}}<img class="attachment" src="{{.URL}}" alt="{{.Alt}}">{{else}}<div class="imgnote">{{.Alt}}: {{.Note}}</div>{{end}}{{end}}
</div>
{{- end}}
{{end}}
{{define "sub"}}<details class="subagent"><summary>Subagent: {{.Title}} · {{.Prompts}} prompt{{if ne .Prompts 1}}s{{end}}, {{.ToolCalls}} tool call{{if ne .ToolCalls 1}}s{{end}}</summary>
{{- range .Scenes}}<div class="sub-scene">{{if not .Preamble}}<div class="prompt{{if .Directive}} directive{{end}}">{{.Prompt}}</div>{{end}}{{template "blocks" .Blocks}}</div>{{end}}</details>{{end}}
{{define "tool" -}}
<div class="tool {{.Class}}{{if .Error}} error{{end}}">
<div class="tool-head"><span class="name">{{.Name}}</span>{{if .Raw}}<span class="raw">{{.Raw}}</span>{{end}}{{if .Subject}}<span class="subject">{{.Subject}}</span>{{end}}{{if .Exit}}<span class="exit{{if ne .Exit "0"}} bad{{end}}">exit {{.Exit}}</span>{{end}}{{if .Error}}<span class="err">error</span>{{end}}</div>
{{- if eq .Class "bash"}}<pre class="term cmd"><span class="ps1">$ </span>{{.Command}}</pre>{{end}}
{{- if .Todos}}<ul class="todos">{{range .Todos}}<li class="{{.Status}}"><span class="box">{{if eq .Status "completed"}}☑{{else if eq .Status "in_progress"}}◐{{else if eq .Status "cancelled"}}☒{{else}}☐{{end}}</span> {{.Text}}</li>{{end}}</ul>{{if .Note}}<div class="todo-note">{{.Note}}</div>{{end}}{{end}}
{{- if .Args}}<pre class="args">{{.Args}}</pre>{{end}}
{{- range .Files}}
<div class="file-head">{{.Op}} {{.Path}}<span class="counts">+{{.Added}} −{{.Removed}}</span></div>
<table class="diff">{{range .Lines}}<tr class="{{.Class}}"><td class="n">{{.Old}}</td><td class="n">{{.New}}</td><td class="s">{{.Sign}}</td><td>{{.Text}}</td></tr>{{end}}</table>
{{- if .Clipped}}<div class="clipped">… {{.Clipped}} more diff lines not shown</div>{{end}}
{{- end}}
{{- with .Sub}}{{template "sub" .}}{{end}}
{{- if .HasOut}}
{{- if .Long}}<details class="output"><summary>Output ({{.OutLines}} lines)</summary>{{end}}
<pre class="out{{if eq .Class "bash"}} term{{end}}">{{.Output}}</pre>
{{- if .Clipped}}<div class="clipped">… output clipped ({{.OutLines}} lines in all)</div>{{end}}
{{- if .Long}}</details>{{end}}
{{- end}}
</div>
{{- end}}`
