// Package history keeps the discovery index of the transcripts agents leave
// on disk: which files exist, and a summary of each session in them, stored
// in a SQLite database of its own (store.OpenIndex: history.db beside
// muster.db), so that its writes, a large session's full-text row above
// all, never hold the connection that commits agent events; it is derived
// data, rebuilt from the transcripts when it is missing. A refresh lists
// every provider's files, compares their size and mtime with the index in
// one query, parses only what changed (in parallel) and drops files that
// vanished. Each session also gets a full-text row (Search) with what was
// said in it, replaced with its file and dropped with it. Sub-agent
// sessions (Session.ParentID) belong to their parent's conversation:
// listings and searches report the parent, Subagents lists them for
// nesting. A fork (Session.ForkedFrom: claude --fork-session, codex fork)
// is a conversation of its own, listed as its own row, since the user
// resumes it by its own id and both go on apart; what it inherited from
// its original (Item.Inherited) is left out of its full-text row, so a
// search finds that in the original. The daemon keeps the index fresh
// with Watch; the CLI refreshes it itself, so history works without a
// daemon.
//
// It knows no provider: callers pass the transcript.Sources (internal/provider/all).
package history

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/musterhq/muster/internal/store"
	"github.com/musterhq/muster/internal/transcript"
)

// Index is the discovery index over a store. Its methods are safe for
// concurrent use; refreshes within one process are serialised, and two
// processes refreshing at once only repeat each other's work.
type Index struct {
	st      *store.Store
	owned   bool
	version string
	mu      sync.Mutex
	// noText skips the full-text rows (and so the full parse) for
	// benchmarks that compare cold indexing with and without them.
	noText bool
	// changes counts the refreshes that wrote or removed sessions.
	changes atomic.Uint64
	// follows, when set (Watch), keeps the parses in progress of the
	// files that changed last, so an append is read alone.
	follows *followCache
}

// Changes counts the refreshes of x that wrote or removed sessions (not
// those that found every file as indexed). A caller that listed sessions
// while a refresh ran lists them again when the count moved.
func (x *Index) Changes() uint64 { return x.changes.Load() }

// parsersRevision counts changes to what the parsers read from a file
// (bump it with any change to a provider's Parse or to what the index
// stores of a session). It joins the muster version in the version every
// file is indexed with: a development build's version never changes, and
// an index kept across such builds would otherwise keep what the older
// parsers read (revision 2: forks name their original; 3: streaming
// parsers skip a record over the limit with a warning and keep what
// precedes a truncation).
const parsersRevision = 3

// New uses an open history index (store.OpenIndex). version identifies the
// muster build: files indexed by another build version or parsers revision
// are parsed again.
func New(st *store.Store, version string) *Index {
	return &Index{st: st, version: indexVersion(version)}
}

func indexVersion(version string) string {
	return version + "+parsers." + strconv.Itoa(parsersRevision)
}

// Open opens the history index at dbPath (creating it). Its Store's
// Recovered says when a corrupt one was moved aside for a new one.
func Open(ctx context.Context, dbPath, version string) (*Index, error) {
	st, err := store.OpenIndex(ctx, dbPath)
	if err != nil {
		return nil, err
	}
	x := New(st, version)
	x.owned = true
	return x, nil
}

// OpenReadOnly opens the index of a store that cannot be written (a
// read-only state dir): it can be listed and searched as it stands, and
// Refresh refuses.
func OpenReadOnly(ctx context.Context, dbPath, version string) (*Index, error) {
	st, err := store.OpenIndexReadOnly(ctx, dbPath)
	if err != nil {
		return nil, err
	}
	x := New(st, version)
	x.owned = true
	return x, nil
}

// ReadOnly reports whether the index was opened read-only.
func (x *Index) ReadOnly() bool { return x.st.ReadOnly }

// Close closes the store when Open opened it.
func (x *Index) Close() error {
	if x.owned {
		return x.st.Close()
	}
	return nil
}

