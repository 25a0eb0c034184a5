package spec

import (
	"cmp"
	"runtime"
	"slices"
	"strconv"
	"sync"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// Cases are checked on every core: the items of a cut file a group at a
// time, the rows of a data file a batch at a time, each batch by a worker
// with its own converter, decoder and diagnostics, merged on the loading
// goroutine in the order of the file. What a case needs of the cases
// before it is done there too: the duplicate-name check, and the whole of
// any case the converter would share state with others for (anchors,
// aliases, nesting near the bound, reported once a file), which is checked
// there in order with the file's own converter. So the output is the same,
// byte for byte, as checking every case in order.

// checkWorkers is how many goroutines check cases (0: one a core); 1
// checks them in order on the loading goroutine (a test compares the two).
var checkWorkers = 0

// rowBatch is how many rows of a data file a worker checks at a time.
const rowBatch = 32

// parallelFrom is how many cases a cut file or a data file has before its
// cases are checked on workers: fewer take longer to hand over than to
// check, and two at once hold more memory (a test lowers it).
var parallelFrom = 2048

// A checked case is one case a worker checked, or left to check in order.
type checked struct {
	inOrder bool
	n       *yaml.Node // the item, when inOrder
	// ok: it decoded to a case, c, which is nil when it is only counted
	// (Options.Discard); its name, the line of its name key, its name.
	ok       bool
	c        *Case
	name     string
	nameLine int
	nameNode *yaml.Node
}

// A batch is what a worker found in a group of items or a batch of rows.
type batch struct {
	diags []yamlpos.Diagnostic
	cases []checked
	// failed: the group did not parse on its own (the file is parsed
	// whole). regroup: it holds a data-file item, whose rows make an
	// unknown number of cases: nodes are its items, to be checked in
	// order, and what was started after it is started again.
	failed, regroup bool
	nodes           []*yaml.Node
	end             int // the span after the group
}

// A pool runs batches on its workers and hands their results back in the
// order they were started.
type pool struct {
	jobs    chan func()
	pending []chan batch
	window  int
	stop    sync.Once
}

func newPool(workers int) *pool {
	p := &pool{jobs: make(chan func()), window: workers}
	for range workers {
		go func() {
			for job := range p.jobs {
				job()
			}
		}()
	}
	return p
}

func (p *pool) full() bool { return len(p.pending) >= p.window }

// start runs job on a worker.
func (p *pool) start(job func() batch) {
	ch := make(chan batch, 1)
	p.pending = append(p.pending, ch)
	p.jobs <- func() { ch <- job() }
}

// next waits for the oldest batch started.
func (p *pool) next() batch {
	ch := p.pending[0]
	p.pending[0] = nil
	p.pending = p.pending[1:]
	return <-ch
}

// discard waits for every batch started and drops what they found.
func (p *pool) discard() {
	for _, ch := range p.pending {
		<-ch
	}
	p.pending = nil
}

// close discards what is pending and ends the workers.
func (p *pool) close() {
	p.discard()
	p.stop.Do(func() { close(p.jobs) })
}

// caseChecker checks the cases of one suite: in order (one), or on the
// pool's workers (start, merge).
type caseChecker struct {
	x      *decoder
	s      *Suite
	conv   *yamlpos.Converter
	schema *yamlpos.FormatSchema
	d      *yamlpos.Collector
	index  int
	pool   *pool // made when first needed
	// workers is how many goroutines may check cases (1: in order).
	workers int
	// wopts are the options the workers decode with: ResolveImpl is
	// called by one at a time.
	wopts *Options
}

func newCaseChecker(x *decoder, s *Suite, schema *yamlpos.FormatSchema) *caseChecker {
	k := &caseChecker{x: x, s: s, conv: x.conv, schema: schema, d: x.d}
	workers := cmp.Or(checkWorkers, runtime.GOMAXPROCS(0))
	k.workers = workers
	if workers > 1 {
		o := *x.opts
		if resolve := o.ResolveImpl; resolve != nil {
			var mu sync.Mutex
			o.ResolveImpl = func(ref string) error {
				mu.Lock()
				defer mu.Unlock()
				return resolve(ref)
			}
		}
		k.wopts = &o
	}
	return k
}

// parallel reports whether n cases are checked on workers, making the
// pool when they are.
func (k *caseChecker) parallel(n int) bool {
	if k.workers < 2 || n < parallelFrom {
		return false
	}
	if k.pool == nil {
		k.pool = newPool(k.workers)
	}
	return true
}

func (k *caseChecker) close() {
	if k.pool != nil {
		k.pool.close()
	}
}

// one checks case item n in order (plan: see check). It returns false when
// the file is too large to go on.
func (k *caseChecker) one(n *yaml.Node, plan *rowPlan) bool {
	conv := k.conv
	conv.BeginCase(n)
	val := conv.Convert(n, 2)
	if conv.Large {
		return false
	}
	if !conv.Over {
		k.validate(n, val, conv, k.d, k.index, plan)
		if c, line, name := k.x.decodeCase(k.s, yamlpos.Item{N: n, Val: val}, k.index); c != nil {
			k.x.keepCase(k.s, c, c.Name, line, name)
		}
	}
	k.index++
	if afterCase != nil {
		afterCase()
	}
	return true
}

// validate checks case n (converted: val), the index-th, against the case
// schema; plan, when set, says which parts of a data file's row to check.
func (k *caseChecker) validate(n *yaml.Node, val any, conv *yamlpos.Converter, d *yamlpos.Collector, index int, plan *rowPlan) {
	var leaves []jschema.Leaf
	if plan != nil {
		leaves = plan.validate(val)
		if verifyRowPlan {
			checkRowPlan(leaves, k.schema.Validate(val))
		}
	} else {
		leaves = k.schema.Validate(val)
	}
	if len(leaves) == 0 {
		return
	}
	path := []string{"cases", strconv.Itoa(index)}
	for _, l := range leaves {
		l.Path = append(path, l.Path...)
		k.schema.Report(n, val, conv, l, 2, d)
	}
}

// worker is a decoder of one batch: its own diagnostics and converters,
// the suite's parts read only.
func (k *caseChecker) worker(sources []string) (*decoder, *yamlpos.Collector) {
	d := &yamlpos.Collector{File: k.d.File, Kind: k.d.Kind, Empty: k.d.Empty, Sources: sources}
	return &decoder{root: k.x.root, file: k.x.file, d: d, opts: k.wopts, cross: k.x.cross}, d
}

// check checks case item n, the index-th, on a worker; plan, when set,
// says which parts of a data file's row to check against the case schema;
// isPlain, that n is known to be plain.
func (k *caseChecker) check(w *decoder, n *yaml.Node, index int, plan *rowPlan, isPlain bool) checked {
	if !isPlain && !plain(n, 0) {
		return checked{inOrder: true, n: n}
	}
	conv := yamlpos.NewConverter(w.d)
	conv.Fixed = w.fixed
	w.conv = conv
	w.ruleLists = nil // no list is reached again from another case: no aliases
	conv.BeginCase(n)
	val := conv.Convert(n, 2)
	if verifyFixed != nil && conv.Fixed != nil {
		verifyFixed(n, val, conv.Over)
	}
	if conv.Over {
		return checked{}
	}
	k.validate(n, val, conv, w.d, index, plan)
	c, line, name := w.decodeCase(k.s, yamlpos.Item{N: n, Val: val}, index)
	if c == nil {
		return checked{}
	}
	if w.lateSources && !w.mayStub(k.s, c) {
		makeSources(c)
	}
	out := checked{ok: true, c: c, name: c.Name, nameLine: line}
	if name != nil {
		// Where the name is, without holding on to the case's nodes.
		out.nameNode = &yaml.Node{Kind: name.Kind, Line: name.Line, Column: name.Column}
	}
	releaseCase(c) // its nodes go with the batch
	if k.x.opts.Discard && k.s.World == "" {
		out.c = nil
	}
	return out
}

// verifyFixed, when set (tests), is shown every row case converted with
// Converter.Fixed: its value, and whether it was too large.
var verifyFixed func(n *yaml.Node, val any, over bool)

// holdsNodes reports whether case c, once released, still holds nodes of
// its item (a drill's overrides and setup).
func holdsNodes(c *Case) bool {
	return c != nil && (c.ToolOverridesNode != nil || c.SetupNode != nil)
}

// plain reports whether item n can be checked apart from the cases before
// it: no anchors or aliases (the converter shares them between cases), no
// nesting near the bound (reported once a file).
func plain(n *yaml.Node, depth int) bool {
	if n.Anchor != "" || n.Kind == yaml.AliasNode || depth >= yamlpos.MaxDepth-4 {
		return false
	}
	for _, c := range n.Content {
		if !plain(c, depth+1) {
			return false
		}
	}
	return true
}

// merge takes in what a worker found, in order. It returns false when the
// file is too large to go on.
func (k *caseChecker) merge(b batch) bool {
	k.d.Merge(b.diags)
	for _, c := range b.cases {
		if c.inOrder {
			if !k.one(c.n, nil) {
				return false
			}
			continue
		}
		if c.ok {
			k.x.keepCase(k.s, c.c, c.name, c.nameLine, c.nameNode)
		}
		k.index++
		if afterCase != nil {
			afterCase()
		}
	}
	return true
}

// cutItems checks the items of a cut file (cutCases), parsed a group at a
// time. ok is false when a group does not parse on its own; more is false
// when the file is too large to go on.
func (k *caseChecker) cutItems(data []byte, spans []span) (ok, more bool) {
	if !k.parallel(len(spans)) {
		ok = true
		for i := 0; i < len(spans); {
			j := groupEnd(spans, i)
			seq, parsed := parseGroup(nil, data, spans, i, j, k.d.File)
			if !parsed {
				return false, true
			}
			for g, n := range seq {
				seq[g] = nil // let each go once decoded
				if !k.item(n) {
					return true, false
				}
			}
			i = j
		}
		return true, true
	}
	next, base := 0, k.index
	for next < len(spans) || len(k.pool.pending) > 0 {
		for next < len(spans) && !k.pool.full() {
			i, j, first := next, groupEnd(spans, next), base
			k.pool.start(func() batch { return k.checkGroup(data, spans, i, j, first) })
			base += j - i
			next = j
		}
		b := k.pool.next()
		switch {
		case b.failed:
			k.pool.discard()
			return false, true
		case b.regroup:
			// What was started after this group took its items for one
			// case each: start again after it, from the true count.
			k.pool.discard()
			for _, n := range b.nodes {
				if !k.item(n) {
					return true, false
				}
			}
			next, base = b.end, k.index
		default:
			if !k.merge(b) {
				k.pool.discard()
				return true, false
			}
		}
	}
	return true, true
}

// item checks one item of the cases list in order: a case, or a data
// file's rows.
func (k *caseChecker) item(n *yaml.Node) bool {
	if _, from := yamlpos.Lookup(n, "from"); from != nil {
		return k.x.dataCases(n, k)
	}
	return k.one(n, nil)
}

// groupEnd is the end of the group of spans that starts at i: items are
// parsed a few at a time, as a parser costs more to set up than a small
// item costs to parse.
func groupEnd(spans []span, i int) int {
	j := i + 1
	for j < len(spans) && j-i < cutGroup && spans[j].end-spans[i].start < cutBytes {
		j++
	}
	return j
}

// parseGroup parses spans i..j-1 of data on their own, into arena a
// (nil: new nodes).
func parseGroup(a *yamlpos.Arena, data []byte, spans []span, i, j int, file string) ([]*yaml.Node, bool) {
	pd := newDiags(file)
	seq := yamlpos.ParseIn(a, data[spans[i].start:spans[j-1].end], pd)
	if seq == nil || len(pd.List) > 0 || seq.Kind != yaml.SequenceNode || len(seq.Content) != j-i {
		return nil, false
	}
	shiftLines(seq, spans[i].line-1)
	return seq.Content, true
}

// checkGroup parses and checks spans i..j-1 on a worker; the first is
// case index first.
func (k *caseChecker) checkGroup(data []byte, spans []span, i, j, first int) batch {
	// The group's nodes are used again for a later group when nothing of
	// the batch holds them: no item left to be checked in order, no
	// case that keeps nodes.
	a := arenas.Get().(*yamlpos.Arena)
	seq, ok := parseGroup(a, data, spans, i, j, k.d.File)
	if !ok {
		arenas.Put(a)
		return batch{failed: true}
	}
	for _, n := range seq {
		if _, from := yamlpos.Lookup(n, "from"); from != nil {
			return batch{regroup: true, nodes: seq, end: j}
		}
	}
	w, d := k.worker(nil)
	// Items that will be stubs are decoded again when they run: what
	// only a kept case is read for is made then, not now.
	w.lateSources = k.x.opts.Lazy && k.x.opts.lazyInline && !k.x.cross.counted
	b := batch{cases: make([]checked, 0, len(seq))}
	held := false
	// A group the fast reader read, not nested near the bound, is plain
	// throughout: no item need be walked to know it.
	known := a.Depth() >= 0 && a.Depth() < yamlpos.MaxDepth-4
	for g, n := range seq {
		c := k.check(w, n, first+g, nil, known)
		held = held || c.inOrder || holdsNodes(c.c)
		b.cases = append(b.cases, c)
	}
	b.diags = d.List
	if !held {
		clear(seq)
		arenas.Put(a)
	}
	return b
}

// A rowChecker checks the cases of a data file's rows, each instantiated
// from t: in order, or by the pool's workers a batch at a time.
type rowChecker struct {
	k       *caseChecker
	t       *template
	columns []string
	source  int
	file    string
	pool    *pool // nil: in order
	rows    []row
	next    int // the case index of the next batch
	more    bool
	// plan is made from the first row (planned says it was tried).
	plan    *rowPlan
	planned bool
	slabs   sync.Pool // of *rowSlab, for the workers' batches
}

// rowChecker checks the n rows of a data file, from template t.
func (k *caseChecker) rowChecker(t *template, columns []string, source int, file string, n int) *rowChecker {
	rc := &rowChecker{k: k, t: t, columns: columns, source: source, file: file, next: k.index, more: true}
	if t.nodes >= 0 && k.parallel(n) {
		rc.pool = k.pool
	}
	return rc
}

// add checks row r, now or with the rows after it. It returns false when
// the file is too large to go on.
func (rc *rowChecker) add(r row) bool {
	k := rc.k
	if rc.pool == nil {
		r = r.decoded(k.d, rc.source)
		if !rc.planned && rc.t.nodes >= 0 {
			rc.planned = true
			rc.plan = rc.makePlan(r)
		}
		if c := instantiate(rc.t, r, rc.columns, rc.source, rc.file, k.d); c != nil {
			if plain(c, 0) {
				rc.more = k.one(c, rc.plan)
			} else {
				rc.more = k.one(c, nil)
			}
		}
		return rc.more
	}
	if rc.rows = append(rc.rows, r); len(rc.rows) == rowBatch {
		rc.flush()
	}
	return rc.more
}

// flush starts the rows gathered (every row makes one case), taking in
// what is done while the pool is full.
func (rc *rowChecker) flush() {
	k := rc.k
	if len(rc.rows) > 0 && rc.more {
		if !rc.planned {
			rc.planned = true
			rc.plan = rc.makePlan(rc.rows[0].decoded(k.d, rc.source))
		}
		rows, first, sources := rc.rows, rc.next, slices.Clone(k.d.Sources)
		rc.rows, rc.next = nil, rc.next+len(rows)
		k.pool.start(func() batch { return rc.checkRows(rows, first, sources) })
	}
	for rc.more && k.pool.full() {
		rc.more = k.merge(k.pool.next())
	}
}

// done checks what is left. It returns false when the file is too large
// to go on.
func (rc *rowChecker) done() bool {
	k := rc.k
	if rc.pool == nil {
		return rc.more
	}
	rc.flush()
	for rc.more && len(k.pool.pending) > 0 {
		rc.more = k.merge(k.pool.next())
	}
	k.pool.discard()
	return rc.more
}

// makePlan plans the checks of the rows' cases from row r's, or gives nil
// (each is checked whole).
func (rc *rowChecker) makePlan(r row) *rowPlan {
	k := rc.k
	d := &yamlpos.Collector{File: k.d.File, Kind: k.d.Kind, Sources: k.d.Sources}
	c := instantiate(rc.t, r, rc.columns, rc.source, rc.file, d)
	if c == nil || !plain(c, 0) {
		return nil
	}
	conv := yamlpos.NewConverter(d)
	conv.BeginCase(c)
	val := conv.Convert(c, 2)
	if conv.Over || conv.Large {
		return nil
	}
	return newRowPlan(rc.t, val, k.schema)
}

// checkRows instantiates and checks rows on a worker; the first is case
// index first.
func (rc *rowChecker) checkRows(rows []row, first int, sources []string) batch {
	k := rc.k
	w, d := k.worker(sources)
	b := batch{cases: make([]checked, 0, len(rows))}
	// The next row's nodes: the last row's, when nothing holds them.
	slab, _ := rc.slabs.Get().(*rowSlab)
	for g, r := range rows {
		if slab == nil {
			slab = &rowSlab{}
		}
		c := instantiateIn(slab, rc.t, r.decoded(d, rc.source), rc.columns, rc.source, rc.file, d)
		if k.x.cross.counted && slab.fixed == nil {
			slab.fixed = rc.t.fixedIn(slab) // no case keeps the values
		}
		w.fixed = slab.fixed
		ch := k.check(w, c, first+g, rc.plan, false)
		if ch.inOrder || holdsNodes(ch.c) {
			slab = nil
		}
		b.cases = append(b.cases, ch)
	}
	if slab != nil {
		rc.slabs.Put(slab)
	}
	b.diags = d.List
	return b
}
