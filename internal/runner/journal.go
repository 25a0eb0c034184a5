package runner

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/wire"
	"github.com/dryfire-dev/dryfire/report"
)

// A journal keeps the cases of a run as they finish, so that a run cut
// off (a CI timeout, a reclaimed machine, SIGKILL) resumes where it was:
// run --journal FILE writes one, run --resume FILE runs only the cases
// it does not hold (or holds as infrastructure errors) and appends
// them. Its text, one record a line, each line its CRC-32C and JSON:
//
//	3a6f9e01 {"journal":"dryfire","version":1,"suites":"sha256:…","cases":120,"build":"…"}
//	8c1d22f0 {"i":7,"infra":false,"live":0,"case":{…the case as the JSON report has it…}}
//
// The first line ties the journal to its run: the hash of the suites,
// the cases selected, their trials, the pass threshold and the seed
// (suitesHash), and the build of dryfire; another run's journal is
// refused. Records are appended, never rewritten: each in one write, and
// the file synced (fsync) after each batch of writes by one goroutine,
// so a case is never waited for. A last line cut short by a crash is
// dropped (its case runs again); a bad line before good ones is a
// corrupt journal, refused with nothing changed.

// JournalVersion is the version of the journal's format.
const JournalVersion = 1

// MaxJournal bounds a journal's size: past it, the cases that finish are
// not journaled (a resume runs them again), and a larger file is not
// read.
var MaxJournal int64 = 1 << 30

// maxRecord bounds one record's line (a case as the report has it).
const maxRecord = 64 << 20

// castagnoli is made on first use: its tables cost 1.2 M instructions,
// which every command paid at start-up as a package variable.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// Journal is a run's journal, open for reading what it holds and for
// appending. Make it with OpenJournal, give it to Run (Options.Journal),
// and Close it after.
type Journal struct {
	path   string
	build  string
	resume bool

	f    *os.File
	head *journalHead     // what the file says it is (resume)
	done map[int32]record // the finished cases it holds, by place
	end  int64            // where the last whole record ends
	torn bool             // a last record was cut short (dropped)

	mu      sync.Mutex
	cond    *sync.Cond
	pending []byte // records not yet written
	size    int64  // the file's size once pending is written
	full    bool   // MaxJournal reached: nothing more is journaled
	closed  bool
	err     error // the first write or sync error
	written chan struct{}
	once    sync.Once

	// Resumed, when set, hears what a resumed journal holds once the run
	// has found it to be its own: the cases finished, and whether a crash
	// cut its last record short.
	Resumed func(finished int, torn bool)
}

// record is where a finished case's record is in the file.
type record struct {
	off   int64
	n     int32
	infra bool
}

type journalHead struct {
	Journal string `json:"journal"`
	Version int    `json:"version"`
	Suites  string `json:"suites"`
	Cases   int    `json:"cases"`
	Build   string `json:"build"`
}

type journalRecord struct {
	I     int             `json:"i"`
	Infra bool            `json:"infra"`
	Live  int             `json:"live"`
	Case  json.RawMessage `json:"case"`
}

// JournalError is a journal that cannot be used: corrupt, another run's,
// another build's. Nothing in it was changed.
type JournalError struct{ Msg string }

func (e *JournalError) Error() string { return e.Msg }

// OpenJournal opens the journal at path: to resume from it (it must
// exist, and every line but a last one cut short must be whole), or a
// new one (it must not exist, or be empty). build identifies the dryfire
// that runs.
func OpenJournal(path string, resume bool, build string) (*Journal, error) {
	j := &Journal{path: path, build: build, resume: resume, done: map[int32]record{}}
	j.cond = sync.NewCond(&j.mu)
	if !resume {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if st, err := f.Stat(); err != nil || st.Size() > 0 || !st.Mode().IsRegular() {
			f.Close()
			if err == nil && !st.Mode().IsRegular() {
				return nil, &JournalError{fmt.Sprintf("%s is not a regular file", path)}
			}
			return nil, &JournalError{fmt.Sprintf("%s holds a journal already: resume it with --resume %s, or remove it to start again", path, path)}
		}
		j.f = f
		return j, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &JournalError{fmt.Sprintf("no journal %s: start one with --journal %s", path, path)}
		}
		return nil, err
	}
	st, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, err
	case !st.Mode().IsRegular():
		f.Close()
		return nil, &JournalError{fmt.Sprintf("%s is not a regular file", path)}
	case st.Size() > MaxJournal:
		f.Close()
		return nil, &JournalError{fmt.Sprintf("%s is %d bytes, more than a journal holds (%d)", path, st.Size(), MaxJournal)}
	}
	j.f = f
	if err := j.read(); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// read reads the journal's records, keeping where each is.