// Store is the underlying store.
func (x *Index) Store() *store.Store { return x.st }

// Analyzer computes per-session analysis from a full parse (stats uses it
// for tool counts, edited lines and the usage log). Its bytes, in a format
// of the analyzer's choosing, are stored apart from the summary and
// recomputed when Version changes or the file does.
type Analyzer struct {
	Version int
	Analyze func(*transcript.Transcript) (Analysis, error)
}

// Analysis is an analyzer's bytes in two parts: ListAnalyzed reads every
// session's Brief, LoadFull reads Full only for the sessions asked, so that
// a report over thousands of sessions reads little.
type Analysis struct {
	Brief []byte
	Full  []byte
}

// RefreshOptions tune a refresh.
type RefreshOptions struct {
	// Analyzer, when set, makes changed files (and sessions whose analysis
	// is missing or stale) parse in full and stores the analysis.
	Analyzer *Analyzer
	// Workers bounds parallel parses; 0 means GOMAXPROCS.
	Workers int
	// Rescan compares every file with the index even when a source's
	// listing hashes the same as at its last complete refresh.
	Rescan bool
	// Progress, when set, is called from one goroutine after each parsed
	// file with the count done and the count to parse.
	Progress func(done, total int)
}

// RefreshStats says what a refresh did.
type RefreshStats struct {
	Files     int // files the sources listed
	Unchanged int
	Parsed    int
	Removed   int
	// Failed counts files that could not be read; they are retried next time.
	Failed int
	// Read counts the transcript bytes the parses read (only what was
	// appended to a followed file).
	Read int64
	// Errors are discovery and parse failures, one line each; a source
	// whose discovery failed keeps its previous rows.
	Errors []string
}

type known struct {
	provider    string
	size, mtime int64
	version     string
}

type job struct {
	src  transcript.Source
	file transcript.File
}

type result struct {
	job      job
	sessions []row
	err      error
	read     int64 // bytes of the file parsed
}

type row struct {
	s             transcript.Session
	summary       []byte
	analysis      *Analysis // nil: not analysed
	detailVersion int
	text          *doc // nil: no full-text row
}

