package world

// SetEvidenceLimit keeps at most n evidence entries and n emitted events
// (the newest); 0 keeps everything. A long-running server sets it: each
// entry holds a call's arguments and result.
func (in *Instance) SetEvidenceLimit(n int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.maxEvidence = max(n, 0)
	in.trimEvidence()
}

// trimEvidence lets the oldest entries go past the limit, a tenth of it
// at a time, into fresh slices so that their memory is freed.
func (in *Instance) trimEvidence() {
	n := in.maxEvidence
	if n == 0 {
		return
	}
	if over := len(in.evidence) - n; over > 0 {
		cut := min(len(in.evidence), over+n/10)
		in.dropped += cut
		in.evidence = append([]Evidence(nil), in.evidence[cut:]...)
	}
	if over := len(in.emitted) - n; over > 0 {
		cut := min(len(in.emitted), over+n/10)
		in.droppedEvents += cut
		in.emitted = append([]Emitted(nil), in.emitted[cut:]...)
	}
}

// EvidencePage is what GET /world/evidence reads: at most limit entries
// after seq since, the events they emitted, and how many entries and
// events the limit of SetEvidenceLimit let go.
type EvidencePage struct {
	Evidence      []Evidence `json:"evidence"`
	Events        []Emitted  `json:"events"`
	Dropped       int        `json:"dropped"`
	DroppedEvents int        `json:"dropped_events"`
	// Next is the since of the next page; More says there is one.
	Next int  `json:"next"`
	More bool `json:"more"`
}

// Page returns the evidence after seq since, at most limit entries (0:
// all), copying only those.
func (in *Instance) Page(since, limit int) EvidencePage {
	in.mu.Lock()
	defer in.mu.Unlock()
	p := EvidencePage{Evidence: []Evidence{}, Events: []Emitted{}, Dropped: in.dropped, DroppedEvents: in.droppedEvents, Next: since}
	start := max(since-in.dropped, 0)
	if start > len(in.evidence) {
		start = len(in.evidence)
	}
	end := len(in.evidence)
	if limit > 0 && end-start > limit {
		end, p.More = start+limit, true
	}
	p.Evidence = append(p.Evidence, in.evidence[start:end]...)
	if len(p.Evidence) > 0 {
		p.Next = p.Evidence[len(p.Evidence)-1].Seq
	}
	for _, e := range in.emitted {
		if e.Seq > since && (!p.More || e.Seq <= p.Next) {
			p.Events = append(p.Events, e)
		}
	}
	return p
}