func (j *Journal) read() error {
	r := bufio.NewReaderSize(j.f, 64<<10)
	var off int64
	for line := 1; ; line++ {
		text, err := readLine(r, maxRecord)
		if len(text) == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			if errors.Is(err, errLongLine) {
				return &JournalError{fmt.Sprintf("%s:%d: a record longer than %d MiB: not a dryfire journal, or a corrupt one; nothing was changed", j.path, line, maxRecord>>20)}
			}
			return err
		}
		whole := err == nil // it ends with a newline
		body, ok := checked(text)
		_, more := r.Peek(1)
		switch {
		case line == 1 && (!ok || !whole):
			return &JournalError{fmt.Sprintf("%s is not a dryfire journal (its first line is no journal's head)", j.path)}
		case (!ok || !whole) && more != nil:
			// The last line, cut short by a crash while it was written.
			j.torn = true
			j.end = off
			return j.checkHead()
		case !ok:
			return &JournalError{fmt.Sprintf("%s:%d: corrupt record (its checksum does not match, or it is not one), with records after it: the journal was changed or damaged; nothing was changed (run again with a new --journal)", j.path, line)}
		}
		if line == 1 {
			var h journalHead
			if err := json.Unmarshal(body, &h); err != nil || h.Journal != "dryfire" {
				return &JournalError{fmt.Sprintf("%s is not a dryfire journal (its first line is no journal's head)", j.path)}
			}
			if h.Version != JournalVersion {
				return &JournalError{fmt.Sprintf("%s is a journal of version %d; this dryfire reads version %d", j.path, h.Version, JournalVersion)}
			}
			j.head = &h
		} else {
			var rec journalRecord
			if err := json.Unmarshal(body, &rec); err != nil || len(rec.Case) == 0 || rec.I < 0 || rec.I > j.head.Cases-1 {
				return &JournalError{fmt.Sprintf("%s:%d: a record that is no finished case of the run (%d cases); nothing was changed", j.path, line, j.head.Cases)}
			}
			// A case journaled twice (run again after an infrastructure
			// error) is its last record.
			j.done[int32(rec.I)] = record{off: off, n: int32(len(text)), infra: rec.Infra}
		}
		off += int64(len(text)) + 1
		j.end = off
		if err == io.EOF {
			break
		}
	}
	return j.checkHead()
}

func (j *Journal) checkHead() error {
	if j.head == nil {
		return &JournalError{fmt.Sprintf("%s is empty or not a dryfire journal: start one with --journal", j.path)}
	}
	return nil
}

var errLongLine = errors.New("line too long")

// readLine reads one line without its newline; io.EOF with the text of
// a last line without one.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var out []byte
	for {
		frag, err := r.ReadSlice('\n')
		out = append(out, frag...)
		if len(out) > max+1 {
			return nil, errLongLine
		}
		switch {
		case err == nil:
			return out[:len(out)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return out, err
		}
	}
}

// checked is the JSON of a line whose checksum matches.
func checked(line []byte) ([]byte, bool) {
	if len(line) < 10 || line[8] != ' ' {
		return nil, false
	}
	sum, err := strconv.ParseUint(string(line[:8]), 16, 32)
	body := line[9:]
	if err != nil || uint32(sum) != crc32.Checksum(body, castagnoli()) {
		return nil, false
	}
	return body, true
}

func frame(body []byte) []byte {
	out := make([]byte, 0, len(body)+10)
	out = fmt.Appendf(out, "%08x ", crc32.Checksum(body, castagnoli()))
	out = append(out, body...)
	return append(out, '\n')
}

