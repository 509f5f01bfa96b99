package launcher

import (
	"errors"
	"strings"
	"testing"
)

const id = "0b5a9a8e-1c2d-4e5f-8a9b-0c1d2e3f4a5b"

func TestRenderResume(t *testing.T) {
	tests := []struct {
		name string
		tmpl string
		id   string
		want string
	}{
		{"placeholder word", "agent --resume {session_id}", id, "agent --resume " + id},
		{"placeholder first of several args", "agent resume {session_id} --yolo", id, "agent resume " + id + " --yolo"},
		{"placeholder twice", "agent {session_id} --log {session_id}", "x", "agent x --log x"},
		{"appended", "agent --resume", id, "agent --resume " + id},
		{"appended needs quoting", "agent --resume", "a b'c", `agent --resume 'a b'\''c'`},
		{"placeholder needs quoting", "agent -r {session_id} -v", "$(rm -rf ~)", "agent -r '$(rm -rf ~)' -v"},
		{"appended before comment", "agent --resume # note", "s1", "agent --resume s1 # note"},
		{"appended before trailing newline", "agent --resume\n", "s1", "agent --resume s1\n"},
		{"appended after escaped space", `my\ agent --resume`, "s1", `my\ agent --resume s1`},
		{"appended after quoted arg", `agent --name 'x y'`, "s1", `agent --name 'x y' s1`},
		{"appended after adjacent quotes", `agent 'a'"b"`, "s1", `agent 'a'"b" s1`},
		{"appended after ansi-c", `agent $'\t'`, "s1", `agent $'\t' s1`},
		{"appended after redirect", "agent --resume 2>/dev/null", "s1", "agent --resume 2>/dev/null s1"},
		{"appended with substitution", `"$(command -v agent)" resume`, "s1", `"$(command -v agent)" resume s1`},
		{"operators in quotes are not compositions", `agent --msg 'a && b | c; d'`, "s1", `agent --msg 'a && b | c; d' s1`},
		{"placeholder in composition", "cd /w && agent --resume {session_id} | tee log", "s1", "cd /w && agent --resume s1 | tee log"},
		{"placeholder after redirect target", "agent 2>/dev/null {session_id}", "s1", "agent 2>/dev/null s1"},
		{"placeholder with tabs", "agent\t{session_id}\t-v", "s1", "agent\ts1\t-v"},
		{"line continuation before placeholder", "agent \\\n {session_id}", "s1", "agent \\\n s1"},
		{"leading comment line", "# resume\nagent -r", "s1", "# resume\nagent -r s1"},
		{"appended before trailing semicolon", "agent -r;", "s1", "agent -r s1;"},
		{"appended to a timed command", "time agent -r", "s1", "time agent -r s1"},
		{"appended after here-string", "agent <<< hi", "s1", "agent <<< hi s1"},
		{"placeholder in a compound command", "if true; then agent -r {session_id} ; fi", "s1", "if true; then agent -r s1 ; fi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RenderResume(tt.tmpl, tt.id)
			if err != nil {
				t.Fatalf("RenderResume(%q): %v", tt.tmpl, err)
			}
			if got != tt.want {
				t.Errorf("RenderResume(%q, %q) = %q, want %q", tt.tmpl, tt.id, got, tt.want)
			}
		})
	}
}