// Refresh brings the index up to date with what the sources find on disk.
func (x *Index) Refresh(ctx context.Context, sources []transcript.Source, env transcript.Env, opts RefreshOptions) (RefreshStats, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	var st RefreshStats

	// Discover every source concurrently: each walks its own tree.
	type found struct {
		files []transcript.File
		err   error
	}
	founds := make([]found, len(sources))
	var wg sync.WaitGroup
	for i, src := range sources {
		wg.Go(func() {
			files, err := src.Discover(ctx, env)
			founds[i] = found{files, err}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return st, err
	}

	okProvider := map[string]bool{}
	for i, src := range sources {
		if founds[i].err != nil {
			st.Errors = append(st.Errors, fmt.Sprintf("discover %s transcripts: %v", src.Provider(), founds[i].err))
			continue
		}
		okProvider[src.Provider()] = true
	}

	// Assign each file to the first source that listed it, and hash each
	// source's listing.
	seen := make(map[string]bool)
	owned := make([][]transcript.File, len(sources))
	digests := make([]string, len(sources))
	for i := range sources {
		var d digest
		for _, f := range founds[i].files {
			if seen[f.Path] {
				continue
			}
			seen[f.Path] = true
			st.Files++
			owned[i] = append(owned[i], f)
			d.add(f, x.version)
		}
		digests[i] = d.String()
	}
	stored, err := x.storedDigests(ctx)
	if err != nil {
		return st, err
	}

	// Analyses missing or made by another analyzer version, by provider.
	var stale map[string]bool
	staleProv := map[string]bool{}
	if opts.Analyzer != nil {
		if stale, staleProv, err = x.staleDetail(ctx, opts.Analyzer.Version); err != nil {
			return st, err
		}
	}
	// Sources whose listing is unchanged (and, for analyses, complete) need
	// no per-file comparison.
	var check []string
	for i, src := range sources {
		if founds[i].err != nil {
			continue
		}
		if !opts.Rescan && !staleProv[src.Provider()] && stored[src.Provider()] == digests[i] {
			st.Unchanged += len(owned[i])
			continue
		}
		check = append(check, src.Provider())
	}
	if len(check) == 0 {
		return st, nil
	}
	have, err := x.knownFiles(ctx, check)
	if err != nil {
		return st, err
	}
	var jobs []job
	newDigests := map[string]string{}
	for i, src := range sources {
		if !slices.Contains(check, src.Provider()) {
			continue
		}
		newDigests[src.Provider()] = digests[i]
		for _, f := range owned[i] {
			k, ok := have[f.Path]
			if ok && k.size == f.Size && k.mtime == f.ModTime.UnixNano() && k.version == x.version && !stale[f.Path] {
				st.Unchanged++
				continue
			}
			jobs = append(jobs, job{src, f})
		}
	}
	var gone []string
	for p, k := range have {
		if !seen[p] && okProvider[k.provider] {
			gone = append(gone, p)
		}
	}

	var results <-chan result
	if len(jobs) > 0 {
		results = x.parseAll(ctx, jobs, env, opts)
	} else {
		c := make(chan result)
		close(c)
		results = c
	}
	err = x.write(ctx, results, gone, newDigests, len(jobs), opts.Progress, &st)
	return st, err
}

func (x *Index) knownFiles(ctx context.Context, providers []string) (map[string]known, error) {
	have := make(map[string]known)
	if len(providers) == 0 {
		return have, nil
	}
	q := `SELECT path, provider, size, mtime_ns, version FROM history_files WHERE provider IN (` + placeholders(len(providers)) + `)`
	rows, err := x.st.R.QueryContext(ctx, q, anys(providers)...)
	if err != nil {
		return nil, fmt.Errorf("read history index: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		var k known
		if err := rows.Scan(&p, &k.provider, &k.size, &k.mtime, &k.version); err != nil {
			return nil, fmt.Errorf("read history index: %w", err)
		}
		have[p] = k
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read history index: %w", err)
	}
	return have, nil
}

// staleDetail lists files with a session whose analysis is missing or was
// made by another analyzer version, and the providers of those files. A
// missing analysis has version 0 (put), so the version alone says it, from
// the covering index of migration 009 without touching the analyses.
func (x *Index) staleDetail(ctx context.Context, version int) (map[string]bool, map[string]bool, error) {
	stale, provs := map[string]bool{}, map[string]bool{}
	rows, err := x.st.R.QueryContext(ctx, `SELECT DISTINCT path, provider FROM history_sessions INDEXED BY history_sessions_detail WHERE detail_version != ?`, version)
	if err != nil {
		return nil, nil, fmt.Errorf("read history index: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p, prov string
		if err := rows.Scan(&p, &prov); err != nil {
			return nil, nil, fmt.Errorf("read history index: %w", err)
		}
		stale[p], provs[prov] = true, true
	}
	return stale, provs, rows.Err()
}

// parseAll parses jobs on a bounded pool of workers; the channel closes when
// all are done or ctx ends.
func (x *Index) parseAll(ctx context.Context, jobs []job, env transcript.Env, opts RefreshOptions) <-chan result {
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(jobs))
	in := make(chan job)
	out := make(chan result, workers*2)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range in {
				r := parseOne(ctx, j, env, opts.Analyzer, !x.noText, x.follows)
				select {
				case out <- r:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	go func() {
		defer close(out)
		defer wg.Wait()
		defer close(in)
		for _, j := range jobs {
			select {
			case in <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

func parseOne(ctx context.Context, j job, env transcript.Env, an *Analyzer, text bool, follows *followCache) (r result) {
	r.job = j
	defer func() {
		// A parser bug must not take the index (or the daemon) down.
		if p := recover(); p != nil {
			r.sessions, r.err = nil, fmt.Errorf("parser panicked: %v", p)
		}
	}()
	// Only an analysis reads the usage log.
	opts := transcript.ParseOptions{SummaryOnly: an == nil && !text, NoUsageLog: an == nil}
	// Without an analysis, only the full-text row needs the items: a
	// parser that can stream them hands them over one by one, and a huge
	// transcript's items are never held at once.
	var streamed *docBuilder
	if text && an == nil {
		streamed = &docBuilder{}
		opts.Item, opts.Inherit = streamed.add, streamed.reset
	}
	var ts []*transcript.Transcript
	var err error
	err = errNotFollowed
	if fw, ok := j.src.(transcript.Follower); ok && follows != nil && streamed != nil {
		var followedDoc *docBuilder
		if ts, followedDoc, r.read, err = follows.follow(ctx, fw, env, j.file.Path); err == nil {
			streamed = followedDoc
		}
	}
	if errors.Is(err, errNotFollowed) {
		r.read = j.file.Size
		ts, err = j.src.Parse(ctx, env, j.file.Path, opts)
	}
	if err != nil {
		r.err = err
		return r
	}
	for _, t := range ts {
		if t == nil {
			continue
		}
		s := t.Session
		if s.Provider == "" {
			s.Provider = j.src.Provider()
		}
		if s.Path == "" {
			s.Path = j.file.Path
		}
		summary, err := json.Marshal(s)
		if err != nil {
			r.err = fmt.Errorf("encode summary: %w", err)
			return r
		}
		rw := row{s: s, summary: summary}
		if text {
			var d doc
			if streamed != nil && len(ts) == 1 {
				for _, it := range t.Items { // a parser that does not stream
					streamed.add(it)
				}
				d = streamed.doc(t.Session)
			} else {
				d = searchDoc(t)
			}
			rw.text = &d
		}
		if an != nil {
			a, err := an.Analyze(t)
			if err != nil {
				r.err = fmt.Errorf("analyze: %w", err)
				return r
			}
			if a.Brief == nil {
				a.Brief = []byte{}
			}
			rw.analysis, rw.detailVersion = &a, an.Version
		}
		r.sessions = append(r.sessions, rw)
	}
	return r
}

// A write transaction holds the index's only write connection, which a
// refresh in another process (`muster history` beside the daemon) waits
// for: so the index never waits for a parse with a transaction open (it
// takes only results already parsed), and commits once a batch has taken
// batchBudget or holds writeBatch files or batchBytes of text, whichever
// comes first. Between batches the connection goes to whoever waits for it.
// (The agent events are in another database, whose writer this never
// holds.)
const (
	writeBatch  = 500
	batchBudget = time.Millisecond
	batchBytes  = 256 << 10
)

func (x *Index) write(ctx context.Context, results <-chan result, gone []string, digests map[string]string, total int, progress func(int, int), st *RefreshStats) error {
	var tx *sql.Tx
	var stmts *writeStmts
	commit := func() error {
		if tx == nil {
			return nil
		}
		stmts.close()
		err := tx.Commit()
		tx, stmts = nil, nil
		if err != nil {
			return fmt.Errorf("write history index: %w", err)
		}
		return nil
	}
	begin := func() error {
		if tx != nil {
			return nil
		}
		var err error
		if tx, err = x.st.W.BeginTx(ctx, nil); err != nil {
			return fmt.Errorf("write history index: %w", err)
		}
		// Statement journals stay in memory (temp_store, set by the store
		// on every connection): thousands of small writes per batch.
		if stmts, err = prepare(ctx, tx); err != nil {
			tx.Rollback()
			tx = nil
			return fmt.Errorf("write history index: %w", err)
		}
		return nil
	}
	fail := func(err error) error {
		if tx != nil {
			stmts.close()
			tx.Rollback()
		}
		// Drain so the workers can finish.
		for range results {
		}
		return err
	}
	done := 0
	// take records one result; it reports whether the result needs writing.
	take := func(r result) bool {
		done++
		if progress != nil {
			progress(done, total)
		}
		if r.err != nil {
			// Keep the old digest so the next refresh retries the file.
			delete(digests, r.job.src.Provider())
			st.Failed++
			st.Errors = append(st.Errors, fmt.Sprintf("parse %s: %v", r.job.file.Path, r.err))
			return false
		}
		st.Parsed++
		st.Read += r.read
		return true
	}
	for r := range results {
		if !take(r) {
			continue
		}
		// The first result of a batch arrived with no transaction open;
		// the batch then takes only results that are already waiting.
		if err := begin(); err != nil {
			return fail(err)
		}
		started := time.Now()
		files, size := 0, 0
		for put := true; ; {
			if put {
				if err := stmts.put(ctx, r, x.version); err != nil {
					return fail(fmt.Errorf("write history index: %w", err))
				}
				files++
				size += r.size()
			}
			if files >= writeBatch || size >= batchBytes || time.Since(started) >= batchBudget {
				break
			}
			var ok bool
			if r, ok = ready(results); !ok {
				break
			}
			put = take(r)
		}
		if err := commit(); err != nil {
			return fail(err)
		}
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	// What is left is small: one delete per vanished file and one digest
	// per provider, in batches of the same bound.
	started := time.Now()
	batch := func() error {
		if tx != nil && time.Since(started) >= batchBudget {
			if err := commit(); err != nil {
				return err
			}
		}
		if tx == nil {
			started = time.Now()
		}
		return begin()
	}
	for _, p := range gone {
		if err := batch(); err != nil {
			return fail(err)
		}
		if _, err := stmts.delFile.ExecContext(ctx, p); err != nil {
			return fail(fmt.Errorf("write history index: %w", err))
		}
		st.Removed++
	}
	for prov, d := range digests {
		if err := batch(); err != nil {
			return fail(err)
		}
		if _, err := stmts.putDigest.ExecContext(ctx, prov, d); err != nil {
			return fail(fmt.Errorf("write history index: %w", err))
		}
	}
	if st.Parsed > 0 || st.Removed > 0 {
		x.changes.Add(1)
	}
	return commit()
}

// ready returns a result that is already waiting, without blocking; ok is
// false when none is (or the channel is closed, which the caller's range
// then sees).
func ready(results <-chan result) (r result, ok bool) {
	select {
	case r, ok = <-results:
		return r, ok
	default:
		return r, false
	}
}

// size is roughly how many bytes writing r puts in the store.
func (r result) size() int {
	n := 0
	for _, rw := range r.sessions {
		n += len(rw.summary)
		if rw.text != nil {
			n += len(rw.text.meta) + len(rw.text.said) + len(rw.text.tools)
		}
		if rw.analysis != nil {
			n += len(rw.analysis.Brief) + len(rw.analysis.Full)
		}
	}
	return n
}

type writeStmts struct {
	delSessions, upsertFile, insSession, insText, insAnalysis, insFull, delFile, putDigest *sql.Stmt
}

func prepare(ctx context.Context, tx *sql.Tx) (*writeStmts, error) {
	var s writeStmts
	var err error
	for _, p := range []struct {
		dst **sql.Stmt
		q   string
	}{
		{&s.delSessions, `DELETE FROM history_sessions WHERE path = ?`},
		{&s.upsertFile, `INSERT INTO history_files(path, provider, size, mtime_ns, version) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT(path) DO UPDATE SET provider = excluded.provider, size = excluded.size, mtime_ns = excluded.mtime_ns, version = excluded.version`},
		{&s.insSession, `INSERT INTO history_sessions(path, ord, provider, native_id, title, cwd, model, started_ms, last_ms,
			prompt_count, tool_call_count, search, summary, detail_version, parent_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&s.insText, `INSERT INTO history_fts(rowid, meta, said, tools) VALUES (?, ?, ?, ?)`},
		{&s.insAnalysis, `INSERT INTO history_analyses(session, version, brief) VALUES (?, ?, ?)`},
		{&s.insFull, `INSERT INTO history_analyses_full(session, full) VALUES (?, ?)`},
		{&s.delFile, `DELETE FROM history_files WHERE path = ?`},
		{&s.putDigest, `INSERT INTO history_digests(provider, digest) VALUES (?, ?)
			ON CONFLICT(provider) DO UPDATE SET digest = excluded.digest`},
	} {
		if *p.dst, err = tx.PrepareContext(ctx, p.q); err != nil {
			s.close()
			return nil, err
		}
	}
	return &s, nil
}

func (s *writeStmts) close() {
	for _, st := range []*sql.Stmt{s.delSessions, s.upsertFile, s.insSession, s.insText, s.insAnalysis, s.insFull, s.delFile, s.putDigest} {
		if st != nil {
			st.Close()
		}
	}
}

func (s *writeStmts) put(ctx context.Context, r result, version string) error {
	f := r.job.file
	if _, err := s.delSessions.ExecContext(ctx, f.Path); err != nil {
		return err
	}
	if _, err := s.upsertFile.ExecContext(ctx, f.Path, r.job.src.Provider(), f.Size, f.ModTime.UnixNano(), version); err != nil {
		return err
	}
	for i, rw := range r.sessions {
		ss := rw.s
		detailVersion := 0
		if rw.analysis != nil {
			detailVersion = rw.detailVersion
		}
		res, err := s.insSession.ExecContext(ctx, f.Path, i, ss.Provider, ss.ID, ss.Title, ss.CWD, ss.Model,
			unixMS(ss.StartedAt), lastMS(ss), ss.PromptCount, ss.ToolCallCount, searchText(ss), string(rw.summary),
			detailVersion, ss.ParentID)
		if err != nil {
			return err
		}
		if rw.text == nil && rw.analysis == nil {
			continue
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		if rw.text != nil {
			if _, err := s.insText.ExecContext(ctx, id, rw.text.meta, rw.text.said, rw.text.tools); err != nil {
				return err
			}
		}
		if a := rw.analysis; a != nil {
			// Blobs, never text: an analysis may be binary.
			if _, err := s.insAnalysis.ExecContext(ctx, id, rw.detailVersion, a.Brief); err != nil {
				return err
			}
			if a.Full != nil {
				if _, err := s.insFull.ExecContext(ctx, id, a.Full); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func unixMS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func lastMS(s transcript.Session) int64 {
	if !s.EndedAt.IsZero() {
		return s.EndedAt.UnixMilli()
	}
	return unixMS(s.StartedAt)
}

// searchText is what --search matches, lower-cased once at index time.
func searchText(s transcript.Session) string {
	return strings.ToLower(strings.Join([]string{s.Provider, s.ID, s.Title, s.FirstPrompt, s.CWD, s.Model}, "\n"))
}

func (x *Index) storedDigests(ctx context.Context) (map[string]string, error) {
	rows, err := x.st.R.QueryContext(ctx, `SELECT provider, digest FROM history_digests`)
	if err != nil {
		return nil, fmt.Errorf("read history index: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var p, d string
		if err := rows.Scan(&p, &d); err != nil {
			return nil, fmt.Errorf("read history index: %w", err)
		}
		out[p] = d
	}
	return out, rows.Err()
}

// digest hashes a file listing independently of its order: two 64-bit
// FNV-1a families combined by sum and by xor, plus the count.
type digest struct {
	sum, xor uint64
	n        int
}

func (d *digest) add(f transcript.File, version string) {
	h := fnv.New64a()
	var buf [16]byte
	binary.LittleEndian.PutUint64(buf[:8], uint64(f.Size))
	binary.LittleEndian.PutUint64(buf[8:], uint64(f.ModTime.UnixNano()))
	h.Write([]byte(f.Path))
	h.Write([]byte{0})
	h.Write(buf[:])
	h.Write([]byte(version))
	v := h.Sum64()
	d.sum += v
	d.xor ^= v*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019
	d.n++
}

func (d digest) String() string { return fmt.Sprintf("%016x%016x-%d", d.sum, d.xor, d.n) }