// start ties the journal to the run (its suites hash and cases) and
// readies it to append: a new journal gets its head; a resumed one is
// checked against the run, and a torn last record cut off.
func (j *Journal) start(suites string, cases int) error {
	if j.resume {
		h := j.head
		switch {
		case h.Suites != suites || h.Cases != cases:
			return &JournalError{fmt.Sprintf("%s is the journal of another run: its suites, cases, trials, pass threshold or seed differ (%.19s and %d cases, this run %.19s and %d); resume it with the run it was made by, or start a new one with --journal", j.path, h.Suites, h.Cases, suites, cases)}
		case h.Build != j.build:
			return &JournalError{fmt.Sprintf("%s was written by another build of dryfire (%q, this is %q): a resumed run is one run, of one build", j.path, h.Build, j.build)}
		}
		if j.torn {
			if err := j.f.Truncate(j.end); err != nil {
				return err
			}
		}
		j.size = j.end
		if j.Resumed != nil {
			j.Resumed(j.Finished())
		}
	} else {
		head, _ := json.Marshal(journalHead{Journal: "dryfire", Version: JournalVersion, Suites: suites, Cases: cases, Build: j.build})
		if _, err := j.f.Write(frame(head)); err != nil {
			return err
		}
		if err := j.f.Sync(); err != nil {
			return err
		}
		j.size, _ = j.f.Seek(0, io.SeekCurrent)
	}
	if _, err := j.f.Seek(j.size, io.SeekStart); err != nil {
		return err
	}
	j.written = make(chan struct{})
	go j.writer()
	return nil
}

// Finished is how many cases the journal holds finished (infrastructure
// errors not counted: they run again), and whether its last record was
// cut short by a crash.
func (j *Journal) Finished() (n int, torn bool) {
	for _, r := range j.done {
		if !r.infra {
			n++
		}
	}
	return n, j.torn
}

// finished is case ci's result from the journal, when it holds it
// finished (not as an infrastructure error).
func (j *Journal) finished(ci int) (report.Case, bool, error) {
	r, ok := j.done[int32(ci)]
	if !ok || r.infra {
		return report.Case{}, false, nil
	}
	line := make([]byte, r.n)
	if _, err := j.f.ReadAt(line, r.off); err != nil {
		return report.Case{}, false, err
	}
	body, ok := checked(line)
	var rec journalRecord
	if !ok || json.Unmarshal(body, &rec) != nil {
		return report.Case{}, false, &JournalError{fmt.Sprintf("%s changed while the run read it", j.path)}
	}
	var c report.Case
	if err := json.Unmarshal(rec.Case, &c); err != nil {
		return report.Case{}, false, err
	}
	report.CompactArgs(&c)
	c.Infra, c.Live = rec.Infra, rec.Live
	return c, true, nil
}

// add journals case ci, finished: written and synced in the background.
func (j *Journal) add(ci int, c *report.Case) {
	body, err := json.Marshal(journalRecord{I: ci, Infra: c.Infra, Live: c.Live, Case: mustJSON(c)})
	if err != nil {
		return
	}
	line := frame(body)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed || j.full {
		return
	}
	if j.size+int64(len(j.pending))+int64(len(line)) > MaxJournal {
		j.full = true
		return
	}
	j.pending = append(j.pending, line...)
	j.cond.Signal()
}

func mustJSON(c *report.Case) json.RawMessage {
	b, _ := wire.Marshal(c)
	return b
}

// writer writes what is pending in one write, then syncs the file, until
// the journal is closed.
func (j *Journal) writer() {
	defer close(j.written)
	for {
		j.mu.Lock()
		for len(j.pending) == 0 && !j.closed {
			j.cond.Wait()
		}
		buf := j.pending
		j.pending = nil
		done := j.closed && len(buf) == 0
		j.mu.Unlock()
		if done {
			return
		}
		_, err := j.f.Write(buf)
		if err == nil {
			err = j.f.Sync()
		}
		j.mu.Lock()
		j.size += int64(len(buf))
		if err != nil && j.err == nil {
			j.err = err
		}
		j.mu.Unlock()
	}
}

// Close writes and syncs what is pending and closes the file. It says
// whether the journal reached its bound (cases after it are not in it).
// Later calls return the same and do nothing.
func (j *Journal) Close() (full bool, err error) {
	j.once.Do(func() {
		j.mu.Lock()
		j.closed = true
		j.cond.Signal()
		j.mu.Unlock()
		if j.written != nil {
			<-j.written
		}
		if cerr := j.f.Close(); j.err == nil {
			j.err = cerr
		}
	})
	return j.full, j.err
}
