package report

import (
	"slices"
)

// perTrial is a case's duration a trial.
func perTrial(o *caseOutcome) float64 {
	if o.Trials != nil && o.Trials.N > 1 {
		return o.DurationMS / float64(o.Trials.N)
	}
	return o.DurationMS
}

func newDurationRule(base, new *Outcomes, inBase map[caseKey]int, opts CompareOptions) durationRule {
	r := durationRule{Factor: opts.SlowFactor, MinMS: opts.SlowMS, Median: 1}
	var ratios []float64
	for i := range new.cases {
		n := &new.cases[i]
		j, ok := inBase[caseKey{n.Suite, n.Name}]
		if !ok {
			continue
		}
		b := &base.cases[j]
		if b.Status == Skipped || n.Status == Skipped || perTrial(b) <= 0 {
			continue
		}
		ratios = append(ratios, perTrial(n)/perTrial(b))
	}
	r.Compared = len(ratios)
	if len(ratios) > 0 {
		slices.Sort(ratios)
		m := len(ratios) / 2
		r.Median = ratios[m]
		if len(ratios)%2 == 0 {
			r.Median = (ratios[m-1] + ratios[m]) / 2
		}
	}
	return r
}

// passRate is the share of a case's trials that passed: pass^1.
func passRate(t *trialCount) float64 { return passHatK(t.N, t.Passed, 1) }

func newTrialsDelta(base, new *Outcomes, inBase map[caseKey]int) trialsDelta {
	var d trialsDelta
	for i := range base.cases {
		if base.cases[i].Trials != nil {
			d.Base++
		}
	}
	type pair struct{ b, n *trialCount }
	var pairs []pair
	for i := range new.cases {
		n := &new.cases[i]
		if n.Trials == nil {
			continue
		}
		d.New++
		j, ok := inBase[caseKey{n.Suite, n.Name}]
		if !ok || base.cases[j].Trials == nil {
			continue
		}
		b := base.cases[j].Trials
		pairs = append(pairs, pair{b, n.Trials})
		if d.K == 0 || b.N < d.K {
			d.K = b.N
		}
		d.K = min(d.K, n.Trials.N)
	}
	d.Cases = len(pairs)
	if d.Cases == 0 {
		return d
	}
	for _, p := range pairs {
		d.Base1 += passRate(p.b)
		d.New1 += passRate(p.n)
		d.BaseK += passHatK(p.b.N, p.b.Passed, d.K)
		d.NewK += passHatK(p.n.N, p.n.Passed, d.K)
	}
	n := float64(d.Cases)
	d.Base1, d.New1 = round6(d.Base1/n), round6(d.New1/n)
	d.BaseK, d.NewK = round6(d.BaseK/n), round6(d.NewK/n)
	return d
}

// diffCase is how a case changed from b to n (either nil: not in that
// run).
func diffCase(b, n *caseOutcome, rule durationRule) caseChange {
	var ch caseChange
	var kinds [12]bool
	set := func(k ChangeKind) { kinds[kindIndex(k)] = true }
	switch {
	case b == nil:
		ch.Suite, ch.Name, ch.New = n.Suite, n.Name, n
		set(ChangeNew)
		if n.Trials != nil && n.Trials.Flaky {
			set(ChangeFlaky)
		}
	case n == nil:
		ch.Suite, ch.Name, ch.Base = b.Suite, b.Name, b
		set(ChangeGone)
	default:
		ch.Suite, ch.Name, ch.Base, ch.New = n.Suite, n.Name, b, n
		ran := func(s Status) bool { return s == Passed || s == Failed || s == Errored }
		switch bs, ns := b.Status, n.Status; {
		case bs == ns:
		case bs == Passed && ran(ns):
			set(ChangeRegressed)
		case ran(bs) && ns == Passed:
			set(ChangeFixed)
		case ran(bs) && ns == Skipped:
			set(ChangeSkipped)
		default:
			set(ChangeStatus)
		}
		// An errored or skipped case may have judged no check: its checks
		// are not gone, they did not run.
		if len(b.Checks) > 0 && len(n.Checks) > 0 || ran(b.Status) && b.Status != Errored && ran(n.Status) && n.Status != Errored {
			ch.Checks = diffChecks(b.Checks, n.Checks)
			for _, cc := range ch.Checks {
				set(cc.Kind)
			}
		}
		diffTrials(b, n, set, kinds[:])
		diffDuration(&ch, b, n, rule, set)
	}
	for i, on := range kinds {
		if on {
			ch.Kinds = append(ch.Kinds, changeKinds[i])
		}
	}
	return ch
}

func diffTrials(b, n *caseOutcome, set func(ChangeKind), kinds []bool) {
	nf := n.Trials != nil && n.Trials.Flaky
	bf := b.Trials != nil && b.Trials.Flaky
	switch {
	case nf && !bf:
		set(ChangeFlaky)
	case bf && !nf && n.Trials != nil:
		set(ChangeSteady)
	}
	if b.Trials == nil || n.Trials == nil || kinds[kindIndex(ChangeFlaky)] || kinds[kindIndex(ChangeSteady)] {
		return
	}
	switch br, nr := passRate(b.Trials), passRate(n.Trials); {
	case nr < br && !kinds[kindIndex(ChangeRegressed)]:
		set(ChangePassDown)
	case nr > br && !kinds[kindIndex(ChangeFixed)]:
		set(ChangePassUp)
	}
}

func diffDuration(ch *caseChange, b, n *caseOutcome, r durationRule, set func(ChangeKind)) {
	if b.Status == Skipped || n.Status == Skipped {
		return
	}
	bm, nm := perTrial(b), perTrial(n)
	expect := r.Median * bm
	switch {
	case nm > r.Factor*expect && nm-expect >= r.MinMS:
		set(ChangeSlower)
	case nm < expect/r.Factor && expect-nm >= r.MinMS:
		set(ChangeFaster)
	default:
		return
	}
	ch.BaseMS, ch.NewMS = bm, nm
}

// diffChecks pairs a case's checks of two runs by their text (the k-th
// of a text with the k-th) and says which changed: NEW's in order, then
// the gone ones in BASE's order.
func diffChecks(b, n []checkOutcome) []checkChange {
	type slot struct {
		idx  int
		used bool
	}
	byText := make(map[string][]slot, len(b))
	for i, c := range b {
		byText[c.Check] = append(byText[c.Check], slot{idx: i})
	}
	var out []checkChange
	matched := make([]bool, len(b))
	for _, c := range n {
		slots := byText[c.Check]
		j := -1
		for k := range slots {
			if !slots[k].used {
				slots[k].used, j = true, slots[k].idx
				break
			}
		}
		switch {
		case j < 0:
			out = append(out, checkChange{Kind: ChangeNew, Check: c.Check, At: c.At})
		case b[j].Passed && !c.Passed:
			out = append(out, checkChange{Kind: ChangeRegressed, Check: c.Check, At: c.At})
		case !b[j].Passed && c.Passed:
			out = append(out, checkChange{Kind: ChangeFixed, Check: c.Check, At: c.At})
		}
		if j >= 0 {
			matched[j] = true
		}
	}
	for i, c := range b {
		if !matched[i] {
			out = append(out, checkChange{Kind: ChangeGone, Check: c.Check, At: c.At})
		}
	}
	return out
}
