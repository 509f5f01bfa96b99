// Package launcher validates and renders the shell commands of custom
// launchers: the launch command a pane runs for a new session and the resume
// template that brings a session back with its provider-owned native id
// (seed 000, "Resume"; DESIGN.md §6).
//
// It owns a small POSIX shell word lexer (Lex) so that every decision is
// made on shell words rather than on substrings, and ShellQuote, the quoting
// Muster uses whenever it puts a value into a shell command. It does not run
// anything and knows nothing about panes, providers or the store: callers
// validate with ValidateLaunch (or ResumeTemplate) before persisting a
// launcher and render with Template.Render when they resume.
//
// # Template rules
//
//   - {session_id} is a placeholder only as a whole, unquoted shell word
//     delimited by whitespace (or the start or end of the template). Each such
//     word is replaced by the shell-quoted id; several are allowed.
//   - The text {session_id} anywhere else is refused: inside quotes or after a
//     backslash ("quoted"), as part of a larger word such as --id={session_id}
//     or inside $(...) ("embedded"), next to an operator without whitespace,
//     as the target of a redirection, in command position (where the id
//     would run as a program), or inside a comment.
//   - Without a placeholder the shell-quoted id is appended as one more word
//     after the last word of the template (before a trailing comment). Such a
//     template must not be a shell composition, because the id would attach
//     to its last command only.
//   - Every template must lex: a template ending inside quotes, inside a
//     command substitution or with a dangling backslash is refused, as are
//     here-documents and redirections without a target.
//
// # Launch commands
//
// A launch command must contain a command word and no placeholder. When no
// resume command is given, the launch command itself is the resume template
// (the id is appended), so a launch command that is a shell composition needs
// an explicit resume command. Compositions are the control operators |, ||,
// |&, &, &&, ;, ;;, ;&, ;;&, a subshell ( ... ) (which includes bash process
// substitution <(...)), and a newline between two commands. Command
// substitutions $(...) and `...` inside a word are not compositions: they
// only compute an argument, and appended words still go to the one command.
//
// # Lexer limits
//
// The lexer follows POSIX token recognition plus bash's $'...' and $"..."
// strings. Inside $(...) it balances parentheses while honouring quotes and
// backslashes; a case pattern with an unbalanced ")" or a comment containing
// ")" inside $(...) is not supported and ends the substitution early.
package launcher
