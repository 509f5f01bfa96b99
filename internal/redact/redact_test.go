package redact

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/transcript"
)

func TestString(t *testing.T) {
	const pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----"
	tests := []struct {
		name string
		in   string
		want string
		n    int
	}{
		{"anthropic", "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123 end", "key [REDACTED:anthropic-key] end", 1},
		{"openai project", "OPENAI_API_KEY=sk-proj-AbCdEfGhIjKlMnOpQrStUvWx", "OPENAI_API_KEY=[REDACTED:openai-key]", 1},
		{"not inside a word", "task-abcdefghijklmnopqrstuvwxyz", "task-abcdefghijklmnopqrstuvwxyz", 0},
		{"github classic", "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", "[REDACTED:github-token]", 1},
		{"github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "[REDACTED:github-token]", 1},
		{"aws", "aws AKIAIOSFODNN7EXAMPLE ok", "aws [REDACTED:aws-key] ok", 1},
		{"slack", "xoxb-123456789012-abcdefghij", "[REDACTED:slack-token]", 1},
		{"google", "AIzaSyA1234567890abcdefghijklmnopqrstuv", "[REDACTED:google-key]", 1},
		{"bearer", "Authorization: Bearer abcdef0123456789abcdef.xyz", "Authorization: Bearer [REDACTED:bearer-token]", 1},
		{"bearer short word", "the bearer of news", "the bearer of news", 0},
		{"pem", "key:\n" + pem + "\nafter", "key:\n[REDACTED:private-key]\nafter", 1},
		{"pem truncated", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow", "[REDACTED:private-key]", 1},
		{"url password", "postgres://app:hunter2secret@db:5432/x", "postgres://app:[REDACTED:url-password]@db:5432/x", 1},
		{"assignment", `"password": "correct-horse-battery"`, `"password": "[REDACTED:secret]"`, 1},
		{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "[REDACTED:jwt]", 1},
		{"plain text", "nothing to see here, password: no", "nothing to see here, password: no", 0},
		{"two", "sk-ant-aaaaaaaaaaaaaaaaaaaaaaaa and AKIAABCDEFGHIJKLMNOP", "[REDACTED:anthropic-key] and [REDACTED:aws-key]", 2},

		// Assignments whose name says secret: .env, exports, YAML, JSON, INI.
		{"aws secret env", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-key]", 1},
		{"aws secret bare", "aws configure set: AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "aws configure set: [REDACTED:aws-key] [REDACTED:aws-secret-key]", 2},
		{"aws secret json", `{"AccessKeyId": "ASIAXXXXXXXXXXXXXXXX", "SecretAccessKey": "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"}`, `{"AccessKeyId": "[REDACTED:aws-key]", "SecretAccessKey": "[REDACTED:aws-secret-key]"}`, 2},
		{"aws line with a commit id", "aws-sdk bumped in 3f2a9c0d1e2b3a4f5c6d7e8f9a0b1c2d3e4f5a6b", "aws-sdk bumped in 3f2a9c0d1e2b3a4f5c6d7e8f9a0b1c2d3e4f5a6b", 0},
		{"no aws on the line", "laws: wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "laws: wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", 0},
		{"sshpass", "sshpass -p 'S3cret Pass' ssh deploy@host", "sshpass -p [REDACTED:cli-password] ssh deploy@host", 1},
		{"sshpass bare", "sshpass -pS3cretPass ssh host", "sshpass -p[REDACTED:cli-password] ssh host", 1},
		{"sshpass file", "sshpass -f ~/.pw ssh host", "sshpass -f ~/.pw ssh host", 0},
		{"redis-cli -a", "redis-cli -h cache -a s3cr3tpassw0rd ping", "redis-cli -h cache -a [REDACTED:cli-password] ping", 1},
		{"openssl pass", "openssl enc -aes-256-cbc -pass pass:hunter22 -in f", "openssl enc -aes-256-cbc -pass pass:[REDACTED:cli-password] -in f", 1},
		{"env file", "# .env\nSECRET=abcdef123456\nDEBUG=true\nSESSION_SECRET='abc def ghi'\n", "# .env\nSECRET=[REDACTED:secret]\nDEBUG=true\nSESSION_SECRET='[REDACTED:secret]'\n", 2},
		{"export", "export GITHUB_TOKEN=abc123def456 && gh pr list", "export GITHUB_TOKEN=[REDACTED:secret] && gh pr list", 1},
		{"db password short", "DB_PASSWORD=hunter2\nDB_USER=app", "DB_PASSWORD=[REDACTED:secret]\nDB_USER=app", 1},
		{"pgpassword", "PGPASSWORD=s3cr3t! psql -h db", "PGPASSWORD=[REDACTED:secret] psql -h db", 1},
		{"key suffix", "STRIPE_KEY=rk_test_51abcdef", "STRIPE_KEY=[REDACTED:secret]", 1},
		{"secret inside name", "JWT_SECRET_VALUE: 'long random value'", "JWT_SECRET_VALUE: '[REDACTED:secret]'", 1},
		{"ini with spaces", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG", "aws_secret_access_key = [REDACTED:secret]", 1},
		{"json field", `{"client_secret": "0a1b2c3d4e5f", "n": 1}`, `{"client_secret": "[REDACTED:secret]", "n": 1}`, 1},
		{"yaml", "database:\n  password: Tr0ub4dor&3\n", "database:\n  password: [REDACTED:secret]\n", 1},
		{"quoted with spaces", `API_KEY="correct horse battery staple"`, `API_KEY="[REDACTED:secret]"`, 1},
		{"header name", "x-api-key: 0123456789abcdef", "x-api-key: [REDACTED:secret]", 1},
		{"reference", "GITHUB_TOKEN=$GH_TOKEN API_KEY=${KEY} SECRET=$(cat f)", "GITHUB_TOKEN=$GH_TOKEN API_KEY=${KEY} SECRET=$(cat f)", 0},
		{"placeholder", "OPENAI_API_KEY=<your key>", "OPENAI_API_KEY=<your key>", 0},
		{"flag value", "REQUIRE_PASSWORD=false USE_TOKEN=true", "REQUIRE_PASSWORD=false USE_TOKEN=true", 0},
		{"token counts", `"max_tokens": 4096, "input_tokens": 123456789, "tokenizer": "cl100k_base"`, `"max_tokens": 4096, "input_tokens": 123456789, "tokenizer": "cl100k_base"`, 0},
		{"declarations", "password: string;\ntoken: str = None", "password: string;\ntoken: str = None", 0},
		{"code reads a secret", "token = os.environ.get(\"X\")\npassword = args.password\napiKey = process.env.API_KEY\nsecret := cfg.Secret", "token = os.environ.get(\"X\")\npassword = args.password\napiKey = process.env.API_KEY\nsecret := cfg.Secret", 0},
		{"code call", "token = getToken(ctx)", "token = getToken(ctx)", 0},
		{"monkey is not a key", "monkey=bananas123 PWD=/home/me", "monkey=bananas123 PWD=/home/me", 0},

		// Command lines.
		{"mysql -p", "mysql -u root -pS3cretPass shop < dump.sql", "mysql -u root -p[REDACTED:mysql-password] shop < dump.sql", 1},
		{"mysqldump quoted", "mysqldump -h db -P 3306 -p'p@ss word' shop", "mysqldump -h db -P 3306 -p[REDACTED:mysql-password] shop", 1},
		{"mysql prompts", "mysql -u root -p shop", "mysql -u root -p shop", 0},
		{"mkdir -p", "mkdir -pv /tmp/x && cp -p a b", "mkdir -pv /tmp/x && cp -p a b", 0},
		{"--password=", "psql --password=hunter2 -h db", "psql --password=[REDACTED:secret] -h db", 1},
		{"--password space", "docker login --username me --password hunter2 ghcr.io", "docker login --username me --password [REDACTED:secret] ghcr.io", 1},
		{"--api-key quoted", `tool --api-key "abc 123 def"`, `tool --api-key "[REDACTED:secret]"`, 1},
		{"--password-stdin", "docker login --password-stdin < f", "docker login --password-stdin < f", 0},
		{"--token next flag", "gh auth --token --help", "gh auth --token --help", 0},
		{"curl -u", "curl -u admin:hunter2 https://x", "curl -u admin:[REDACTED:basic-auth] https://x", 1},

		// Authorization headers, URLs, key blocks.
		{"bearer short in header", "-H 'Authorization: Bearer abc123xyz'", "-H 'Authorization: Bearer [REDACTED:bearer-token]'", 1},
		{"basic", "Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [REDACTED:basic-auth]", 1},
		{"authorization token", `"authorization": "token 0123456789"`, `"authorization": "token [REDACTED:bearer-token]"`, 1},
		{"bearer in prose", "a bearer token is sent", "a bearer token is sent", 0},
		{"url no user", "redis://:p4ssw0rd@cache:6379/0", "redis://:[REDACTED:url-password]@cache:6379/0", 1},
		{"url mysql", "mysql://root:toor@127.0.0.1/db", "mysql://root:[REDACTED:url-password]@127.0.0.1/db", 1},
		{"url without password", "https://git@github.com/x and https://example.com:8443/a@b", "https://git@github.com/x and https://example.com:8443/a@b", 0},
		{"pgp block", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----\nok", "[REDACTED:private-key]\nok", 1},
		{"pem in json text", `"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----\n"`, `"private_key": "[REDACTED:private-key]\n"`, 1},
		{"clipped key", "use sk-ant-api03-abcd…", "use [REDACTED:token]…", 1},
		{"clipped token", "token ghp_ABCDEFGH…", "token [REDACTED:token]…", 1},
		{"clipped aws", "AKIAABCD…", "[REDACTED:token]…", 1},
		{"clipped bearer", "Authorization: Bearer abc…", "Authorization: Bearer [REDACTED:bearer-token]…", 1},
		{"clipped setting", "export API_KEY=ab…", "export API_KEY=[REDACTED:secret]…", 1},
		{"clipped prose", "Fix the login page and the…", "Fix the login page and the…", 0},
		{"clipped after a secret", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123 and…", "[REDACTED:anthropic-key] and…", 1},
		{"colored setting", "\x1b[01;31m\x1b[KAPI_KEY\x1b[m\x1b[K=abc123def", "API_KEY=[REDACTED:secret]", 1},
		{"escape inside a token", "sk-ant-api03-abcdefghij\x1b[0mklmnopqrstuvwxyz", "[REDACTED:anthropic-key]", 1},
		{"control characters", "pass\x00word=hunter22", "password=[REDACTED:secret]", 1},
		{"escapes kept out", "\x1b]52;c;aGk=\x07plain", "plain", 0},
		{"encrypted pem", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIF\n-----END ENCRYPTED PRIVATE KEY-----", "[REDACTED:private-key]", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := String(tt.in)
			if got != tt.want || n != tt.n {
				t.Errorf("String(%q) = %q, %d; want %q, %d", tt.in, got, n, tt.want, tt.n)
			}
			again, m := String(got)
			if again != got || m != 0 {
				t.Errorf("not idempotent: %q → %q (%d)", got, again, m)
			}
		})
	}
}

func TestTranscript(t *testing.T) {
	in := &transcript.Transcript{
		Session: transcript.Session{Title: "use sk-ant-aaaaaaaaaaaaaaaaaaaaaaaa"},
		Items: []transcript.Item{
			{Kind: transcript.UserPrompt, Text: "token ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
				Images: []transcript.Image{{MIME: "image/png", DataURL: "data:image/png;base64,AKIAABCDEFGHIJKLMNOP"}}},
			{Kind: transcript.ToolUse, Tool: "Bash", Input: json.RawMessage(`{"command":"curl -H 'Authorization: Bearer abcdefghijklmnop1234' x","n":1.50}`)},
		},
	}
	out, n := Transcript(in)
	if n != 3 {
		t.Fatalf("redacted %d, want 3", n)
	}
	if strings.Contains(out.Title, "sk-ant") || strings.Contains(out.Items[0].Text, "ghp_") || strings.Contains(string(out.Items[1].Input), "abcdefghijklmnop1234") {
		t.Fatalf("secret left: %+v", out)
	}
	if !strings.Contains(string(out.Items[1].Input), `"n":1.50`) {
		t.Errorf("numbers changed: %s", out.Items[1].Input)
	}
	if out.Items[0].Images[0].DataURL != in.Items[0].Images[0].DataURL {
		t.Error("image data was redacted")
	}
	if !strings.Contains(in.Title, "sk-ant") {
		t.Error("the input transcript was modified")
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"sk-ant-aaaaaaaaaaaaaaaaaaaaaaaa", "password=hunter22hunter", "Bearer abcdefghijklmnopq", "https://u:p@h", "-----BEGIN PRIVATE KEY-----\nabc", "AKIAABCDEFGHIJKLMNOP",
		"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", "mysql -u root -pS3cret db", "--password 'a b c d'", "curl -u a:b x", "Authorization: Basic dXNlcjpwYXNz", `{"api_key": "abcdefgh"}`, "sk-ant-api03-ab…", "password=a…", "\x1b[1mTOKEN\x1b[0m=abcdefgh", "sk-ant-\x9b0mapi03-abcdefghijklmnopqrstuvwxyz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once, _ := String(s)
		twice, n := String(once)
		if twice != once || n != 0 {
			t.Fatalf("not idempotent: %q → %q → %q (%d)", s, once, twice, n)
		}
	})
}

func TestCountLabels(t *testing.T) {
	kinds := map[string]int{}
	s, _ := String("sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123 and AKIAABCDEFGHIJKLMNOP and sk-ant-api03-zzzzzzzzzzzzzzzzzzzzzzzzzz [REDACTED:")
	CountLabels(s, kinds)
	CountLabels("postgres://a:hunter2secret@db", kinds) // not redacted: no label
	if len(kinds) != 2 || kinds["anthropic-key"] != 2 || kinds["aws-key"] != 1 {
		t.Errorf("kinds = %v", kinds)
	}
}

// TestPatternsCompile: the patterns compile on first use, so a typo would
// panic only when a text first passes its hints; compile them all here.
func TestPatternsCompile(t *testing.T) {
	for _, p := range patterns {
		if p.re().NumSubexp() < p.group {
			t.Errorf("%s: group %d of %d", p.label, p.group, p.re().NumSubexp())
		}
	}
	for _, re := range []func() *regexp.Regexp{keyBegin, keyEnd, keyBody, flagName, codeExpr, envName, ident} {
		re()
	}
}