func TestParseTemplateRefusals(t *testing.T) {
	tests := []struct {
		name     string
		tmpl     string
		want     error
		offset   int
		contains string // in the error message
	}{
		{"empty", "", ErrEmptyCommand, 0, "resume command is empty"},
		{"blank", " \t\n", ErrEmptyCommand, 0, "is empty"},
		{"only comment", "# nothing", ErrEmptyCommand, 0, "is empty"},
		{"single-quoted placeholder", "agent -r '{session_id}'", ErrQuotedPlaceholder, 9, `"'{session_id}'"`},
		{"double-quoted placeholder", `agent -r "{session_id}"`, ErrQuotedPlaceholder, 9, `"\"{session_id}\""`},
		{"ansi-c placeholder", `agent -r $'{session_id}'`, ErrQuotedPlaceholder, 9, "quoted placeholder"},
		{"escaped placeholder", `agent -r \{session_id}`, ErrQuotedPlaceholder, 9, "quoted placeholder"},
		{"placeholder split by quotes", `agent -r '{session'_id}`, ErrQuotedPlaceholder, 9, "quoted placeholder"},
		{"option embedded", "agent --id={session_id}", ErrEmbeddedPlaceholder, 6, `"--id={session_id}"`},
		{"prefix embedded", "agent x{session_id}", ErrEmbeddedPlaceholder, 6, `"x{session_id}"`},
		{"suffix embedded", "agent {session_id}.jsonl", ErrEmbeddedPlaceholder, 6, "embedded"},
		{"doubled", "agent {session_id}{session_id}", ErrEmbeddedPlaceholder, 6, "embedded"},
		{"in substitution", "agent $(echo {session_id})", ErrEmbeddedPlaceholder, 6, "embedded"},
		{"touching operator", "agent {session_id};", ErrEmbeddedPlaceholder, 6, `"{session_id};"`},
		{"after open paren", "(agent {session_id})", ErrEmbeddedPlaceholder, 7, "embedded"},
		{"redirect target", "agent > {session_id}", ErrPlaceholderRedirect, 8, "redirection target"},
		{"in comment", "agent -r # {session_id}", ErrPlaceholderInComment, 9, "comment"},
		{"ends inside single quote", "agent -r 'abc", ErrUnterminatedQuote, 9, "unterminated quote"},
		{"ends inside double quote", `agent -r "abc`, ErrUnterminatedQuote, 9, "unterminated quote"},
		{"dangling escape", `agent -r \`, ErrDanglingEscape, 9, "dangling escape"},
		{"placeholder-free pipeline", "agent -r | tee log", ErrComposition, 9, `("|" at byte 9)`},
		{"placeholder-free sequence", "cd /w; agent -r", ErrComposition, 5, "composition"},
		{"placeholder-free and", "cd /w && agent -r", ErrComposition, 6, "composition"},
		{"placeholder-free background", "agent -r &", ErrComposition, 9, "composition"},
		{"placeholder-free subshell", "(agent -r)", ErrComposition, 0, "composition"},
		{"placeholder-free newline", "agent\nagent -r", ErrComposition, 5, "composition"},
		{"placeholder as command", "{session_id} --resume", ErrPlaceholderCommand, 0, "command name"},
		{"placeholder as command after assignment", "X=1 {session_id}", ErrPlaceholderCommand, 4, "command name"},
		{"placeholder as command after &&", "cd /w && {session_id}", ErrPlaceholderCommand, 9, "command name"},
		{"here-document", "agent <<EOF", ErrHereDoc, 6, "here-document"},
		{"redirect without target", "agent -r >", ErrRedirectTarget, 9, "no target"},
		{"syntax error", "agent )", ErrSyntax, 6, `")"`},
		{"only an assignment", "X=1", ErrEmptyCommand, 0, `no command to run ("X=1" at byte 0)`},
		{"only a redirection", "> log", ErrEmptyCommand, 0, "no command to run"},
		{"only a builtin", "export A=1", ErrEmptyCommand, 0, "no command to run"},
		{"not utf-8", "agent \xff", ErrSyntax, 6, "not UTF-8"},
		{"carriage return", "agent -r\r\n", ErrSyntax, 8, "carriage return"},
		{"comment ending in backslash", "agent -r # x\\\nmore", ErrSyntax, 9, "comment ends with a backslash"},
		{"placeholder outside a word", "for {session_id} in a; do b; done", ErrEmbeddedPlaceholder, 4, "embedded"},
		{"placeholder-free if", "if true; then agent -r; fi", ErrComposition, 0, `("if" at byte 0)`},
		{"placeholder-free block", "{ agent -r; }", ErrComposition, 0, "composition"},
		{"first of several refusals", "agent '{session_id}' # {session_id}", ErrQuotedPlaceholder, 6, "quoted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTemplate(tt.tmpl)
			if !errors.Is(err, tt.want) {
				t.Fatalf("ParseTemplate(%q) error = %v, want %v", tt.tmpl, err, tt.want)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			if !strings.Contains(msg, tt.contains) {
				t.Errorf("error %q does not contain %q", msg, tt.contains)
			}
			te, ok := errors.AsType[*TemplateError](err)
			if !ok {
				t.Fatalf("error %T is not a *TemplateError", err)
			}
			if te.Offset != tt.offset {
				t.Errorf("offset = %d, want %d (%v)", te.Offset, tt.offset, err)
			}
			if tt.want != ErrEmptyCommand && !strings.Contains(msg, "byte") {
				t.Errorf("error %q does not give a byte offset", msg)
			}
		})
	}
}

func TestValidateLaunch(t *testing.T) {
	tests := []struct {
		name   string
		launch string
		resume string
		want   error // nil: accepted
	}{
		{"simple", "my-agent --flag", "", nil},
		{"simple with resume", "my-agent --flag", "my-agent --resume {session_id}", nil},
		{"env prefix", "FOO=1 my-agent", "", nil},
		{"substitution is not composition", `"$(command -v agent)" --x`, "", nil},
		{"backticks are not composition", "`which agent` --x", "", nil},
		{"quoted operators", `agent --msg 'a | b && c'`, "", nil},
		{"escaped operator", `agent a\;b`, "", nil},
		{"trailing comment", "agent --x # my agent", "", nil},
		{"redirect", "agent 2>>/tmp/agent.log", "", nil},
		{"empty", "", "", ErrEmptyCommand},
		{"blank", "   ", "agent -r", ErrEmptyCommand},
		{"comment only", "# agent", "", ErrEmptyCommand},
		{"pipeline", "agent | tee log", "", ErrCompositionNeedsResume},
		{"sequence", "cd /w; agent", "", ErrCompositionNeedsResume},
		{"and", "cd /w && agent", "", ErrCompositionNeedsResume},
		{"or", "agent || true", "", ErrCompositionNeedsResume},
		{"background", "agent &", "", ErrCompositionNeedsResume},
		{"subshell", "(cd /w; agent)", "", ErrCompositionNeedsResume},
		{"process substitution", "agent --cfg <(cat x)", "", ErrCompositionNeedsResume},
		{"pipe stderr", "agent |& tee log", "", ErrCompositionNeedsResume},
		{"newline sequence", "cd /w\nagent", "", ErrCompositionNeedsResume},
		{"composition with resume", "cd /w && agent", "agent --resume {session_id}", nil},
		{"composition with placeholder-free composed resume", "cd /w && agent", "cd /w && agent -r", ErrComposition},
		{"placeholder in launch", "agent --id {session_id}", "agent -r {session_id}", ErrPlaceholderInLaunch},
		{"bad resume", "agent", "agent -r '{session_id}'", ErrQuotedPlaceholder},
		{"unterminated launch", "agent 'x", "agent -r", ErrUnterminatedQuote},
		{"dangling launch", `agent \`, "", ErrDanglingEscape},
		{"heredoc launch", "agent <<EOF", "agent -r", ErrHereDoc},
		{"closed heredoc launch", "agent <<EOF\nhi\nEOF", "agent -r", ErrHereDoc},
		{"trailing semicolon", "agent --x;", "", nil},
		{"negated", "! agent", "", nil},
		{"only an assignment", "X=1", "agent -r {session_id}", ErrEmptyCommand},
		{"if", "if true; then agent; fi", "", ErrCompositionNeedsResume},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateLaunch(tt.launch, tt.resume)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("ValidateLaunch(%q, %q) = %v, want nil", tt.launch, tt.resume, err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("ValidateLaunch(%q, %q) = %v, want %v", tt.launch, tt.resume, err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// TestCompositionNamesResumeFlag checks that refusing a composed launch
// command says how to give the resume command (issue 11).
func TestCompositionNamesResumeFlag(t *testing.T) {
	for _, launch := range []string{"make test; echo done", "make test | tee log", "make && agent"} {
		err := ValidateLaunch(launch, "")
		if !errors.Is(err, ErrCompositionNeedsResume) {
			t.Fatalf("ValidateLaunch(%q) = %v, want ErrCompositionNeedsResume", launch, err)
		}
		for _, want := range []string{"--resume-cmd", "[[launcher]]", "{session_id}"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %s", err, want)
			}
		}
	}
}

func TestResumeTemplateDefaultsToLaunch(t *testing.T) {
	tmpl, err := ResumeTemplate("my-agent --model 'big one' # comment", "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.Render("s-1")
	if err != nil {
		t.Fatal(err)
	}
	if want := "my-agent --model 'big one' s-1 # comment"; got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
	if tmpl.HasPlaceholder() {
		t.Error("HasPlaceholder = true for a placeholder-free launch command")
	}
}

func TestRenderRejectsBadIDs(t *testing.T) {
	tmpl, err := ParseTemplate("agent -r {session_id}")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "a\x00b", "a\x80", "a\rb"} {
		if _, err := tmpl.Render(bad); !errors.Is(err, ErrBadSessionID) {
			t.Errorf("Render(%q) error = %v, want ErrBadSessionID", bad, err)
		}
	}
}
