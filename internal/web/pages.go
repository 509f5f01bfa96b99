package web

import (
	"html/template"
	"sync"

	"github.com/musterhq/muster/internal/transcript"
)

// pages are the UI's pages. Their data is redacted before they run (see
// pageReply), so a template never needs to think about secrets; text is
// shortened here, after redaction, so that no secret is cut in half first.
// They are parsed on first use: every muster command links this package.
var pages = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("pages").Funcs(template.FuncMap{
		"headline": transcript.Headline,
		// clip keeps a chart's row label inside its column.
		"clip": func(s string) string {
			if r := []rune(s); len(r) > 38 {
				return "…" + string(r[len(r)-37:])
			}
			return s
		},
		// The script is a constant of this package, never data.
		"liveScript": func() template.JS { return template.JS(liveScript) },
	}).Parse(`
{{define "head"}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{{.}} · muster</title>
<style>
:root{--bg:#fbfbfa;--fg:#1d1f21;--muted:#6a6f76;--line:#e3e3df;--card:#fff;--accent:#2f5bd3}
@media (prefers-color-scheme:dark){:root{--bg:#16181b;--fg:#e3e5e8;--muted:#9aa1aa;--line:#2c3036;--card:#1d2024;--accent:#8fb0ff}}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
nav{display:flex;gap:18px;align-items:baseline;padding:12px 24px;border-bottom:1px solid var(--line);background:var(--card)}
nav b{font-size:16px}
a{color:var(--accent);text-decoration:none}
main{max-width:1200px;margin:0 auto;padding:16px 24px}
form{display:flex;gap:8px;margin-bottom:12px}
input,select,button{font:inherit;padding:4px 8px;border:1px solid var(--line);border-radius:6px;background:var(--card);color:var(--fg)}
input[type=search]{flex:1}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--muted);font-weight:600;font-size:12px}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.when,td.prov{white-space:nowrap;color:var(--muted)}
td.cwd{color:var(--muted);font-size:12px;overflow-wrap:anywhere}
.muted{color:var(--muted)}
.snippet{font-size:12px;color:var(--muted);margin-top:2px;overflow-wrap:anywhere}
mark{background:#ffe58a;color:#000;border-radius:2px;padding:0 1px}
section.pane{border:1px solid var(--line);border-radius:8px;background:var(--card);margin:0 0 12px;overflow:hidden}
section.pane.needs{border-color:#d97706}
.pane-head{display:flex;gap:10px;align-items:baseline;padding:6px 10px;border-bottom:1px solid var(--line);flex-wrap:wrap}
.pane-head .prov,.pane-head .act{color:var(--muted);font-size:12px}
.pane-head .state,.pane-head .run{font-size:12px;padding:0 6px;border-radius:4px;border:1px solid var(--line)}
.pane-head .att{color:#b45309;font-weight:600;font-size:12px}
.pane-head .term{margin-left:auto;font-size:13px}
.pane-head .cost{color:#555;font-size:12px}.pane-head .cost.over{color:#b91c1c;font-weight:600}
.pane-head .conv{font-size:13px}
.pane-head .resets,.pane-head .cont{color:#b45309;font-size:12px}.pane-head .branch{font:12px ui-monospace,monospace;color:var(--muted)}
@media (max-width:600px){nav{padding:10px 12px;gap:12px}main{padding:10px 12px}.pane-head .prov,.pane-head .act{display:none}pre.screen{max-height:200px}}
.pane-meta{color:var(--muted);font-size:12px;padding:4px 10px 0;overflow-wrap:anywhere}
section.pane.ext{border-style:dashed}section.pane.down,section.item.down{opacity:.55}.pane-meta.down,.msg.down{color:#b45309}
#hosts{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:13px;margin:0 0 10px}#hosts .hstate{font-size:12px;padding:0 6px;border-radius:4px;border:1px solid var(--line)}
#hosts .down .hstate{color:#b45309;border-color:#d97706}#hosts .hnote{color:var(--muted);font-size:12px;overflow-wrap:anywhere}.pane-meta.by{padding-bottom:6px}.pane-meta code{font-size:12px}
.reason{color:#b45309;font-size:13px;padding:2px 10px}
pre.screen{margin:6px 0 0;padding:8px 10px;background:#15171a;color:#dfe3e8;font:12px/1.35 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow:auto;max-height:420px}
#drawer section.item{border:1px solid #d97706;border-radius:8px;background:var(--card);margin:0 0 12px;padding:6px 10px;overflow:hidden}
.item-head{display:flex;gap:10px;align-items:baseline;flex-wrap:wrap}.item-head .why{color:#b45309;font-size:12px}
.item .msg{font-size:13px;overflow-wrap:anywhere}.item .q{font-weight:600;margin-top:4px}
pre.subj{margin:4px 0;padding:4px 8px;background:#f3f4f6;font:12px ui-monospace,monospace;white-space:pre-wrap;overflow-wrap:anywhere}
.answers,.acts{display:flex;flex-wrap:wrap;gap:6px;margin-top:6px}.answers button{min-height:36px;text-align:left;max-width:100%;overflow-wrap:anywhere}
.answers button.once,.answers button.always{border-color:#15803d}.answers button.deny{border-color:#b91c1c}
.item .result{font-size:13px;margin-top:4px}.item .result.refused{color:#b91c1c;font-weight:600}
.acts code{font-size:12px;padding:2px 6px;background:#f3f4f6;border-radius:4px}
.tiles{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0 16px}
.tile{border:1px solid var(--line);border-radius:8px;background:var(--card);padding:8px 14px;color:var(--muted);font-size:12px}
.tile b{display:block;color:var(--fg);font-size:20px}
section.chart{border:1px solid var(--line);border-radius:8px;background:var(--card);padding:8px 12px;margin:0 0 14px}
section.chart h2{font-size:14px;margin:0 0 6px}
svg rect{fill:var(--accent)}
svg .lbl,svg .val,svg .axis{fill:var(--muted);font-size:11px}
svg .grid{stroke:var(--line)}
nav.pager{display:flex;gap:16px;justify-content:center;padding:12px;border:0;background:none}
footer{color:var(--muted);font-size:12px;text-align:center;padding:20px}
</style></head><body>
<nav><b>muster</b><a href="/">History</a><a href="/live">Live</a><a href="/stats">Stats</a></nav>
<main>{{end}}
{{define "foot"}}</main><footer>muster {{.}} · read-only</footer></body></html>{{end}}

{{define "history"}}{{template "head" "History"}}
<form method="get" action="/">
<input type="search" name="q" value="{{.Q}}" placeholder="Search everything said: prompts, replies, commands, outputs" aria-label="search">
<select name="provider" aria-label="provider"><option value="">all providers</option>{{range .Providers}}<option value="{{.}}"{{if eq . $.Provider}} selected{{end}}>{{.}}</option>{{end}}</select>
<button type="submit">Search</button>
</form>
<p class="muted" id="count">{{if .Rows}}{{.From}}–{{.To}}{{else}}0{{end}} of {{if ge .Total 0}}{{.Total}}{{else}}more than {{.To}}{{end}} {{if .Q}}matches for “{{.Q}}”{{else}}sessions{{end}}.</p>
{{if .Rows}}<table id="history">
<thead><tr><th>Last active</th><th>Provider</th><th>Title</th><th>Folder</th><th>Prompts</th><th>Tools</th></tr></thead>
<tbody>{{range .Rows}}<tr><td class="when">{{.When}}</td><td class="prov">{{.Provider}}</td><td>{{if .ForkedFrom}}<span class="fork" title="forked from {{.Provider}}:{{.ForkedFrom}}">⑂</span> {{end}}<a href="{{.Link}}">{{with .Title}}{{.}}{{else}}{{with headline .FirstPrompt}}{{.}}{{else}}(untitled){{end}}{{end}}</a>{{if .Snippet}}<div class="snippet">{{range .Snippet}}{{if .Mark}}<mark>{{.Text}}</mark>{{else}}{{.Text}}{{end}}{{end}}</div>{{end}}</td><td class="cwd">{{.CWD}}</td><td class="num">{{.PromptCount}}</td><td class="num">{{.ToolCallCount}}</td></tr>
{{end}}</tbody></table>
{{else}}<p>No sessions found.</p>{{end}}
{{if or .Prev .Next}}<nav class="pager">{{with .Prev}}<a href="{{.}}" rel="prev">← Newer</a>{{end}}<span class="muted">page {{.Page}}</span>{{with .Next}}<a href="{{.}}" rel="next">Older →</a>{{end}}</nav>{{end}}
{{template "foot" .Version}}{{end}}

{{define "live"}}{{template "head" "Live"}}
<p class="muted">Panes of the running daemon{{if not .Interactive}}, read-only{{end}}. <span id="status">snapshot</span> <span id="total">{{.Total}}</span></p>
<p class="muted" id="extnote"{{if not .ExternalError}} hidden{{end}}>{{.ExternalError}}</p>
<p class="muted" id="withheld"{{if not .ScreensWithheld}} hidden{{end}}>Screens are shown only with the token: open the URL <code>muster serve</code> printed.</p>
<div id="hosts">{{range .Hosts}}<div class="hoststate {{if .Up}}up{{else}}down{{end}}" data-host="{{.Name}}"><b>{{.Name}}</b> <span class="hstate">{{.State}}</span>{{with .Note}} <span class="hnote">{{.}}</span>{{end}}</div>{{end}}</div>
<div id="drawer">{{range .Items}}<section class="item{{if .Down}} down{{end}}" data-id="{{.ID}}" data-session="{{.Session}}"><div class="item-head"><b>{{.Session}}</b> <span class="why">{{.Reason}}</span></div>{{with .Down}}<div class="msg down">{{.}}</div>{{end}}{{if .Message}}<div class="msg">{{.Message}}</div>{{end}}{{with .Dialog}}<div class="q">{{.Question}}</div>{{with .Subject}}<pre class="subj">{{.}}</pre>{{end}}{{end}}{{if .Screen}}<pre class="screen">{{.Screen}}</pre>{{end}}</section>{{end}}</div>
<div id="sessions">
{{- if not .Running}}<p>No daemon running: start one with <code>muster daemon</code> to see live sessions.</p>
{{- else if not .Local}}<p>The daemon runs no sessions.</p>{{end}}
{{- range .Sessions}}
<section class="pane{{if .Attention}} needs{{end}}{{if .External}} ext{{end}}{{if .Host}} remote{{end}}{{if .Down}} down{{end}}" data-name="{{.Name}}"{{with .Host}} data-host="{{.}}"{{end}}><div class="pane-head"><b>{{.Name}}</b><span class="prov">{{.Provider}}</span><span class="state {{.State}}">{{.Status}}</span>{{if .Activity}}<span class="act">{{.Activity}}</span>{{end}}{{if .Attention}}<span class="att">{{.Attention}} need{{if eq .Attention 1}}s{{end}} you</span>{{end}}{{if .Resets}}<span class="resets">{{.Resets}}</span>{{end}}{{if .Continues}}<span class="cont">muster continues it then</span>{{end}}{{if .Branch}}<span class="branch" title="{{.Worktree}}">⎇ {{.Branch}}</span>{{end}}{{if .Cost}}<span class="cost{{if .Over}} over{{end}}">{{.Cost}}</span>{{end}}{{if and (eq .State "running") (not .Down)}}<a class="term" href="/term/{{.Name}}">terminal →</a>{{end}}{{if .Link}}<a class="conv" href="{{.Link}}">conversation →</a>{{end}}</div>
{{- if or .Title .CWD}}<div class="pane-meta">{{.Title}}{{if and .Title .CWD}} · {{end}}{{.CWD}}</div>{{end}}
{{- if .External}}<div class="pane-meta by">run by {{.RunBy}}, not muster{{if .Open}}; open it in a pane: <code>{{.Open}}</code>{{end}}</div>{{end}}
{{- with .Down}}<div class="pane-meta down">{{.}}</div>{{end}}
{{- range .Reasons}}<div class="reason">{{.}}</div>{{end}}
{{- if .Screen}}<pre class="screen">{{.Screen}}</pre>{{end}}</section>
{{- end}}
</div>
<script nonce="{{.Nonce}}">{{liveScript}}</script>
{{template "foot" .Version}}{{end}}

{{define "stats"}}{{template "head" "Stats"}}
<form method="get" action="/stats">
<select name="days" aria-label="period">{{range $d := .Periods}}<option value="{{$d}}"{{if eq $d $.Days}} selected{{end}}>last {{$d}} days</option>{{end}}</select>
<select name="provider" aria-label="provider"><option value="">all providers</option>{{range .Providers}}<option value="{{.}}"{{if eq . $.Provider}} selected{{end}}>{{.}}</option>{{end}}</select>
<button type="submit">Show</button>
</form>
<p class="muted">{{.From}} to {{.To}}, by the day each session started{{if .Provider}}, {{.Provider}} only{{end}}.</p>
<div class="tiles">
<div class="tile"><b>{{.Total.Sessions}}</b>sessions</div><div class="tile"><b>{{.Total.Prompts}}</b>prompts</div>
<div class="tile"><b>{{.Total.ToolCalls}}</b>tool calls</div><div class="tile"><b>{{.Tokens}}</b>tokens</div>
<div class="tile"><b>{{.Cost}}</b>approximate cost</div><div class="tile"><b>{{.Total.FilesEdited}}</b>files edited <span class="muted">+{{.Total.LinesAdded}} −{{.Total.LinesRemoved}}</span></div>
</div>
{{if .Total.UnpricedModels}}<p class="muted">Not priced (no price known): {{range $i, $m := .Total.UnpricedModels}}{{if $i}}, {{end}}{{$m}}{{end}}.</p>{{end}}
{{if .Unanalyzed}}<p class="muted">{{.Unanalyzed}} session(s) could not be read in full and count only in the totals.</p>{{end}}
{{range .Charts}}<section class="chart"><h2>{{.Title}}</h2>
{{- if .Empty}}<p class="muted">Nothing in this period.</p>{{else}}
<svg role="img" aria-label="{{.Title}}" viewBox="0 0 {{.Width}} {{.Height}}" width="100%" preserveAspectRatio="xMinYMin meet" class="{{if .Vertical}}cols{{else}}rows{{end}}">
{{- if .Vertical}}<text x="36" y="14" class="axis" text-anchor="end">{{.Axis}}</text><line x1="40" y1="10" x2="{{.Width}}" y2="10" class="grid"/><line x1="40" y1="190" x2="{{.Width}}" y2="190" class="grid"/>{{end}}
{{- $v := .Vertical}}{{range .Bars}}<g><title>{{.Label}}: {{.Value}}</title><rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" rx="2"/>
{{- if $v}}{{if .ShowTop}}<text x="{{.LabelX}}" y="{{.LabelY}}" text-anchor="middle" class="lbl">{{.Label}}</text>{{end}}
{{- else}}<text x="{{.LabelX}}" y="{{.LabelY}}" text-anchor="end" class="lbl">{{clip .Label}}</text><text x="{{.ValueX}}" y="{{.LabelY}}" class="val">{{.Value}}</text>{{end}}</g>
{{end}}</svg>{{end}}</section>
{{end}}
{{if .Files}}<section class="chart"><h2>Most edited files</h2><table><thead><tr><th>File</th><th>Edits</th><th>Added</th><th>Removed</th></tr></thead><tbody>
{{range .Files}}<tr><td class="cwd">{{.Path}}</td><td class="num">{{.Edits}}</td><td class="num">+{{.Added}}</td><td class="num">−{{.Removed}}</td></tr>{{end}}
</tbody></table></section>{{end}}
{{template "foot" .Version}}{{end}}

{{define "error"}}{{template "head" "Error"}}
<p>{{.Message}}</p><p><a href="/">Back to the history</a></p>
{{template "foot" .Version}}{{end}}
`))
})
