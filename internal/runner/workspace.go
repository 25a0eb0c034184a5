package runner

// Workspaces (workspace: DIR): each case of an agent.command suite gets a
// fresh copy of its template directory as the program's working directory
// and DRYFIRE_WORKSPACE, its file checks read that copy, and the report
// lists what the program changed in it. The copy is removed after the
// case, unless it did not pass and Options.KeepWorkspaces says to keep it.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dryfire-dev/dryfire/internal/mock"
	"github.com/dryfire-dev/dryfire/internal/passthrough"
	"github.com/dryfire-dev/dryfire/internal/program"
	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/workspace"
	"github.com/dryfire-dev/dryfire/report"
)

// EnvWorkspace is the variable holding a case's workspace directory.
const EnvWorkspace = "DRYFIRE_WORKSPACE"

// templates scans each template directory once per run (per project
// root: its symlinks are resolved against it).
type templates struct {
	mu   sync.Mutex
	byAt map[[2]string]func() (*workspace.Template, error)
}

// get is the template of dir, scanned once.
func (ts *templates) get(dir, root string) (*workspace.Template, error) {
	ts.mu.Lock()
	if ts.byAt == nil {
		ts.byAt = map[[2]string]func() (*workspace.Template, error){}
	}
	at := [2]string{dir, root}
	scan := ts.byAt[at]
	if scan == nil {
		scan = sync.OnceValues(func() (*workspace.Template, error) { return workspace.Scan(dir, root) })
		ts.byAt[at] = scan
	}
	ts.mu.Unlock()
	return scan()
}

// caseWorkspace is one case's copy of its template.
type caseWorkspace struct {
	tpl  *workspace.Template
	dir  string
	keep bool // keep it when the case does not pass
}

// path is the workspace's directory, "" for none.
func (w *caseWorkspace) path() string {
	if w == nil {
		return ""
	}
	return w.dir
}

// openWorkspace copies the case's template, if it has one (nil, nil when
// not). The template, and where its symlinks lead, must stay inside the
// project root.
func openWorkspace(j job, lv *live, keep bool) (*caseWorkspace, error) {
	name, pos := j.suite.WorkspaceOf(j.c)
	if name == "" {
		return nil, nil
	}
	root := j.suite.ProjectRoot()
	path, err := safeio.Confine(root, filepath.Dir(j.suite.File), name)
	if err != nil {
		return nil, fmt.Errorf("%s: workspace %s", pos, safeio.Describe(name, err))
	}
	tpl, err := lv.templates.get(filepath.Clean(path), root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pos, err)
	}
	dir, err := tpl.Copy()
	if err != nil {
		return nil, err
	}
	if err := j.plant.plantFile(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &caseWorkspace{tpl: tpl, dir: dir, keep: keep}, nil
}

// finish puts the workspace's changes in the case's report and removes
// it, or keeps it (a case that did not pass, with keep set) and says where.
func (w *caseWorkspace) finish(c *report.Case) {
	if w == nil {
		return
	}
	ch, err := w.tpl.Diff(w.dir)
	if err != nil {
		c.Notes = append(c.Notes, "the workspace's changes are not listed: "+err.Error())
	} else {
		if ch.List == nil {
			ch.List = []workspace.Change{}
		}
		c.Workspace = &report.Workspace{Template: w.tpl.Dir, Changes: ch.List, More: ch.More}
	}
	if w.keep && c.Status != report.Passed && c.Status != report.Skipped {
		if c.Workspace == nil {
			c.Workspace = &report.Workspace{Template: w.tpl.Dir, Changes: []workspace.Change{}}
		}
		c.Workspace.Kept = w.dir
		return
	}
	os.RemoveAll(w.dir)
}

// caseImpl is the impl: code of one case with a workspace, in a helper
// of its own whose working directory and DRYFIRE_WORKSPACE are the
// workspace (passthrough.Runner.InWorkspace), started at the first call:
// dir is set once the workspace is made, before the program starts.
type caseImpl struct {
	run *passthrough.Runner
	dir string

	mu sync.Mutex
	r  *passthrough.Runner
}

// implIn is the case's own impl runner when it has a workspace and impl
// code, and the run's impl is the passthrough's; else nil (the run's).
func implIn(run mock.Impl, j job) *caseImpl {
	r, ok := run.(*passthrough.Runner)
	if name, _ := j.suite.WorkspaceOf(j.c); !ok || name == "" || !j.plan.UsesImpl {
		return nil
	}
	return &caseImpl{run: r}
}

func (ci *caseImpl) setDir(dir string) {
	ci.mu.Lock()
	ci.dir = dir
	ci.mu.Unlock()
}

func (ci *caseImpl) Call(ctx context.Context, req passthrough.Request) passthrough.Result {
	ci.mu.Lock()
	if ci.r == nil {
		ci.r = ci.run.InWorkspace(ci.dir)
	}
	r := ci.r
	ci.mu.Unlock()
	return r.Call(ctx, req)
}

// close ends the case's helper, if it started, giving calls still running
// a moment (the program that made them has ended).
func (ci *caseImpl) close() {
	ci.mu.Lock()
	r := ci.r
	ci.mu.Unlock()
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.Close(ctx, io.Discard)
}

// command is the program's command line for a run in the workspace
// (program.AbsArgs from dir, where the command is written: the suite's
// directory); without a workspace, args unchanged.
func (w *caseWorkspace) command(dir string, args []string) []string {
	if w == nil {
		return args
	}
	return program.AbsArgs(dir, args)
}
