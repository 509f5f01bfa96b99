// Package launcher validates and renders the shell commands of custom
// launchers: the launch command a pane runs for a new session and the resume
// template that brings a session back with its provider-owned native id
// (seed 000, "Resume"; DESIGN.md §6).
//
// Commands are parsed by mvdan.cc/sh/v3/syntax (bash dialect), and every
// rule below is a check over that syntax tree, never over substrings.
// Words gives a command's words with their values after quote removal;
// ShellQuote is the quoting Muster uses whenever it puts a value into a
// shell command. The package does not run anything and knows nothing about
// panes, providers or the store: callers validate with ValidateLaunch (or
// ResumeTemplate) before persisting a launcher and render with
// Template.Render when they resume.
//
// # Template rules
//
//   - {session_id} is a placeholder only as a whole, unquoted shell word
//     delimited by whitespace (or the start or end of the template). Each such
//     word is replaced by the shell-quoted id; several are allowed.
//   - The text {session_id} anywhere else is refused: inside quotes or after a
//     backslash ("quoted"), as part of a larger word such as --id={session_id}
//     or inside $(...) ("embedded"), next to an operator without whitespace,
//     outside any word (a loop variable, say), as the target of a
//     redirection, as the command name (where the id would run as a
//     program), or inside a comment.
//   - Without a placeholder the shell-quoted id is appended as one more word
//     after the last word of the template (before a trailing ";" or comment).
//     Such a template must be one simple command, not a shell composition,
//     because the id would attach to its last command only.
//   - Every template must parse: a template ending inside quotes, inside a
//     substitution or with a dangling backslash is refused, as are other
//     syntax errors, here-documents and redirections without a target.
//
// # Launch commands
//
// A launch command must run a program (assignments, redirections and
// builtins such as export alone are refused) and contain no placeholder.
// When no resume command is given, the launch command itself is the resume
// template (the id is appended), so a launch command that is a shell
// composition needs an explicit resume command (--resume-cmd, or resume in
// a [[launcher]] of config.toml). Compositions are two or more commands (|,
// ||, |&, &&, ;, & or a newline between them), a background &, a subshell
// ( ... ), a process substitution <(...) or >(...), and compound commands
// (if, while, until, for, select, case, { ... }, functions, coproc).
// Command substitutions $(...) and `...` inside a word are not
// compositions: they only compute an argument, and appended words still go
// to the one command.
//
// # Parser limits
//
// Panes run commands with the user's $SHELL -c; the bash grammar is the
// reference, and templates for shells that parse differently (fish, say)
// may be judged wrongly. Where the parser and bash disagree the command is
// refused rather than misread: carriage returns (the parser reads CR LF as a
// newline and a lone CR as a blank, bash keeps CR in the word), a comment
// ending with a backslash (the parser continues the line), and text that is
// not UTF-8 or holds a NUL byte.
package launcher
